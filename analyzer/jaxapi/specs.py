"""PartitionSpec, NamedSharding and AxisType; what a spec means on a mesh."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, Callable, List, Optional, Tuple

from sharding_types import AxisType

from . import argument_kinds
from . import names as api
from ..events import MeshCtx, SpecUse
from ..values import (UNKNOWN, Const, DictVal, MeshVal, QualName, ShardingVal, SpecChoice,
                      SpecVal, TupleVal, Value, const_str, str_tuple)
from ..api import ApiCall, ApiContext, attribute_of, hook, models, models_prefix

if TYPE_CHECKING:
    import libcst as cst

# The pre-check's vocabulary (partition specs and shardings): the names this family
# models make sharding values, so a file spelling one is analysed
# (analyzer/registry_manifest.py).
MAKES_SHARDINGS = True

Dims = Tuple[Tuple[str, ...], ...]
OutSharding = Callable[[Value, Optional[int]], Optional[Tuple[Dims, frozenset]]]


@models(api.PARTITION_SPEC)
def partition_spec(it: ApiContext, c: ApiCall) -> Value:
    entries: List[Any] = []
    complete = True
    unreduced: Tuple[Optional[str], ...] = ()
    reduced: Tuple[Optional[str], ...] = ()
    for a in c.args.args:
        if a.keyword in ("unreduced", "reduced"):
            t = str_tuple(a.value)
            if t is None:
                complete = False
            elif a.keyword == "unreduced":
                unreduced = t
            else:
                reduced = t
            continue
        if a.keyword is not None:
            continue
        if a.star:
            spliced = a.value
            if isinstance(spliced, SpecVal):  # P(*spec): its entries
                spliced = spec_items(spliced)
            if isinstance(spliced, TupleVal):
                entries.extend(spec_entry(v) for v in spliced.items)
            else:
                complete = False
            continue
        entries.append(spec_entry(a.value))
    return SpecVal(tuple(entries), unreduced, reduced, c.node, complete)


@models(api.NAMED_SHARDING)
def named_sharding(it: ApiContext, c: ApiCall) -> Value:
    mesh = c.args.get(0, "mesh")
    spec = c.args.get(1, "spec")
    if not c.args.starred and c.args.given(0, "mesh") and c.args.given(1, "spec"):
        if argument_kinds.check_mesh(it, c, mesh, c.args.node(0, "mesh")) or \
                argument_kinds.check_spec(it, c, spec, c.args.node(1, "spec")):
            return UNKNOWN  # JAX raised
    for s in spec.options if isinstance(spec, SpecChoice) else [spec]:
        if isinstance(s, SpecVal):
            it.record("spec_uses", SpecUse(s, s.node or c.node, "NamedSharding",
                                           mesh if isinstance(mesh, MeshVal) else None, at=c.node))
    return ShardingVal(mesh, spec, c.node)


@attribute_of(ShardingVal)
def sharding_attribute(it: ApiContext, base: Value, attr: str, node: "cst.CSTNode",
                       ctx: MeshCtx) -> Value:
    """``sharding.spec`` and ``sharding.mesh`` of a NamedSharding: what it was made with."""
    assert isinstance(base, ShardingVal)
    if attr == "spec" and isinstance(base.spec, (SpecVal, SpecChoice)):
        if isinstance(base.spec, SpecVal) and base.spec.node is base.node is not None:
            # a spec no P(...) wrote (``jax.typeof(x).sharding``): at the whole `.spec`
            return replace(base.spec, node=node)
        return base.spec  # at the P(...) that wrote it
    if attr == "mesh" and isinstance(base.mesh, MeshVal):
        return base.mesh
    return UNKNOWN


@models("jax.sharding.AxisType")
@models_prefix("jax.sharding.AxisType.")
def axis_type(it: ApiContext, c: ApiCall) -> Value:
    return QualName(c.name)


def spec_entry(v: Value) -> Any:
    """One positional entry of ``P(...)``: None, a tuple of names (None where a name is
    unknown), or UNKNOWN."""
    if isinstance(v, Const):
        if v.value is None:
            return None
        if isinstance(v.value, str):
            return (v.value,)
        return UNKNOWN
    if isinstance(v, TupleVal):
        return tuple(const_str(i) for i in v.items)
    return UNKNOWN


def _plain(spec: Value) -> bool:
    return isinstance(spec, SpecVal) and spec.complete and not spec.unreduced \
        and not spec.reduced


@hook("sequence")
def spec_sequence(v: Value) -> Optional[Value]:
    """A PartitionSpec seen as the tuple it is (``spec[0]``, ``b, d = spec``, a loop over
    it, ``tuple(spec)``); None for any other value."""
    return spec_items(v) if isinstance(v, SpecVal) else None


@hook("value_binop")
def spec_operator(op: str, a: Value, b: Value, node: cst.CSTNode) -> Optional[Value]:
    """``P(...) + (...)`` and its mirror (``spec_concat``); None for any other operator."""
    if op == "Add" and (isinstance(a, SpecVal) or isinstance(b, SpecVal)):
        return spec_concat(a, b, node)
    return None


def spec_items(spec: SpecVal) -> Value:
    """A spec's entries as the tuple ``tuple(spec)`` gives (a name, a tuple of names or
    None each); unknown when entries were spliced in or it has unreduced axes."""
    if not _plain(spec):
        return UNKNOWN
    items: List[Value] = []
    for e in spec.entries:
        if e is None:
            items.append(Const(None))
        elif isinstance(e, tuple) and all(isinstance(a, str) for a in e):
            items.append(Const(e[0]) if len(e) == 1 else TupleVal(tuple(Const(a) for a in e)))
        else:
            items.append(UNKNOWN)
    return TupleVal(tuple(items))


def spec_concat(a: Value, b: Value, node: cst.CSTNode) -> Value:
    """``P(...) + (...)``, ``(...) + P(...)``, ``P(...) + P(...)``: a spec of both's
    entries (JAX 0.10-0.12's ``PartitionSpec.__add__``/``__radd__``; with unreduced or
    reduced axes JAX raises, and the result is unknown here)."""
    parts: List[Any] = []
    for v in (a, b):
        if isinstance(v, SpecVal):
            if not _plain(v):
                return UNKNOWN
            parts.extend(v.entries)
        elif isinstance(v, TupleVal) and not v.is_list:
            parts.extend(spec_entry(x) for x in v.items)
        else:
            return UNKNOWN
    return SpecVal(tuple(parts), node=node)


def spec_leaves(v: Value) -> List[SpecVal]:
    """The bare specs in a tree of specs (NamedShardings are checked where made)."""
    if isinstance(v, SpecVal):
        return [v]
    if isinstance(v, TupleVal):
        return [s for i in v.items for s in spec_leaves(i)]
    if isinstance(v, DictVal):
        return [s for _, i in v.items for s in spec_leaves(i)]
    return []


def spec_and_mesh(target: Value, ctx: MeshCtx) -> Tuple[Optional[SpecVal], Optional[MeshVal]]:
    """A bare spec means the context mesh; a NamedSharding names its own."""
    if isinstance(target, SpecVal):
        return target, ctx.mesh if ctx.known else None
    if isinstance(target, ShardingVal) and isinstance(target.spec, SpecVal):
        return target.spec, target.mesh if isinstance(target.mesh, MeshVal) else None
    return None, None


def spec_dims(spec: Optional[Value], mesh: Optional[MeshVal], rank: Optional[int],
              ctx: MeshCtx) -> Optional[Dims]:
    """The dims ``jax.typeof`` shows for an array placed with ``spec`` on ``mesh``:
    Explicit axes only; unknown (None) when anything is."""
    if not isinstance(spec, SpecVal) or not spec.complete or mesh is None or rank is None:
        return None
    if mesh.names is None or mesh.types is None or len(spec.entries) > rank:
        return None
    if ctx.manual_axes or spec.unreduced or spec.reduced:
        return None
    out = []
    for e in spec.entries:
        if e is None:
            out.append(())
            continue
        if not isinstance(e, tuple) or any(not isinstance(a, str) or a not in mesh.names for a in e):
            return None
        out.append(tuple(a for a in e if mesh.type_of(a) == AxisType.Explicit))
    return tuple(out) + ((),) * (rank - len(spec.entries))


def out_sharding_fn(ctx: MeshCtx) -> OutSharding:
    """What an ``out_sharding=`` argument means in ``ctx``: (dims, unreduced axes)."""
    def fn(v: Value, rank: Optional[int]) -> Optional[Tuple[Dims, frozenset]]:
        spec, mesh = spec_and_mesh(v, ctx)
        if spec is None or not spec.complete or mesh is None:
            return None
        n = rank if rank is not None else len(spec.entries)
        if spec.reduced or any(not isinstance(a, str) for a in spec.unreduced):
            return None
        dims = spec_dims(SpecVal(spec.entries), mesh, n, ctx)
        if dims is None:
            return None
        return dims, frozenset(spec.unreduced)
    return fn
