"""Placing arrays: ``jax.device_put``, ``jax.lax.with_sharding_constraint``,
``jax.sharding.reshard``, and the ``out_sharding=``/``device=`` arguments of array
functions."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Optional

from sharding_types import AxisType

from . import argument_kinds
from . import names as api
from .. import transfer as tr
from ..events import ApiUse, AxisTypedUse, MeshCtx, NeedsMesh, SpecUse
from ..facts import ConstraintAxisNotAuto, ConstraintConflict, MeshConflict
from ..values import (UNKNOWN, ArrayVal, Const, DictVal, MeshVal, ShardingVal, SpecChoice, SpecVal,
                      TupleVal, Value, meshes_differ)
from ..api import ApiCall, ApiContext, models
from .pytrees import PyTreeNodeVal, same_node_type
from .shard_map import keyword_name
from .specs import spec_and_mesh, spec_dims

# The pre-check's vocabulary (device_put, reshard and sharding constraints): the names
# this family models make sharding values, so a file spelling one is analysed
# (analyzer/registry_manifest.py).
MAKES_SHARDINGS = True


_WHAT = {api.DEVICE_PUT: "device_put", api.WITH_SHARDING_CONSTRAINT: "with_sharding_constraint",
         api.RESHARD: "reshard"}


@models(api.DEVICE_PUT)
def device_put(it: ApiContext, c: ApiCall) -> Value:
    if c.args.given(1, "device") and not c.args.starred:
        argument_kinds.check_shardings(it, c, c.args.get(1, "device"), c.args.node(1, "device"),
                                       "device", device_put=True)
    return _place(it, c, c.args.get(0, "x"), c.args.get(1, "device"))


@models(api.WITH_SHARDING_CONSTRAINT)
def with_sharding_constraint(it: ApiContext, c: ApiCall) -> Value:
    if "axis_resources" in c.args.kw:  # renamed `shardings` (JAX 0.4.4), since removed
        it.record("api_uses", ApiUse(c.name, c.args.kw["axis_resources"].node or c.node, "keyword",
                                     "axis_resources", keyword_name(c.node, "axis_resources")))
    if c.args.given(1, "shardings") and not c.args.starred:
        argument_kinds.check_shardings(it, c, c.args.get(1, "shardings"),
                                       c.args.node(1, "shardings"), "shardings")
    return _place(it, c, c.args.get(0, "x"), c.args.get(1, "shardings"))


@models(api.RESHARD)
def reshard(it: ApiContext, c: ApiCall) -> Value:
    return _place(it, c, c.args.get(0, "xs"), c.args.get(1, "out_shardings"))


def _place(it: ApiContext, c: ApiCall, x: Value, target: Value) -> Value:
    """Place ``x`` (a tree) onto ``target`` (a spec, a sharding, or a tree of them)."""
    if isinstance(target, (TupleVal, DictVal)):
        if isinstance(target, DictVal) and isinstance(x, DictVal):
            return DictVal(tuple((k, _place(it, c, x.get(k), v)) for k, v in target.items))
        if isinstance(target, TupleVal) and isinstance(x, TupleVal) and len(x.items) == len(target.items):
            return TupleVal(tuple(_place(it, c, xi, ti) for xi, ti in zip(x.items, target.items)))
        for v in (target.items if isinstance(target, TupleVal) else [v for _, v in target.items]):
            _place(it, c, UNKNOWN, v)
        return UNKNOWN
    if isinstance(x, PyTreeNodeVal):  # optax's state, a TrainState
        if same_node_type(x, target):
            return x.with_children([_place(it, c, xi, ti) for (_, xi), (_, ti)
                                    in zip(x.children, target.children)])  # type: ignore[attr-defined]  # a PyTreeNodeVal
        if isinstance(target, (SpecVal, ShardingVal)):
            return x.with_children([_place(it, c, xi, target) for _, xi in x.children])
        return UNKNOWN
    if isinstance(x, DictVal) and isinstance(target, (SpecVal, ShardingVal)):
        return DictVal(tuple((k, _place(it, c, v, target)) for k, v in x.items))
    if isinstance(x, TupleVal) and isinstance(target, (SpecVal, ShardingVal)):
        return TupleVal(tuple(_place(it, c, v, target) for v in x.items), x.is_list)
    placed = _place_leaf(it, c, x, target)
    if isinstance(placed, ArrayVal) and isinstance(x, ArrayVal):
        placed = _placed_type(it, c, x, placed, target)
    return placed


def constrain(it: ApiContext, c: ApiCall, x: Value, target: Value) -> Value:
    """``x`` placed on ``target`` by the call ``c`` (flax's logical constraints land here
    as ``with_sharding_constraint`` of their resolved spec)."""
    return _place(it, c, x, target)


def _placed_type(it: ApiContext, c: ApiCall, x: ArrayVal, placed: ArrayVal,
                 target: Value) -> ArrayVal:
    """The full type of ``x`` after placement (and the assert-like constraint check)."""
    spec, mesh = spec_and_mesh(target, c.ctx)
    dims = spec_dims(spec, mesh, tr.rank(x), c.ctx) if spec is not None else None
    constraint = c.name == api.WITH_SHARDING_CONSTRAINT
    if (constraint and dims is not None and x.dims is not None and mesh is not None
            and mesh.types is not None and all(t == AxisType.Explicit for t in mesh.types)
            and _asserts(c.ctx) and dims != x.dims):
        it.prove(ConstraintConflict(dims, x), c.node)
    if constraint and mesh is not None and mesh.types is not None \
            and any(t != AxisType.Explicit for t in mesh.types):
        # on Auto axes the constraint is a hint the compiler may move, which no type
        # shows: an array whose type names no axis keeps that type on an all-Auto mesh
        auto = all(t == AxisType.Auto for t in mesh.types)
        dims = x.dims if auto and x.dims is not None and not any(x.dims) else None
    return replace(placed, dtype=tr.canonical_dtype(x.dtype) if x.numpy else x.dtype,
                   weak=False if x.numpy else x.weak, dims=dims, varying=x.varying,
                   unreduced=frozenset() if x.numpy else x.unreduced)


def _asserts(ctx: MeshCtx) -> bool:
    """with_sharding_constraint asserts (rather than hints) under a context mesh whose
    axes are all Explicit, outside shard_map."""
    return (ctx.known and ctx.mesh is not None and ctx.mesh.types is not None
            and not ctx.manual_axes and all(t == AxisType.Explicit for t in ctx.mesh.types))


def _check_constraint_axes(it: ApiContext, c: ApiCall, target: Value) -> None:
    """Outside a context mesh whose axes are all Explicit (where the constraint is an
    assert), with_sharding_constraint may name only Auto axes of its sharding's mesh: a
    Manual axis inside shard_map, or an Explicit one with no mesh set, is JAX's
    ValueError. Unknown axis types, or an unknown context, prove nothing."""
    ctx = c.ctx
    if not ctx.known or _asserts(ctx):
        return  # unknown, or the assert path (sharding-constraint-assert compares them)
    if isinstance(target, SpecVal):
        if ctx.mesh is None:
            return  # no mesh at all: no-mesh-context reports it
        spec, mesh, manual = target, ctx.mesh, ctx.manual_axes
    elif isinstance(target, ShardingVal) and isinstance(target.spec, SpecVal) \
            and isinstance(target.mesh, MeshVal):
        spec, mesh, manual = target.spec, target.mesh, frozenset()
    else:
        return
    for axis in dict.fromkeys(spec.axis_names()):
        kind = AxisType.Manual if axis in manual else mesh.type_of(axis)
        if kind is not None and kind != AxisType.Auto:
            context = ("inside shard_map" if ctx.manual_axes else
                       "with no mesh set" if ctx.mesh is None else "under a context mesh "
                       "whose axes are not all Explicit")
            it.prove(ConstraintAxisNotAuto(spec, axis, kind, mesh, context), spec.node or c.node)
            return


def _place_leaf(it: ApiContext, c: ApiCall, x: Value, target: Value) -> Value:
    what, ctx, e = _WHAT[c.name], c.ctx, c.node
    if c.name == api.WITH_SHARDING_CONSTRAINT:
        _check_constraint_axes(it, c, target)
    shape = x.shape if isinstance(x, ArrayVal) else None
    if isinstance(x, Const) and type(x.value) in (bool, int, float, complex):
        shape = ()  # a Python scalar is placed as a rank-0 array
    if isinstance(target, SpecVal):
        mesh = it.context_mesh(ctx)
        if ctx.known and ctx.mesh is None:
            it.record("needs_mesh", NeedsMesh(target.node or e, f"{what} with a bare "
                                              "PartitionSpec", ctx))
        it.record("spec_uses", SpecUse(target, target.node or e, what, mesh, shape,
                                       from_context=True, manual_axes=ctx.manual_axes, at=e,
                                       padded=_padded(c, mesh)))
        if c.name == api.RESHARD and mesh is not None:
            it.record("axis_typed", AxisTypedUse(target.node or e, what, target, mesh,
                                                 ctx.manual_axes))
        return ArrayVal(shape, mesh, target, e)
    if isinstance(target, SpecChoice):  # any entry of a spec table: each on the context mesh
        for s in target.options:
            it.record("spec_uses", SpecUse(s, s.node or e, what, it.context_mesh(ctx),
                                           from_context=True, manual_axes=ctx.manual_axes, at=e))
    if isinstance(target, ShardingVal) and isinstance(target.spec, SpecVal):
        mesh = target.mesh if isinstance(target.mesh, MeshVal) else None
        if shape is not None:
            it.record("spec_uses", SpecUse(target.spec, target.spec.node or e, what, mesh, shape,
                                           at=e, padded=_padded(c, mesh)))
        return ArrayVal(shape, mesh, target.spec, e)
    return ArrayVal(shape, node=e) if shape is not None else UNKNOWN


def _padded(c: ApiCall, mesh: Optional[MeshVal]) -> bool:
    """Whether an indivisible dim of this placement is no error: a
    ``with_sharding_constraint`` on axes that are not all Explicit is a hint to the
    compiler, and JAX 0.10.2 raises IndivisibleError for it eagerly but pads the dim under
    ``jax.jit`` (``P('x', None)`` on a ``(1, 16)`` array, ``x: 2``, Auto axes); so it is an
    error only where the code provably runs eagerly. Its rank is checked everywhere."""
    if c.name != api.WITH_SHARDING_CONSTRAINT or c.ctx.eager:
        return False
    return not (mesh is not None and mesh.types is not None
                and all(t == AxisType.Explicit for t in mesh.types))


def check_out_sharding(it: ApiContext, c: ApiCall, shape: Optional[Any]) -> None:
    """The ``out_sharding=``/``device=`` of an array function is a spec applied here."""
    for key in ("out_sharding", "device"):
        a = c.args.kw.get(key)
        if a is None:
            continue
        v, node = a.value, a.node or c.node
        where = f"{c.short}({key}=)"
        if isinstance(v, SpecVal):
            mesh = it.context_mesh(c.ctx)
            if c.ctx.known and c.ctx.mesh is None:
                it.record("needs_mesh", NeedsMesh(v.node or node, f"{where} with a bare "
                                                  "PartitionSpec", c.ctx))
            it.record("spec_uses", SpecUse(v, v.node or node, where, mesh, shape,
                                           from_context=True, manual_axes=c.ctx.manual_axes))
            if mesh is not None and key == "out_sharding":
                it.record("axis_typed", AxisTypedUse(v.node or node, where, v, mesh,
                                                     c.ctx.manual_axes))
        elif isinstance(v, ShardingVal) and isinstance(v.spec, SpecVal):
            mesh = v.mesh if isinstance(v.mesh, MeshVal) else None
            if shape is not None:
                it.record("spec_uses", SpecUse(v.spec, v.spec.node or node, where, mesh, shape))
            context = c.ctx.mesh if c.ctx.known and c.ctx.abstract else None
            if key == "out_sharding" and mesh is not None and context is not None \
                    and not c.ctx.manual_axes and meshes_differ(mesh, context):
                # JAX checks an out_sharding's mesh against the context mesh
                it.prove(MeshConflict("context", mesh, context, f"`{where}`", sharding=True),
                         v.node or node)
