"""``jax.shard_map`` (and the deprecated ``jax.experimental.shard_map.shard_map``): the
specs, the body's manual axes and per-shard argument types, and the global outputs."""

from __future__ import annotations

from typing import List, Optional, Tuple, cast

import libcst as cst

from sharding_types import AxisType

from . import names as api
from .. import transfer as tr
from ..events import UNKNOWN_CTX, ApiUse, MeshCtx, MeshMeet, NeedsMesh, ShardMapCall, SpecUse
from ..facts import InSpecsConflict
from ..interp.state import Arg, ShardMapFactory
from ..syntax import keyword_argument
from ..values import (UNKNOWN, ArrayVal, Const, FuncVal, MeshVal, PartialVal, ShardMapVal,
                      SpecVal, TupleVal, Value, str_tuple)
from .closures import check_closures
from ..api import ApiCall, ApiContext, calls, hook, models
from .specs import spec_leaves

# The pre-check's vocabulary (shard_map): the names this family models make sharding
# values, so a file spelling one is analysed (analyzer/registry_manifest.py).
MAKES_SHARDINGS = True



@models(*api.SHARD_MAPS)
def shard_map(it: ApiContext, c: ApiCall) -> Value:
    kw, pos = c.args.kw, c.args.pos
    experimental = c.name == api.SHARD_MAP_EXPERIMENTAL
    if "check_rep" in kw and not experimental:
        it.record("api_uses", ApiUse("jax.shard_map", kw["check_rep"].node or c.node, "keyword",
                                       "check_rep", keyword_name(c.node, "check_rep")))
    if "check_vma" in kw and experimental:
        it.record("api_uses", ApiUse(c.name, kw["check_vma"].node or c.node, "keyword", "check_vma"))
    f = c.args.get(0, "f")
    if experimental:  # the old signature: (f, mesh, in_specs, out_specs, check_rep)
        mesh_v, in_specs, out_specs = (c.args.get(1, "mesh"), c.args.get(2, "in_specs"),
                                       c.args.get(3, "out_specs"))
        check = kw.get("check_rep")
    else:  # jax.shard_map(f, *, mesh, in_specs, out_specs, axis_names, check_vma)
        if len(pos) > 1:  # the experimental signature: JAX raises TypeError at the call
            it.record("api_uses", ApiUse(c.name, c.node, "positional", str(len(pos))))
            return UNKNOWN
        if not pos and "f" not in kw:
            return ShardMapFactory(c.name, tuple((k, a.value) for k, a in kw.items()), c.node)
        mesh_v, in_specs, out_specs = (_keyword(c, "mesh"), _keyword(c, "in_specs"),
                                       _keyword(c, "out_specs"))
        check = kw.get("check_vma")
    explicit = isinstance(mesh_v, MeshVal)
    has_mesh_arg = experimental or "mesh" in kw
    # axis_names: the manual axes (all mesh axes when not given); None when unknown
    axis_names: Optional[frozenset] = None
    axis_names_unknown = False
    if "axis_names" in kw:
        t = str_tuple(kw["axis_names"].value)
        if t is not None and None not in t:
            axis_names = frozenset(t)
        else:
            axis_names_unknown = True
    check_vma: Optional[bool] = None
    if check is not None and isinstance(check.value, Const):
        check_vma = bool(check.value.value)
    elif check is None:
        check_vma = True
    mesh_node = kw["mesh"].node if "mesh" in kw else None
    event = ShardMapCall(cast(cst.Call, c.node), c.name, f, in_specs, out_specs,
                         mesh_v if isinstance(mesh_v, MeshVal) else None, explicit, c.ctx,
                         axis_names, check_vma, has_mesh_arg=has_mesh_arg,
                         axis_names_unknown=axis_names_unknown, mesh_node=mesh_node or c.node)
    it.record("shard_maps", event)
    if isinstance(mesh_v, MeshVal):
        _activate(it, event, mesh_v, c.ctx)
    elif has_mesh_arg:  # mesh= given but unknown
        _activate(it, event, None, UNKNOWN_CTX)
    else:
        # Without mesh=, JAX takes the context mesh when the shard_map is *called*:
        # the specs and the body are checked at each call (see call_shard_map).
        for label, specs in (("shard_map in_specs", in_specs), ("shard_map out_specs", out_specs)):
            for spec in spec_leaves(specs):
                it.record("spec_uses", SpecUse(spec, spec.node or c.node, label, None))
    return ShardMapVal(f, event)


def _keyword(c: ApiCall, name: str) -> Value:
    v = c.args.keyword(name)
    return v if v is not None else UNKNOWN


