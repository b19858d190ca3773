"""Flax's logical axis names: rule tables, their contexts, and the APIs that resolve
logical names to mesh axes (``nn.with_logical_constraint``, ``nn.logical_to_mesh_axes``,
``nn.with_logical_partitioning``; NNX's variables are resolved in ``flax_nnx``).

Resolution is ``analyzer.logical_axes`` (flax's own algorithm, table-tested against flax).
Every resolved site proves a ``LogicalResolution`` fact at the logical names' node, with
the names it came from; a constraint then flows on as ``with_sharding_constraint`` of the
resolved spec (its checks and its result type).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Optional, Tuple

import libcst as cst

from . import names as api
from .. import logical_axes as la
from ..events import MeshCtx, SpecUse
from ..facts import Fact
from ..values import (UNKNOWN, ArrayVal, Const, LogicalInit, MeshVal, QualName, ShardingVal,
                      SpecVal, TupleVal, Value, str_keyed_pairs)
from ..api import ApiCall, ApiContext, hook, models
from .initializers import default_dtype

# The pre-check's vocabulary (Flax's logical axis names and rules): the names this
# family models make sharding values, so a file spelling one is analysed
# (analyzer/registry_manifest.py).
MAKES_SHARDINGS = True


_LINEN = ("flax.linen", "flax.linen.spmd", "flax.linen.partitioning")
_CORE = ("flax.core.spmd", "flax.linen", "flax.nnx", "flax.linen.spmd")
_UNCONSTRAINED = ("jax.sharding.PartitionSpec.UNCONSTRAINED",)


@dataclass(frozen=True, eq=False)
class LogicalRulesVal(Value):
    """``nn.logical_axis_rules(rules)`` (a context) or ``nn.set_logical_axis_rules``;
    ``rules`` None when the table is not a constant the analyzer can read."""

    rules: Optional[la.Rules]
    node: Optional[cst.CSTNode] = None
    sets: bool = False  # set_logical_axis_rules: in force from the statement on


@dataclass(frozen=True)
class LogicalResolution(Fact):
    """Logical names resolved to mesh axes at one site.

    ``library``: ``"linen"`` or ``"nnx"``; ``api``: the canonical name called; ``names``:
    the logical names as written; ``entries``: the resolved PartitionSpec entries (as
    ``P(*entries)`` takes them); ``unmatched``: logical names no rule gave mesh axes
    (Linen leaves them unsharded; NNX passes them to JAX as mesh axis names); ``rules``:
    the table used; ``mesh``: the mesh the spec applies to, when known; ``shape``: the
    array's shape, when known."""

    library: str
    api: str
    names: Tuple[Any, ...]
    entries: Tuple[Any, ...]
    unmatched: Tuple[str, ...]
    rules: la.Rules
    mesh: Optional[MeshVal] = None
    shape: Optional[Tuple[Optional[int], ...]] = None


@dataclass(frozen=True)
class LogicalNamesRepeated(Fact):
    """Linen logical names that name one dim twice: flax raises ValueError."""

    api: str
    names: Tuple[Any, ...]
    repeated: Tuple[str, ...]


def rules_of(v: Value) -> Optional[la.Rules]:
    """A rule table written as constants: pairs of (name, None | axis | axes)."""
    pairs = str_keyed_pairs(v)
    if pairs is None:
        return None
    out = []
    for name, axes in pairs:
        mesh_axes = _mesh_axes_of(axes)
        if mesh_axes is _BAD:
            return None
        out.append((name, mesh_axes))
    return tuple(out)


_BAD: Any = object()


def _mesh_axes_of(v: Value) -> Any:
    if isinstance(v, Const) and (v.value is None or isinstance(v.value, str)):
        return v.value
    if isinstance(v, QualName) and v.name in _UNCONSTRAINED:
        return la.UNCONSTRAINED
    if isinstance(v, TupleVal):
        items = [i.value for i in v.items if isinstance(i, Const) and isinstance(i.value, str)]
        return tuple(items) if len(items) == len(v.items) else _BAD
    return _BAD


