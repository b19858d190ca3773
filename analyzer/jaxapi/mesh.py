"""Meshes: ``jax.make_mesh``, ``Mesh``, ``AbstractMesh``, device meshes, and the mesh
context (``jax.set_mesh``, ``use_abstract_mesh``, the legacy ``with mesh:``)."""

from __future__ import annotations

import math
from typing import Iterable, Optional, Tuple

import libcst as cst

from sharding_types import AxisType

from . import argument_kinds
from . import names as api
from ..events import UNKNOWN_CTX, ApiUse, MeshCtx, MeshMade
from ..facts import MeshConflict, MeshDeviceCount
from ..interp.state import MeshContextVal
from ..values import (UNKNOWN, ArrayVal, Const, DictVal, MeshVal, QualName, TupleVal, Value,
                      meshes_differ,
                      int_tuple, str_tuple)
from .devices import device_setup
from .logical import enter_rules
from ..api import ApiCall, ApiContext, attribute_of, hook, models

# The pre-check's vocabulary (meshes): the names this family models make sharding
# values, so a file spelling one is analysed (analyzer/registry_manifest.py).
MAKES_SHARDINGS = True


_AXIS_TYPES = {t.value: t for t in AxisType}


# The default axis types and make_mesh's sizes keyword differ between JAX versions:
# the analysis reads them from the version profile it runs under (analyzer/compat).
_SIZES_KEYWORDS = ("axis_shapes", "axis_sizes")  # make_mesh: 0.10's, then 0.11's


@models(api.MAKE_MESH)
def make_mesh(it: ApiContext, c: ApiCall) -> Value:
    behaviour = it.profile.behaviour
    sizes = c.args.get(0, behaviour.make_mesh_sizes_keyword)
    for keyword in _SIZES_KEYWORDS:  # code written for another version reads alike
        if sizes is UNKNOWN and keyword in c.args.kw:
            sizes = c.args.kw[keyword].value
    if argument_kinds.check_shape(it, c, sizes,
                                  c.args.node(0, behaviour.make_mesh_sizes_keyword), "axis_shapes"):
        return UNKNOWN  # JAX raised
    _check_device_count(it, c, int_tuple(sizes), exact=False)
    return _mesh(it, c, int_tuple(sizes), AxisType(behaviour.make_mesh_axis_type))


@models(api.MESH)
def mesh(it: ApiContext, c: ApiCall) -> Value:
    dev = c.args.get(0, "devices")
    if argument_kinds.check_devices(it, c, dev, c.args.node(0, "devices"),
                                    c.args.get(1, "axis_names")):
        return UNKNOWN
    return _mesh(it, c, dev.shape if isinstance(dev, ArrayVal) else None,
                 AxisType(it.profile.behaviour.mesh_axis_type))


@models(api.ABSTRACT_MESH)
def abstract_mesh(it: ApiContext, c: ApiCall) -> Value:
    if argument_kinds.check_shape(it, c, c.args.get(0, "axis_sizes"),
                                  c.args.node(0, "axis_sizes"), "axis_sizes"):
        return UNKNOWN
    return _mesh(it, c, int_tuple(c.args.get(0, "axis_sizes")),
                 AxisType(it.profile.behaviour.abstract_mesh_axis_type))


@models(api.CREATE_DEVICE_MESH)
def create_device_mesh(it: ApiContext, c: ApiCall) -> Value:
    if argument_kinds.check_shape(it, c, c.args.get(0, "mesh_shape"),
                                  c.args.node(0, "mesh_shape"), "mesh_shape"):
        return UNKNOWN
    shape = int_tuple(c.args.get(0, "mesh_shape"))
    _check_device_count(it, c, shape, exact=True)
    return ArrayVal(shape, node=c.node)


def _check_device_count(it: ApiContext, c: ApiCall, sizes: Optional[Tuple[Optional[int], ...]],
                        exact: bool) -> None:
    """make_mesh takes the first prod(sizes) devices, so it needs at least that many;
    create_device_mesh needs exactly that many (both unless given devices=)."""
    if sizes is None or None in sizes or c.args.given(1 if exact else 3, "devices") \
            or it.scale_mesh is not None:
        return
    setup = device_setup(it.module)
    if setup is None:
        return
    needed = math.prod(sizes)  # type: ignore[arg-type]  # None excluded above
    if needed > setup.count or (exact and needed != setup.count):
        it.prove(MeshDeviceCount(c.name, tuple(sizes), setup.count, setup.how,  # type: ignore[arg-type]  # None excluded
                                 setup.cpu_pinned), c.args.node(0, "axis_shapes") or c.node)


@models(*api.MESH_CONTEXTS)
def mesh_context(it: ApiContext, c: ApiCall) -> Value:
    return MeshContextVal(c.args.get(0, "mesh"), sets_now=c.name == api.SET_MESH)