@calls(ShardMapFactory)
def call_factory(it: ApiContext, callee: Value, c: ApiCall) -> Value:
    """``jax.shard_map(mesh=..., ...)(f)``: the keyword form used as a decorator."""
    assert isinstance(callee, ShardMapFactory)
    merged = list(c.args.args) + [Arg(k, "", v, c.node) for k, v in callee.kwargs]
    return it.call_api(callee.api, callee.node, merged, c.env, c.ctx)


def _activate(it: ApiContext, event: ShardMapCall, mesh: Optional[MeshVal], ctx: MeshCtx) -> None:
    """Check the specs against ``mesh`` and analyze the body under its manual axes."""
    if mesh is not None and not event.explicit_mesh:
        event.mesh = mesh
    manual = None if event.axis_names_unknown else (
        event.axis_names if event.axis_names is not None else
        (frozenset(mesh.names) if mesh is not None and mesh.names is not None else None))
    for label, specs in (("shard_map in_specs", event.in_specs),
                         ("shard_map out_specs", event.out_specs)):
        for spec in spec_leaves(specs):
            it.record("spec_uses", SpecUse(spec, spec.node or event.node, label, mesh,
                                           from_context=not event.explicit_mesh))
    if mesh is not None and manual is not None:
        bound = (ctx.bound_axes | manual) if ctx.known and ctx.bound_axes is not None else None
        body_ctx = MeshCtx(True, mesh, bound, ctx.manual_axes | manual, event)
    else:
        body_ctx = MeshCtx(False, None, None, ctx.manual_axes, event)
    event.noted, event.body_ctx, event.manual = _body_args(it, event, manual), body_ctx, manual
    notes = _notes(it, event)
    if notes["called"]:
        # a call in view of this shard_map (made again by another analysis of the function
        # that builds it) gave the body its arguments: the specs alone would join them away
        return
    notes["provisional"].append(event)
    it.note_call(event.func, body_ctx, event.noted)


def _notes(it: ApiContext, event: ShardMapCall) -> dict:
    """What the analysis knows of the calls of the shard_map written at ``event.node``,
    however many times its code is evaluated (a factory's own analysis, and its call by
    the code that uses what it returns): whether one was called in view, and the events
    that noted its body with the specs' arguments alone."""
    return it.memo(("shard_map notes", id(event.node)), lambda: {"called": False,
                                                                 "provisional": []})


def _mapped_params(event: ShardMapCall) -> Optional[int]:
    """How many positional parameters the mapped function leaves to the shard_map."""
    func = event.func
    n_bound = len(func.args) if isinstance(func, PartialVal) else 0
    if isinstance(func, PartialVal):
        func = func.func
    if not isinstance(func, FuncVal):
        return None
    params = func.node.params  # type: ignore[attr-defined]  # FunctionDef and Lambda
    return len(params.posonly_params) + len(params.params) - n_bound


def _body_args(it: ApiContext, event: ShardMapCall, manual: Optional[frozenset],
               call_args: Optional[tuple] = None, node: Optional[cst.CSTNode] = None) -> tuple:
    """The body's parameters as JAX sees them: each varies over the manual axes its
    in_spec names (``{V:...}``)."""
    n = _mapped_params(event)
    if manual is None or n is None:
        return ()
    specs = event.in_specs
    if isinstance(specs, SpecVal):
        items: List[Value] = [specs] * max(n, 0)
    elif isinstance(specs, TupleVal) and not specs.is_list:
        items = list(specs.items)
    else:
        return ()
    args = list(call_args or ())
    return tuple(_body_arg(it, event, manual, sp, args[i] if i < len(args) else UNKNOWN, node)
                 for i, sp in enumerate(items))