def names_of(v: Value) -> Optional[Tuple[Any, ...]]:
    """Logical names as written: a tuple of str / None / ``P.UNCONSTRAINED``."""
    items = v.items if isinstance(v, TupleVal) else None
    if isinstance(v, SpecVal) and v.complete and not v.unreduced and not v.reduced:
        items = None
        entries = []
        for e in v.entries:
            if e is None or (isinstance(e, tuple) and len(e) == 1 and isinstance(e[0], str)):
                entries.append(e if e is None else e[0])
            else:
                return None
        return tuple(entries)
    if items is None:
        return None
    out = []
    for i in items:
        if isinstance(i, Const) and (i.value is None or isinstance(i.value, str)):
            out.append(i.value)
        elif isinstance(i, QualName) and i.name in _UNCONSTRAINED:
            out.append(la.UNCONSTRAINED)
        else:
            return None
    return tuple(out)


def _rules_in_force(it: ApiContext, c: ApiCall, keyword: str, pos: int) -> Optional[la.Rules]:
    """A call's ``rules=`` argument, else the rules in force where it is called."""
    if c.args.given(pos, keyword):
        v = c.args.get(pos, keyword)
        if not (isinstance(v, Const) and v.value is None):
            return rules_of(v)
    return context_rules(it, c.ctx)


def context_rules(it: ApiContext, ctx: MeshCtx) -> Optional[la.Rules]:
    """The rules ``nn.logical_axis_rules`` set here; where the source sets none, the
    project's declared ones (``[tool.shardcheck.logical]``)."""
    if isinstance(ctx.logical_rules, tuple) and ctx.logical_rules:
        return ctx.logical_rules
    declared = getattr(it, "logical_config", None)
    if declared is not None and declared.rules is not None:
        if declared.source is not None and declared.source.endswith(".py"):
            # shardcheck specs: the defaults of the script's Python config (pyconfig.py)
            from ..pyconfig import owner
            it.assume(f"{owner(declared.source)}.logical_axis_rules")
        return declared.rules
    return ctx.logical_rules if isinstance(ctx.logical_rules, tuple) else None


# -- rule tables and their contexts ------------------------------------------------------------
# flax.linen.partitioning's axis_rules/set_axis_rules are the same functions (t5x-style
# code spells them so: ``with nn_partitioning.axis_rules(config.logical_axis_rules):``)
@models(*(f"{m}.logical_axis_rules" for m in _CORE), "flax.linen.partitioning.axis_rules")
def logical_axis_rules(it: ApiContext, c: ApiCall) -> Value:
    return LogicalRulesVal(rules_of(c.args.get(0, "rules")), c.node)


@models(*(f"{m}.set_logical_axis_rules" for m in _CORE[:2]),
        "flax.linen.partitioning.set_axis_rules")
def set_logical_axis_rules(it: ApiContext, c: ApiCall) -> Value:
    return LogicalRulesVal(rules_of(c.args.get(0, "rules")), c.node, sets=True)


def enter_rules(it: ApiContext, v: Value, ctx: MeshCtx) -> Optional[MeshCtx]:
    """The context inside ``with nn.logical_axis_rules(rules):`` (or after
    ``nn.set_logical_axis_rules(rules)``); None for any other value."""
    if not isinstance(v, LogicalRulesVal):
        return None
    return replace(ctx, logical_rules=v.rules)


# -- resolution sites --------------------------------------------------------------------------
def _names_node(c: ApiCall, pos: int, keyword: str) -> cst.CSTNode:
    return c.args.node(pos, keyword) or c.node


@models(*(f"{m}.logical_to_mesh_axes" for m in _LINEN))
def logical_to_mesh_axes(it: ApiContext, c: ApiCall) -> Value:
    names = names_of(c.args.get(0, "array_dim_names"))
    rules = _rules_in_force(it, c, "rules", 1)
    node = _names_node(c, 0, "array_dim_names")
    if names is None or rules is None:
        return UNKNOWN
    res = _resolve_linen(it, c, names, rules, node)
    if res is None:
        return UNKNOWN
    it.prove(LogicalResolution("linen", c.name, names, res.entries, res.unmatched, rules,
                               it.context_mesh(c.ctx)), node)
    return SpecVal(spec_entries(res.entries), node=node)


def _resolve_linen(it: ApiContext, c: ApiCall, names: Tuple[Any, ...], rules: la.Rules,
                   node: cst.CSTNode) -> Optional[la.Resolution]:
    """flax's resolution; None (and a fact) where flax raises on repeated names."""
    try:
        return la.resolve_linen(names, rules)
    except la.LogicalAxisError:
        seen = [n for i, n in enumerate(names) if isinstance(n, str) and n in names[:i]]
        it.prove(LogicalNamesRepeated(c.name, names, tuple(dict.fromkeys(seen))), node)
        return None


