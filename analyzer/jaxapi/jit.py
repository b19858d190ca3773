"""``jax.jit`` (and the legacy ``pjit``): jitted functions, their shardings and calls.

At a call of a function jitted with ``in_shardings=``/``out_shardings=`` the shardings
meet what JAX matches them against: the positional arguments (a tree prefix of them,
static arguments left out, no keyword arguments), each argument's rank and, for a
committed argument outside any trace, its sharding; and the function's outputs.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, FrozenSet, List, Optional, Set, Tuple, cast

import libcst as cst

from sharding_types import AxisType

from . import argument_kinds
from . import names as api
from .. import transfer as tr
from ..events import ApiUse, JitCall, MeshCtx, SpecUse
from ..facts import InShardingsConflict, JitKeywordArguments, JitShardingsNotPrefix
from ..interp.state import CallArgs, Env, GradVal
from ..values import (UNKNOWN, ArrayVal, Const, DictVal, FuncVal, JitVal, MeshVal, PartialVal,
                      PytreeNodeVal, QualName, ShardingVal, ShardMapVal, SpecVal, TupleVal, Value, const_int,
                      const_str)
from .literals import literals_of
from .pytrees import PyTreeNodeVal, leaves_of, map_leaves, same_node_type
from ..api import ApiCall, ApiContext, callee_handler, calls, get_hook, models
from .shard_map import call_shard_map, keyword_name
from .specs import spec_and_mesh, spec_dims, spec_leaves
from .transforms import call_grad

# Not the pre-check's vocabulary: jit's checks need `in_shardings=`/`out_shardings=`,
# which spell the vocabulary
MAKES_SHARDINGS = False



# keyword arguments JAX removed, and their names today (JAX 0.4.14 deleted pjit's and jit's
# `*_axis_resources`; analyzer/rules/deprecated_api.py words them)
REMOVED_KEYWORDS = {"in_axis_resources": "in_shardings", "out_axis_resources": "out_shardings"}


@models(*api.JITS)
def jit(it: ApiContext, c: ApiCall) -> Value:
    f = c.args.get(0, "fun")
    kw = c.args.kw
    for old in REMOVED_KEYWORDS:
        if old in kw:
            it.record("api_uses", ApiUse(c.name, kw[old].node or c.node, "keyword", old,
                                         keyword_name(c.node, old)))
    if c.name == api.JIT and len(c.args.pos) > 1 and not c.args.starred:
        # jax.jit takes only the function positionally (JAX 0.7 on): TypeError
        it.record("api_uses", ApiUse(c.name, c.node, "positional", str(len(c.args.pos))))
        return UNKNOWN
    if f is UNKNOWN and not c.args.pos:  # jax.jit(static_argnums=...) used as a decorator
        return PartialVal(QualName(c.name), (), tuple((k, a.value) for k, a in kw.items()))
    for key in ("in_shardings", "out_shardings"):
        a = kw.get(key)
        if a is None:
            continue
        if argument_kinds.check_shardings(it, c, a.value, a.node, key):
            return UNKNOWN  # JAX raised TypeError in jax.jit itself
        for spec in spec_leaves(a.value):
            it.record("spec_uses", SpecUse(spec, spec.node or a.node or c.node, f"jax.jit({key}=)",
                                           it.context_mesh(c.ctx), from_context=True, at=c.node))
    options = tuple((k, a.value, a.node or c.node) for k, a in kw.items())
    return JitVal(f, c.node, kw["in_shardings"].value if "in_shardings" in kw else None, options)


@calls(JitVal)
def call_jitted(it: ApiContext, callee: Value, c: ApiCall) -> Value:
    assert isinstance(callee, JitVal)
    args, ctx = c.args, c.ctx
    it.pass_functions(args.args, ctx)
    get_hook("arguments")(it, callee, args.args, ctx)
    _check_in_shardings(it, callee, c)
    if not args.starred:
        it.record("jit_calls", JitCall(cast(cst.Call, c.node), callee, tuple(args.pos),
                                       tuple(args.kw_values().items()), ctx))
    body = ctx.traced()  # the function runs under jit's trace
    if _given(callee.option("in_shardings")) or _given(callee.option("out_shardings")):
        # jit traces under the mesh of its shardings, which may not be the context's
        body = replace(body, abstract=False)
    moved: List[bool] = []
    pos = _placed_arguments(callee, c, moved)
    if isinstance(callee.func, ShardMapVal):
        return call_shard_map(it, callee.func, body, pos, c.node)
    if isinstance(callee.func, GradVal):
        return call_grad(it, callee.func, ApiCall(c.name, c.node, c.args, c.env, body))
    func = callee.func
    if isinstance(func, JitVal) and not _given(func.option("in_shardings")) \
            and not _given(func.option("out_shardings")):
        func = func.func  # jax.jit(f, out_shardings=...) of a @jax.jit function: f's trace
    handler = callee_handler(func)
    if handler is not None and not isinstance(func, (FuncVal, PartialVal, JitVal)) \
            and not _given(callee.option("in_shardings")):
        # a library's callable (Linen's ``model.init``): run as it runs when called
        out = handler(it, func, ApiCall(c.name, c.node, c.args, c.env, body))
        return _placed_outputs(callee, out, c.ctx, moved)
    it.note_call(func, body, pos, args.known_keywords())
    if isinstance(func, FuncVal):
        out = it.eval_return(func, pos, args.kw_values(), body)
        _check_out_shardings(it, callee, out, c.ctx, func)
        return _placed_outputs(callee, out, c.ctx, moved)
    return UNKNOWN


def _placed_arguments(jv: JitVal, c: ApiCall, moved: List[bool]) -> Tuple[Value, ...]:
    """The positional arguments as the traced function sees them: placed as
    ``in_shardings`` says (``moved`` gets an entry where an uncommitted argument is
    placed on sharded axes: the trace sees its own type, the compiled program does not)."""
    pos = tuple(c.args.pos)
    opt = jv.option("in_shardings")
    if not _given(opt) or opt is None or c.args.starred:
        return pos
    shardings = opt[0]
    if isinstance(shardings, (SpecVal, ShardingVal)):
        return tuple(_place(shardings, x, c.ctx, moved) for x in pos)
    static = _static_positions(jv, len(pos))
    if not isinstance(shardings, TupleVal) or static is None:
        return pos
    dynamic = [i for i in range(len(pos)) if i not in static]
    if len(dynamic) != len(shardings.items):
        return pos
    placed = dict(zip(dynamic, shardings.items))
    return tuple(_place(placed[i], x, c.ctx, moved) if i in placed else x
                 for i, x in enumerate(pos))


def _placed_outputs(jv: JitVal, out: Value, ctx: MeshCtx, moved: List[bool]) -> Value:
    """The outputs as ``out_shardings`` places them (their sharding is unknown where it
    names one the analyzer cannot read); with none given, the outputs of a trace whose
    arguments were ``moved`` have a sharding the compiler chose."""
    opt = jv.option("out_shardings")
    if _given(opt) and opt is not None:
        return _place(opt[0], out, ctx)
    return map_leaves(out, _sharding_unknown) if moved else out


def _sharding_unknown(x: Value) -> Value:
    return replace(x, dims=None, spec=None, mesh=None) if isinstance(x, ArrayVal) else x


def _place(s: Value, x: Value, ctx: MeshCtx, moved: Optional[List[bool]] = None) -> Value:
    """``x`` as ``s`` places it: an output as out_shardings say; an argument (``moved``
    given) as the trace sees it. An argument that is not committed (made with no mesh
    in force, and none in force at the call) keeps its own type in the trace: on JAX
    0.10.2, ``jax.typeof`` inside shows ``float32[32,16]`` under ``P('data', None)`` of
    an Explicit mesh (and ``shard_map(in_specs=P('data'))`` of it is rejected), yet
    ``a * 2`` comes out as ``float32[32@data,16]`` and ``a.reshape(4, 8, 16)`` as
    ``float32[4,8,16]``: what such a call returns has a sharding the compiler chose."""
    if isinstance(s, Const) and s.value is None:
        return x
    if isinstance(x, ArrayVal):
        if moved is not None and x.mesh is None and x.spec is None and ctx.known \
                and ctx.mesh is None:
            spec, mesh = spec_and_mesh(s, ctx)
            dims = spec_dims(spec, mesh, tr.rank(x), ctx) if spec is not None else None
            if dims is None or any(dims):
                moved.append(True)
            if x.dims is not None and not any(x.dims):
                return replace(x, numpy=False)
            return replace(x, dims=None, spec=None, numpy=False)
        spec, mesh = spec_and_mesh(s, ctx)
        if spec is None:
            return replace(x, dims=None, spec=None)
        return replace(x, mesh=mesh, spec=spec, dims=spec_dims(spec, mesh, tr.rank(x), ctx),
                       numpy=False)
    if isinstance(x, TupleVal):
        if isinstance(s, TupleVal) and len(s.items) == len(x.items):
            return TupleVal(tuple(_place(si, xi, ctx, moved) for si, xi in zip(s.items, x.items)),
                            x.is_list)
        return TupleVal(tuple(_place(s if not isinstance(s, TupleVal) else UNKNOWN, xi, ctx,
                                     moved)
                              for xi in x.items), x.is_list)
    if isinstance(x, DictVal):
        return DictVal(tuple((k, _place(s.get(k) if isinstance(s, DictVal) else s, v, ctx, moved))
                             for k, v in x.items))
    if isinstance(x, PyTreeNodeVal):
        if same_node_type(x, s):
            return x.with_children([_place(si, xi, ctx, moved) for (_, si), (_, xi)
                                    in zip(s.children, x.children)])  # type: ignore[attr-defined]  # a PyTreeNodeVal
        return x.with_children([_place(UNKNOWN if isinstance(s, (TupleVal, DictVal, PyTreeNodeVal))
                                       else s, xi, ctx, moved) for _, xi in x.children])
    return x


# -- in_shardings against the call --------------------------------------------------------------
def _given(v: Optional[Tuple[Value, Any]]) -> bool:
    """An option that is set: not absent, not ``None`` (jit's "unspecified")."""
    return v is not None and not (isinstance(v[0], Const) and v[0].value is None)


def _check_in_shardings(it: ApiContext, jv: JitVal, c: ApiCall) -> None:
    opt = jv.option("in_shardings")
    if not _given(opt) or not it.recording():
        return
    assert opt is not None
    shardings, node = opt
    keywords = [a for a in c.args.args if a.keyword is not None]
    if keywords:  # (a `**kwargs` may be empty: not reported)
        it.prove(JitKeywordArguments(tuple(a.keyword for a in keywords if a.keyword)),
                 keywords[0].node or c.node)
        return
    if any(a.star for a in c.args.args):
        return
    positional = list(c.args.args)
    static = _static_positions(jv, len(positional))
    if static is None:
        return
    names = _param_names(jv.func)
    shown = [names[i] if names and i < len(names) else f"argument {i}" for i in range(len(positional))]
    dynamic = [i for i in range(len(positional)) if i not in static]
    lits = literals_of(it.module)
    if isinstance(shardings, (TupleVal, DictVal)):
        if not lits.states_whole(node):
            return
        if isinstance(shardings, DictVal) or len(shardings.items) != len(dynamic):
            it.prove(JitShardingsNotPrefix(
                "in_shardings", (), shardings, TupleVal(tuple(positional[i].value for i in dynamic)),
                static=tuple(shown[i] for i in sorted(static))), node)
            return
        pairs: List[Tuple[Value, Optional[cst.CSTNode], int]] = [
            (s, lits.child(node, k), i) for k, (s, i) in enumerate(zip(shardings.items, dynamic))]
    elif isinstance(shardings, (SpecVal, ShardingVal)):
        pairs = [(shardings, node, i) for i in dynamic]
    else:
        return
    for k, (s, s_node, i) in enumerate(pairs):
        a = positional[i]
        _match(it, c, _Side("in_shardings", s, s_node, a.value, a.node, shown[i], node), (k,))


class _Side:
    """One subtree of jit's shardings and the subtree of values it is a prefix of, with
    where the source writes each (None when it does not state it)."""

    def __init__(self, which: str, s: Value, s_node: Optional[cst.CSTNode], x: Value,
                 x_node: Optional[cst.CSTNode], shown: str, at: cst.CSTNode):
        self.which, self.s, self.s_node, self.x, self.x_node = which, s, s_node, x, x_node
        self.shown, self.at = shown, at

    def child(self, lits: Any, key: Any, s: Value, x: Value) -> "_Side":
        return _Side(self.which, s, lits.child(self.s_node, key), x, lits.child(self.x_node, key),
                     f"{self.shown}[{key!r}]", self.at)


def _match(it: ApiContext, c: ApiCall, side: _Side, path: Tuple[Any, ...]) -> None:
    """Match one subtree of the shardings against the values it is a prefix of."""
    s, x = side.s, side.x
    if isinstance(s, Const) and s.value is None:
        return
    lits = literals_of(it.module)
    if isinstance(s, (SpecVal, ShardingVal)):
        for leaf_path, leaf in _leaves(lits, x, side.x_node, ()):
            _leaf(it, c, side.which, s, leaf, side.shown + _keys(leaf_path), side.at)
        return
    mine, theirs = _container_kind(s), _container_kind(x)
    if mine is not None and theirs is not None and mine != theirs:
        # a dict where the values have a tuple, a tuple where they have optax's
        # ScaleByAdamState: whatever the entries, JAX compares the node types
        it.prove(JitShardingsNotPrefix(side.which, path, s, x, shown=side.shown),
                 side.s_node or side.at)
        return
    if isinstance(s, PyTreeNodeVal) and isinstance(x, PyTreeNodeVal):
        if same_node_type(s, x):  # a library node's fields are all there
            for (k, si), (_, xi) in zip(s.children, x.children):
                _match(it, c, _Side(side.which, si, None, xi, None, f"{side.shown}.{k}", side.at),
                       path + (k,))
        return
    if not isinstance(s, (TupleVal, DictVal)):
        return
    if not lits.states_whole(side.s_node) or not (
            isinstance(x, ArrayVal) or (isinstance(x, (TupleVal, DictVal))
                                        and lits.states_whole(side.x_node))):
        _match_known_entries(it, c, side, path)
        return
    if _shape_of(s) != _shape_of(x):
        it.prove(JitShardingsNotPrefix(side.which, path, s, x, shown=side.shown),
                 side.s_node or side.at)
        return
    if isinstance(s, TupleVal) and isinstance(x, TupleVal):
        for i, (si, xi) in enumerate(zip(s.items, x.items)):
            _match(it, c, side.child(lits, i, si, xi), path + (i,))
    elif isinstance(s, DictVal) and isinstance(x, DictVal):
        for k, si in s.items:
            _match(it, c, side.child(lits, k, si, x.get(k)), path + (k,))


def _match_known_entries(it: ApiContext, c: ApiCall, side: _Side, path: Tuple[Any, ...]) -> None:
    """Containers the source does not state whole (a tree ``jax.tree.map`` built): each
    entry both are known to have meets its own, as ``device_put`` places them; whether
    the two have the same entries is not known, so no structure is proved here."""
    s, x = side.s, side.x
    lits = literals_of(it.module)
    if isinstance(s, DictVal) and isinstance(x, DictVal):
        theirs = {k for k, _ in x.items}
        for k, si in s.items:
            if k in theirs:
                _match(it, c, side.child(lits, k, si, x.get(k)), path + (k,))
    elif isinstance(s, TupleVal) and isinstance(x, TupleVal) and not s.is_list \
            and not x.is_list and len(s.items) == len(x.items):  # tuples do not change
        for i, (si, xi) in enumerate(zip(s.items, x.items)):
            _match(it, c, side.child(lits, i, si, xi), path + (i,))


def _shape_of(v: Value) -> Any:
    """What must agree for ``v`` to be a prefix: the container kind and its length/keys."""
    if isinstance(v, TupleVal):
        return ("list" if v.is_list else "tuple", len(v.items))
    if isinstance(v, DictVal):
        return ("dict", frozenset(k for k, _ in v.items))
    return ("leaf",)


def _container_kind(v: Value) -> Optional[str]:
    """The type of pytree node ``v`` certainly is, whether or not all its entries are
    known: "dict", "tuple", "list", or a library node's type; None for anything else."""
    if isinstance(v, DictVal):
        return "dict"
    if isinstance(v, TupleVal):
        return "list" if v.is_list else "tuple"
    if isinstance(v, (PyTreeNodeVal, PytreeNodeVal)):
        return v.kind
    return None


def _leaves(lits: Any, x: Value, node: Optional[cst.CSTNode],
            path: Tuple[Any, ...]) -> List[Tuple[Tuple[Any, ...], ArrayVal]]:
    """The arrays of a tree: all of a container the source states whole (or a library
    node, whose fields are all there), else none."""
    if isinstance(x, ArrayVal):
        return [(path, x)]
    if isinstance(x, PyTreeNodeVal):
        return [leaf for k, v in x.children for leaf in _leaves(lits, v, None, path + (k,))]
    if not lits.states_whole(node):
        return []
    if isinstance(x, TupleVal):
        return [leaf for i, v in enumerate(x.items)
                for leaf in _leaves(lits, v, lits.child(node, i), path + (i,))]
    if isinstance(x, DictVal):
        return [leaf for k, v in x.items
                for leaf in _leaves(lits, v, lits.child(node, k), path + (k,))]
    return []


def _keys(path: Tuple[Any, ...]) -> str:
    return "".join(f"[{k!r}]" for k in path)


def _leaf(it: ApiContext, c: ApiCall, which: str, s: Value, x: ArrayVal, shown: str,
          at: cst.CSTNode) -> None:
    """One array meets one sharding: its rank and divisibility (SC103/SC104) and, for an
    argument, its committed sharding (SC308)."""
    spec, mesh = spec_and_mesh(s, c.ctx)
    if spec is None:
        return
    shape = x.shape if x.shape is not None else (
        (None,) * len(x.dims) if x.dims is not None else None)
    if shape is not None:
        what = "argument" if which == "in_shardings" else "output"
        it.record("spec_uses", SpecUse(spec, spec.node or at, f"jax.jit({which}=) for the {what} "
                                       f"`{shown}`", mesh, shape))
    if which == "in_shardings":
        _committed(it, c, spec, mesh, x)


# -- a committed argument against its in_sharding ------------------------------------------------
def _committed(it: ApiContext, c: ApiCall, spec: SpecVal, mesh: Optional[MeshVal],
               x: ArrayVal) -> None:
    """Outside any trace, JAX compares a committed argument's sharding with its
    in_sharding and raises when they differ (on Auto axes too). An array is committed when
    it was placed on a mesh (``device_put``, a constructor under ``jax.set_mesh``, a jit
    output with ``out_shardings``); one made without a mesh is not, and jit places it."""
    if not c.ctx.eager or c.ctx.manual_axes or x.mesh is None or mesh is None:
        return
    if x.spec is None and not c.ctx.abstract:
        # not placed itself: committed if made under jax.set_mesh, but not under the
        # legacy `with mesh:`, which sets no mesh for arrays
        return
    if x.mesh is not mesh and _same_mesh(x.mesh, mesh) is not True:
        node = _arg_node(c, x) or c.node
        if _same_mesh(x.mesh, mesh) is False and not it.conflict_at(node):
            # (JAX names the first leaf of an argument on other devices)
            it.prove(InShardingsConflict((), x, spec, mesh), node)
        return
    rank = tr.rank(x)
    if mesh.types is not None and all(t == AxisType.Explicit for t in mesh.types):
        dims = spec_dims(spec, mesh, rank, c.ctx)
        if dims is not None and x.dims is not None and _differ(dims, x.dims, mesh):
            it.prove(InShardingsConflict(dims, x), _arg_node(c, x) or c.node)
        return
    # Auto axes: typeof shows no sharding; compare the spec the argument was placed with
    if mesh.types is None or x.spec is None or not x.spec.complete or not spec.complete \
            or rank is None or len(spec.entries) > rank or len(x.spec.entries) > rank:
        return
    if spec.unreduced or spec.reduced or x.spec.unreduced or x.spec.reduced:
        return
    mine, theirs = _entry_dims(spec, rank), _entry_dims(x.spec, rank)
    if mine is not None and theirs is not None and _differ(mine, theirs, mesh):
        it.prove(InShardingsConflict(mine, x, spec), _arg_node(c, x) or c.node)


def _arg_node(c: ApiCall, x: ArrayVal) -> Optional[cst.CSTNode]:
    """The argument that is ``x``, or holds it as a leaf of its tree."""
    for a in c.args.args:
        if a.value is x:
            return a.node
    for a in c.args.args:
        if any(leaf is x for leaf in leaves_of(a.value)):
            return a.node
    return None


def _entry_dims(spec: SpecVal, rank: int) -> Optional[Tuple[Tuple[str, ...], ...]]:
    out = []
    for e in spec.entries:
        if e is None:
            out.append(())
        elif isinstance(e, tuple) and all(isinstance(a, str) for a in e):
            out.append(e)
        else:
            return None
    return tuple(out) + ((),) * (rank - len(out))


def _differ(a: Tuple[Tuple[str, ...], ...], b: Tuple[Tuple[str, ...], ...], mesh: MeshVal) -> bool:
    """Whether two shardings of one array provably differ (axes of size 1 shard nothing)."""
    if len(a) != len(b):
        return False

    def real(d: Tuple[str, ...]) -> Optional[Tuple[str, ...]]:
        sizes = [mesh.size_of(n) for n in d]
        if None in sizes:
            return None
        return tuple(n for n, s in zip(d, sizes) if s != 1)
    for x, y in zip(a, b):
        rx, ry = real(x), real(y)
        if rx is None or ry is None:
            if x != y:
                return False  # unknown sizes: cannot prove
            continue
        if rx != ry:
            return True
    return False


def _same_mesh(a: MeshVal, b: MeshVal) -> Optional[bool]:
    same = a.same_shape(b)
    if same is True and a.types is not None and b.types is not None and a.types != b.types:
        return False
    return same


# -- out_shardings against the outputs ---------------------------------------------------------
def _check_out_shardings(it: ApiContext, jv: JitVal, out: Value, ctx: MeshCtx,
                         func: Value) -> None:
    """``func``: the traced function (``jv.func``, or the function a jitted one wraps)."""
    opt = jv.option("out_shardings")
    if not _given(opt) or not it.recording() or not isinstance(func, FuncVal):
        return
    assert opt is not None
    shardings, node = opt
    exprs = _returned(func)
    shapes = {_literal_shape(e) for e in exprs}
    written = shapes.pop() if len(shapes) == 1 else None
    lits = literals_of(it.module)
    if written is not None and isinstance(shardings, (TupleVal, DictVal)) \
            and lits.states_whole(node) and _shape_of(shardings) != written:
        it.prove(JitShardingsNotPrefix("out_shardings", (), shardings, out, written=written), node)
        return
    c = ApiCall("", node, CallArgs([]), Env(), ctx)
    x_node = exprs[0] if len(exprs) == 1 else None
    _match(it, c, _Side("out_shardings", shardings, node, out, x_node, "result", node), ())


def _returned(func: FuncVal) -> List[Optional[cst.BaseExpression]]:
    """The expressions ``func`` returns (a lambda's body; each ``return`` of a def)."""
    node = func.node
    if isinstance(node, cst.Lambda):
        return [node.body]
    if isinstance(node, cst.FunctionDef):
        return [r.value for r in _returns(node.body)]
    return []


def _literal_shape(e: Optional[cst.BaseExpression]) -> Optional[Tuple[Any, ...]]:
    if isinstance(e, (cst.Tuple, cst.List)):
        if any(isinstance(x, cst.StarredElement) for x in e.elements):
            return None
        return ("list" if isinstance(e, cst.List) else "tuple", len(e.elements))
    if isinstance(e, cst.Dict):
        keys = []
        for el in e.elements:
            if not isinstance(el, cst.DictElement) or not isinstance(el.key, cst.SimpleString):
                return None
            keys.append(el.key.evaluated_value)
        return ("dict", frozenset(keys))
    return None


def _returns(body: cst.CSTNode) -> List[cst.Return]:
    """The return statements of a function body, not of the functions nested in it."""
    out: List[cst.Return] = []

    class Visitor(cst.CSTVisitor):
        def visit_Return(self, node: cst.Return) -> None:
            out.append(node)

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return False

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return False

        def visit_ClassDef(self, node: cst.ClassDef) -> bool:
            return False
    body.visit(Visitor())
    return out


# -- what the call's arguments are ----------------------------------------------------------------
def _param_names(func: Value) -> Optional[List[str]]:
    if isinstance(func, FuncVal):
        params = func.node.params  # type: ignore[attr-defined]  # FunctionDef and Lambda
        return [p.name.value for p in list(params.posonly_params) + list(params.params)]
    return None


def _static_positions(jv: JitVal, n: int) -> Optional[FrozenSet[int]]:
    """The positions of the call's static arguments (no in_shardings entry); None when
    they cannot be told."""
    out: Set[int] = set()
    nums = jv.option("static_argnums")
    if nums is not None:
        ints = _ints(nums[0])
        if ints is None:
            return None
        out.update(i if i >= 0 else n + i for i in ints)
    names = jv.option("static_argnames")
    if names is not None:
        strs = _strs(names[0])
        params = _param_names(jv.func)
        if strs is None or (strs and params is None):
            return None
        assert params is not None or not strs
        out.update(params.index(s) for s in strs if params is not None and s in params)
    return frozenset(out)


def _ints(v: Value) -> Optional[Tuple[int, ...]]:
    if isinstance(v, Const) and v.value is None:
        return ()
    one = const_int(v)
    if one is not None:
        return (one,)
    if isinstance(v, TupleVal):
        out = tuple(const_int(i) for i in v.items)
        return None if None in out else out  # type: ignore[return-value]  # None excluded
    return None


def _strs(v: Value) -> Optional[Tuple[str, ...]]:
    if isinstance(v, Const) and v.value is None:
        return ()
    one = const_str(v)
    if one is not None:
        return (one,)
    if isinstance(v, TupleVal):
        out = tuple(const_str(i) for i in v.items)
        return None if None in out else out  # type: ignore[return-value]  # None excluded
    return None