def _body_arg(it: ApiContext, event: ShardMapCall, manual: frozenset, spec: Value, a: Value,
              node: Optional[cst.CSTNode]) -> Value:
    """One argument's per-shard type inside the body."""
    if not (isinstance(spec, SpecVal) and spec.complete):
        return UNKNOWN
    mesh = event.mesh
    vary = frozenset(spec.axis_names()) & manual
    if not isinstance(a, ArrayVal) or a.dims is None or a.shape is None or mesh is None \
            or len(spec.entries) > len(a.dims) or a.varying != frozenset() or a.unreduced \
            or (a.mesh is not None and a.mesh is not mesh and a.mesh.same_shape(mesh) is not True):
        return ArrayVal(None, mesh, varying=vary)
    entries = list(spec.entries) + [None] * (len(a.dims) - len(spec.entries))
    if any(e is not None and not (isinstance(e, tuple) and all(isinstance(x, str) for x in e))
           for e in entries):
        return ArrayVal(None, mesh, varying=vary)
    shape, dims = [], []
    for size, e, d in zip(a.shape, entries, a.dims):
        axes = tuple(e or ())
        explicit = tuple(x for x in axes if mesh.type_of(x) == AxisType.Explicit)
        if tuple(x for x in d if x in manual) != explicit:
            if node is not None and _checks_in_specs(it, mesh, manual):
                it.prove(InSpecsConflict(spec, a), node)
            return ArrayVal(None, mesh, varying=vary)
        n = tr.axes_size(axes, mesh.size_of)
        shape.append(None if size is None or n is None or size % n else size // n)
        dims.append(tuple(x for x in d if x not in manual))
    return ArrayVal(tuple(shape), mesh, None, None, vary, dtype=a.dtype, weak=a.weak,
                    dims=tuple(dims))


def _checks_in_specs(it: ApiContext, mesh, manual: frozenset) -> bool:
    """Whether JAX compares in_specs with the inputs' shardings: where the manual axes
    are all Explicit, and (up to 0.11) the shard_map is manual over every mesh axis; else
    it reshards the input silently."""
    if mesh.types is None or mesh.names is None \
            or not all(mesh.type_of(x) == AxisType.Explicit for x in manual):
        return False
    return manual == frozenset(mesh.names) \
        or it.profile.behaviour.shard_map_checks_partial_manual_in_specs


def _output(event: ShardMapCall, ret: Value, ctx: MeshCtx) -> Value:
    """The global value a shard_map returns: each output's local shape times the mesh
    axes its out_spec names; those axes (Explicit ones) shard it."""
    mesh, manual = event.mesh, event.manual
    if mesh is None or manual is None or ctx.manual_axes:
        return UNKNOWN

    def one(spec: Value, r: Value) -> Value:
        if isinstance(r, TupleVal) and isinstance(spec, SpecVal):
            return TupleVal(tuple(one(spec, x) for x in r.items), r.is_list)
        if not (isinstance(spec, SpecVal) and spec.complete and isinstance(r, ArrayVal)):
            return UNKNOWN
        if r.shape is None or r.dims is None or any(r.dims) or len(spec.entries) > len(r.shape):
            return UNKNOWN
        entries = list(spec.entries) + [None] * (len(r.shape) - len(spec.entries))
        shape, dims = [], []
        for size, e in zip(r.shape, entries):
            if e is not None and not (isinstance(e, tuple) and all(isinstance(x, str) for x in e)):
                return UNKNOWN
            axes = tuple(e or ())
            n = tr.axes_size(axes, mesh.size_of)
            shape.append(None if size is None or n is None else size * n)
            dims.append(tuple(x for x in axes if mesh.type_of(x) == AxisType.Explicit))
        return ArrayVal(tuple(shape), mesh, None, None, frozenset(), dtype=r.dtype,
                        weak=r.weak, dims=tuple(dims))
    specs = event.out_specs
    if isinstance(specs, TupleVal) and isinstance(ret, TupleVal) and len(specs.items) == len(ret.items):
        return TupleVal(tuple(one(sp, r) for sp, r in zip(specs.items, ret.items)))
    return one(specs, ret)


@calls(ShardMapVal)
def call_mapped(it: ApiContext, callee: Value, c: ApiCall) -> Value:
    assert isinstance(callee, ShardMapVal)
    # ``f(*args)`` with ``args`` not known: how many arguments it passes is not known
    args = tuple(c.args.pos) if not c.args.starred else None
    return call_shard_map(it, callee, c.ctx, args, c.node)


@hook("passed")
def passed(it: ApiContext, v: Value, node: Optional[cst.CSTNode], ctx: MeshCtx) -> None:
    """A shard_map passed to another function may be called there, in this context."""
    assert isinstance(v, ShardMapVal)
    call_shard_map(it, v, ctx, None, node)


def call_shard_map(it: ApiContext, val: ShardMapVal, ctx: MeshCtx, args: Optional[tuple],
                   node: Optional[cst.CSTNode]) -> Value:
    """``val`` is called (or, with ``args`` None, may be called) in context ``ctx``."""
    event = val.event
    if args is not None:
        event.call_args = args
    if event.explicit_mesh:
        # JAX compares mesh= with the abstract context mesh (`with mesh:` sets none)
        if ctx.known and ctx.abstract and ctx.mesh is not None and event.mesh is not None \
                and _other_mesh(event.mesh, ctx.mesh):
            it.record("mesh_meets", MeshMeet(event.mesh_node, event.mesh, ctx.mesh,
                                             "jax.shard_map(mesh=)"))
    elif not event.has_mesh_arg:
        if ctx.known and ctx.mesh is None:
            it.record("needs_mesh", NeedsMesh(event.node, "jax.shard_map without mesh=", ctx))
        _activate(it, event, ctx.mesh if ctx.known else None, ctx if ctx.known else UNKNOWN_CTX)
    if args is not None:
        _check_call_shapes(it, event, args)
        check_closures(it, event, ctx)
    if args is None or event.body_ctx is None or event.manual is None:
        return UNKNOWN
    full = _body_args(it, event, event.manual, args, node)
    func = event.func
    if any(isinstance(a, ArrayVal) and a.dims is not None for a in full):
        _renote(it, event, full)
    inner = func.func if isinstance(func, PartialVal) else func
    bound = tuple(func.args) if isinstance(func, PartialVal) else ()
    if not isinstance(inner, FuncVal):
        return UNKNOWN
    ret = it.eval_return(inner, bound + full, {}, event.body_ctx)
    _check_output_ranks(it, event, ret)
    return _output(event, ret, ctx)


def _other_mesh(a: MeshVal, b: MeshVal) -> bool:
    """Provably another abstract mesh: other names, sizes or axis types."""
    same = a.same_shape(b)
    return a is not b and (same is False or (same is True and a.types is not None
                                             and b.types is not None and a.types != b.types))


def _check_output_ranks(it: ApiContext, event: ShardMapCall, ret: Value) -> None:
    """An out_specs entry longer than its output's rank (a P('x') for a scalar) is the
    ValueError 'out_specs entry which is too long': record it as a spec use of that rank
    (the sizes are per shard, so only the rank is stated)."""
    specs = event.out_specs
    if isinstance(specs, TupleVal) and isinstance(ret, TupleVal) and len(specs.items) == len(ret.items):
        pairs = list(zip(specs.items, ret.items))
    elif isinstance(specs, SpecVal):
        pairs = [(specs, r) for r in ret.items] if isinstance(ret, TupleVal) else [(specs, ret)]
    else:
        return
    for spec, r in pairs:
        if isinstance(r, Const) and isinstance(r.value, (int, float, bool)):
            rank: Optional[int] = 0
        else:
            rank = len(r.shape) if isinstance(r, ArrayVal) and r.shape is not None else None
        if isinstance(spec, SpecVal) and spec.complete and rank is not None \
                and len(spec.entries) > rank:
            it.record("spec_uses", SpecUse(spec, spec.node or event.node, "shard_map out_specs",
                                           event.mesh, (None,) * rank,
                                           from_context=not event.explicit_mesh))


def _renote(it: ApiContext, event: ShardMapCall, full: tuple) -> None:
    """The body's arguments are now known in full: replace the call noted at activation,
    and those other evaluations of the same shard_map noted from its specs alone."""
    func = event.func
    target = func.func if isinstance(func, PartialVal) and isinstance(func.func, FuncVal) else func
    info = it.function_info(getattr(target, "node", None))
    notes = _notes(it, event)
    notes["called"] = True
    placeholders = [e.noted for e in notes["provisional"] + [event] if e.noted is not None]
    notes["provisional"] = []
    if info is not None and placeholders:
        for lst in info.call_args.values():
            lst[:] = [t for t in lst if not any(t is p for p in placeholders)]
        for key in list(info.calls):
            if not info.call_args.get(key):
                info.calls.pop(key, None)
                info.call_args.pop(key, None)
    event.noted = full
    assert event.body_ctx is not None
    it.note_call(func, event.body_ctx, full)


def _check_call_shapes(it: ApiContext, event: ShardMapCall, args: tuple) -> None:
    specs = event.in_specs
    if isinstance(specs, SpecVal):
        pairs: List[Tuple[Value, Value]] = [(specs, a) for a in args]
    elif isinstance(specs, TupleVal) and len(specs.items) == len(args):
        pairs = list(zip(specs.items, args))
    else:
        return
    for spec, a in pairs:
        if isinstance(a, Const) and isinstance(a.value, (int, float, bool)):
            a = ArrayVal(())  # a Python number enters as a scalar
        if isinstance(spec, SpecVal) and isinstance(a, ArrayVal) and a.shape is not None:
            it.record("spec_uses", SpecUse(spec, spec.node or event.node,
                                           "shard_map in_specs (at the call)", event.mesh,
                                           a.shape, from_context=not event.explicit_mesh))



def keyword_name(call: cst.CSTNode, name: str) -> Optional[cst.CSTNode]:
    arg = keyword_argument(call, name)
    return arg.keyword if arg is not None else None