def spec_entries(entries: Tuple[Any, ...]) -> Tuple[Any, ...]:
    """Resolved entries as the interpreter's SpecVal holds them."""
    out: list = []
    for e in entries:
        if e is None:
            out.append(None)
        elif isinstance(e, str):
            out.append((e,))
        elif isinstance(e, tuple):
            out.append(e)
        else:
            out.append(UNKNOWN)  # UNCONSTRAINED: not a sharding the analyzer models
    return tuple(out)


@models(*(f"{m}.with_logical_constraint" for m in _LINEN),
        "flax.linen.partitioning.with_sharding_constraint")  # the same function
def with_logical_constraint(it: ApiContext, c: ApiCall) -> Value:
    """``nn.with_logical_constraint(x, names, rules=None, mesh=None, fallback=...)``: a
    no-op with no rules or no mesh; else ``with_sharding_constraint`` of the resolved spec
    (on ``NamedSharding(mesh, spec)`` where ``mesh=`` is given)."""
    x = c.args.get(0, "x")
    names = names_of(c.args.get(1, "logical_axis_resources"))
    rules = _rules_in_force(it, c, "rules", 2)
    mesh = c.args.get(3, "mesh")
    node = _names_node(c, 1, "logical_axis_resources")
    if rules is None or names is None or c.args.given(4, "fallback"):
        return _unknown_sharding(x)
    if not rules:
        return x  # flax: "If no axis binding is set, this is a no-op."
    res = _resolve_linen(it, c, names, rules, node)
    if res is None:
        return UNKNOWN
    on_mesh = mesh if isinstance(mesh, MeshVal) else it.context_mesh(c.ctx)
    shape = x.shape if isinstance(x, ArrayVal) else None
    it.prove(LogicalResolution("linen", c.name, names, res.entries, res.unmatched, rules,
                               on_mesh, shape), node)
    if isinstance(mesh, Const) and mesh.value is None or not c.args.given(3, "mesh"):
        if not c.ctx.known:
            return _unknown_sharding(x)
        if c.ctx.mesh is None:
            return x  # flax: no mesh defined, the constraint is skipped
        if not c.ctx.abstract:
            return _unknown_sharding(x)  # legacy `with mesh:` (skipped) or a declared mesh
        target: Value = SpecVal(spec_entries(res.entries), node=node)
    elif isinstance(mesh, MeshVal):
        target = ShardingVal(mesh, SpecVal(spec_entries(res.entries), node=node), c.node)
    else:
        return _unknown_sharding(x)
    from .placement import constrain  # placement imports mesh, which imports this module
    return constrain(it, replace(c, name=api.WITH_SHARDING_CONSTRAINT), x, target)


def _opaque(it: ApiContext, c: ApiCall) -> Value:
    """What the call returns beyond the spec (a boxed initializer, a Variable): unknown;
    a function passed to it may run here. Its ``out_sharding=`` holds logical names, not
    an array function's mesh spec, so it is not checked as one."""
    it.pass_functions(c.args.args, c.ctx)
    return UNKNOWN


def _unknown_sharding(x: Value) -> Value:
    if isinstance(x, ArrayVal):
        return ArrayVal(x.shape, node=x.node)
    return UNKNOWN


@models(*(f"{m}.with_logical_partitioning" for m in _LINEN))
def with_logical_partitioning(it: ApiContext, c: ApiCall) -> Value:
    """``nn.with_logical_partitioning(init, names, mesh=None, rules=None)``: the
    parameter's spec is resolved when it is unboxed, under the rules then in force."""
    names = names_of(c.args.get(1, "names"))
    rules = _rules_in_force(it, c, "rules", 3)
    if names is not None and rules is not None:
        node = _names_node(c, 1, "names")
        res = _resolve_linen(it, c, names, rules, node)
        if res is None:
            return _opaque(it, c)
        mesh = c.args.get(2, "mesh")
        it.prove(LogicalResolution("linen", c.name, names, res.entries, res.unmatched, rules,
                                   mesh if isinstance(mesh, MeshVal) else it.context_mesh(c.ctx)),
                 node)
        _opaque(it, c)
        if not c.args.given(2, "mesh"):  # the context's mesh applies when it is unboxed
            return LogicalInit(spec_entries(res.entries), names, node,
                               rules_given=c.args.given(3, "rules"),
                               dtype=default_dtype(c.args.get(0, "fn")))
    return _opaque(it, c)