def _mesh(it: ApiContext, c: ApiCall, sizes: Optional[Tuple[Optional[int], ...]],
          default_type: AxisType) -> Value:
    """All three constructors take (sizes or devices, axis_names, axis_types)."""
    names = str_tuple(c.args.get(1, "axis_names"))
    if names is not None and None in names:
        names = None
    types_v = c.args.get(2, "axis_types")
    types: Optional[Tuple[AxisType, ...]]
    if not c.args.given(2, "axis_types") or (isinstance(types_v, Const) and types_v.value is None):
        types = (default_type,) * len(names) if names is not None else None
    elif argument_kinds.check_axis_types(it, c, types_v, c.args.node(2, "axis_types"), names):
        return UNKNOWN  # JAX raised
    else:
        types = _axis_types(types_v)
    if sizes is not None and names is not None and len(sizes) != len(names):
        sizes = None
    origin = c.short
    if names is not None and (sizes is None or None in sizes):
        declared = it.config_meshes.get(tuple(n for n in names if n is not None))
        if declared is not None:
            sizes = declared.sizes
            origin = declared.origin
    if it.scale_mesh is not None and names is not None:
        old = dict(zip(names, types)) if types is not None else None
        names, sizes = it.scale_mesh.names, it.scale_mesh.sizes
        types = (tuple(old.get(a, AxisType.Explicit) for a in names or ())
                 if old is not None else None)
        origin = it.scale_mesh.origin
    made = MeshVal(names, sizes, types, c.node, origin)  # type: ignore[arg-type]  # names has no None here
    it.record("meshes", MeshMade(made, c.node, c.args.node(1, "axis_names"), c.name))  # type: ignore[arg-type]  # a Call node
    return made


def _axis_types(v: Value) -> Optional[Tuple[AxisType, ...]]:
    """The types of ``axis_types=`` (already checked: JAX takes anything but a tuple as a
    tuple of one)."""
    def one(x: Value) -> Optional[AxisType]:
        # the public enum, or the module that defines it (``jax._src.mesh.AxisType``)
        if isinstance(x, QualName) and x.name.rsplit(".", 2)[-2:-1] == ["AxisType"]:
            return _AXIS_TYPES.get(x.name.rsplit(".", 1)[-1])
        return None
    out = tuple(one(i) for i in v.items) if isinstance(v, TupleVal) else (one(v),)
    return None if None in out else out  # type: ignore[return-value]  # None excluded


@attribute_of(MeshVal)
def mesh_attribute(it: ApiContext, base: Value, attr: str, node: cst.CSTNode,
                   ctx: MeshCtx) -> Value:
    assert isinstance(base, MeshVal)
    if attr == "axis_names" and base.names is not None:
        return TupleVal(tuple(Const(n) for n in base.names))
    if attr == "shape" and base.names is not None and base.sizes is not None:
        return DictVal(tuple((n, Const(s) if s is not None else UNKNOWN)
                             for n, s in zip(base.names, base.sizes)))
    if attr == "abstract_mesh":  # the same mesh to every check here
        return base
    if attr == "axis_sizes" and base.sizes is not None:
        return TupleVal(tuple(Const(s) if s is not None else UNKNOWN for s in base.sizes))
    if attr == "size" and base.sizes is not None and None not in base.sizes:
        n = 1
        for s in base.sizes:
            n *= s  # type: ignore[operator]  # None excluded above
        return Const(n)
    return UNKNOWN


def _inside(ctx: MeshCtx, mesh: MeshVal, abstract: bool = True) -> MeshCtx:
    return MeshCtx(known=True, mesh=mesh, bound_axes=ctx.bound_axes,
                   manual_axes=ctx.manual_axes, shard_map=ctx.shard_map, eager=ctx.eager,
                   abstract=abstract, logical_rules=ctx.logical_rules)


@hook("enter")
def enter(it: ApiContext, v: Value, node: cst.CSTNode, ctx: MeshCtx) -> Optional[MeshCtx]:
    """``with jax.set_mesh(m):`` and the legacy ``with mesh:`` set the context mesh."""
    if isinstance(v, MeshContextVal):
        return _inside(ctx, v.mesh) if isinstance(v.mesh, MeshVal) else UNKNOWN_CTX
    if isinstance(v, MeshVal):
        auto = v.types is not None and all(t == AxisType.Auto for t in v.types)
        it.record("api_uses", ApiUse("jax.sharding.Mesh.__enter__", node, "with",
                                     "auto" if auto else ""))
        return _inside(ctx, v, abstract=False)
    return enter_rules(it, v, ctx)  # flax's ``with nn.logical_axis_rules(rules):``


@hook("statement")
def statement(it: ApiContext, v: Value, ctx: MeshCtx) -> Optional[MeshCtx]:
    """``jax.set_mesh(mesh)`` as a statement: the mesh is set from here on."""
    if not isinstance(v, MeshContextVal):
        return enter_rules(it, v, ctx)  # flax's ``nn.set_logical_axis_rules(rules)``
    m = v.mesh if isinstance(v.mesh, MeshVal) else None
    if m is not None:
        it.set_module_mesh(m)
    return _inside(ctx, m) if m is not None else UNKNOWN_CTX


# -- meshes that must be one -----------------------------------------------------------------
def check_meshes(it: ApiContext, node: cst.CSTNode, values: Iterable[Value], ctx: MeshCtx,
                 what: str) -> bool:
    """An operation on ``values`` under ``ctx``: JAX requires its operands on one mesh, and
    that mesh to be the context mesh ``jax.set_mesh`` set (when one is). True where it
    proved they are not: JAX raises there, so the operation's result is unknown (what it
    feeds is never reached, and no finding follows from it)."""
    arrays = [v for v in values if isinstance(v, ArrayVal) and v.mesh is not None]
    for a in arrays[1:]:
        assert a.mesh is not None and arrays[0].mesh is not None
        if meshes_differ(arrays[0].mesh, a.mesh):
            it.prove(MeshConflict("operand", arrays[0].mesh, a.mesh, what), node)
            return True
    context = ctx.mesh if ctx.known and ctx.abstract and not ctx.manual_axes else None
    for a in arrays:
        assert a.mesh is not None
        if context is not None and meshes_differ(a.mesh, context):
            it.prove(MeshConflict("context", a.mesh, context, what), node)
            return True
    return False