def record_param_spec(it: ApiContext, init: LogicalInit, name: str, ctx: MeshCtx,
                      shape: Optional[Tuple[Optional[int], ...]]) -> None:
    """``self.param(name, nn.with_logical_partitioning(init, names), shape, ...)``: Linen
    unboxes the parameter with ``with_logical_constraint``, so its spec must fit the
    shape on the mesh in context: JAX raises IndivisibleError when the module is
    initialised outside jit, not under ``jax.jit`` or ``jax.eval_shape`` (checked on
    flax 0.12.8 / JAX 0.10.2), so the shape is not checked where the calls in view
    trace the code (``unboxed_shape``)."""
    mesh = it.context_mesh(ctx)
    if shape is None or mesh is None:
        return
    spec = SpecVal(tuple(init.entries), node=init.node)
    it.record("spec_uses", SpecUse(spec, init.node, f"Linen param {name!r}", mesh,
                                   unboxed_shape(it, ctx, shape), from_context=True))


def unboxed_shape(it: ApiContext, ctx: MeshCtx, shape: Optional[Tuple[Optional[int], ...]]
                  ) -> Optional[Tuple[Optional[int], ...]]:
    """The shape a parameter's unboxing constraint checks its spec against: JAX raises
    IndivisibleError for it eagerly (initialising the module, or under ``jax.jit(init,
    out_shardings=...)`` whose shardings say the same), never under a bare ``jax.jit``
    or ``jax.eval_shape``; None (unchecked) where the calls in view may trace it."""
    info = it.current_function()
    if not ctx.eager and info is not None and info.calls:
        return None
    return shape


@models("flax.linen.partitioning.param_with_axes", "flax.linen.partitioning.variable_with_axes")
def param_with_axes(it: ApiContext, c: ApiCall) -> Value:
    """``nn_partitioning.param_with_axes(name, init, *args, axes=names)`` (t5x-style):
    the names are kept beside the parameter (``params_axes``) and resolved as
    ``nn.logical_to_mesh_axes`` resolves them, under the rules then in force."""
    axes = c.args.kw.get("axes")
    names = names_of(axes.value) if axes is not None else None
    rules = context_rules(it, c.ctx)
    if axes is not None and names is not None and rules is not None:
        node = axes.node or c.node
        res = _resolve_linen(it, c, names, rules, node)
        if res is not None:
            it.prove(LogicalResolution("linen", c.name, names, res.entries, res.unmatched,
                                       rules, it.context_mesh(c.ctx)), node)
    return _opaque(it, c)


@hook("wrapped_call")
def wrapper_call(it: Any, callee: Value, e: cst.Call, args: list, env: Any,
                 ctx: MeshCtx) -> Optional[Value]:
    """A call of a helper ``[tool.shardcheck.logical] wrappers`` declares (``it``: the
    interpreter, called from its calls half): it means
    ``nn.with_logical_constraint`` of its array and names arguments; None for others."""
    from ..interp.state import Arg, CallArgs
    from ..values import FuncVal
    if isinstance(callee, QualName):
        name = callee.name
    elif isinstance(callee, FuncVal):
        name = callee.name
    else:
        return None
    w = it.logical_config.wrapper(name)
    if w is None:
        return None
    given = CallArgs(args)
    if given.starred:
        return None
    x = _arg(given, w.array)
    names = _arg(given, w.names)
    if x is None or names is None:
        return UNKNOWN
    nodes = (_arg_node(given, w.array) or e, _arg_node(given, w.names) or e)
    call = ApiCall(f"{_LINEN[0]}.with_logical_constraint", e,
                   CallArgs([Arg(None, "", x, nodes[0]), Arg(None, "", names, nodes[1])]),
                   env, ctx)
    return with_logical_constraint(it, call)


def _arg(args: Any, which: Any) -> Optional[Value]:
    if isinstance(which, int):
        return args.get(which, "") if args.given(which, "") else None
    return args.kw[which].value if which in args.kw else None


def _arg_node(args: Any, which: Any) -> Optional[cst.CSTNode]:
    if isinstance(which, int):
        return args.node(which, "")
    return args.kw[which].node if which in args.kw else None
