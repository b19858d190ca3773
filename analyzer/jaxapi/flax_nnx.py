"""Flax NNX: variables placed by their sharding metadata, the built-in layers whose
parameters they are, and the transforms that run a module's code (``nnx.jit``,
``nnx.grad``).

What flax 0.12.8 does, read from its source:

- ``nnx.with_partitioning(init, sharding, mesh=None, **metadata)``
  (``flax/nnx/spmd.py``) wraps ``init`` so that what it returns is boxed with the
  metadata ``out_sharding=sharding``; a ``Variable`` built from that box (``nnx.Param``,
  or a layer's parameter) takes the metadata.
- ``Variable.__init__`` (``flax/nnx/variablelib.py``) shards its value eagerly
  (``nnx.using_eager_sharding()`` is True by default) with
  ``flax.core.spmd.shard_value``: the names become mesh axes through the logical rules
  in force (``nnx.logical_axis_rules``) and the variable's ``sharding_rules``, a name no
  rule maps being taken as a mesh axis itself; the mesh is the ``mesh=`` metadata, else
  the context mesh (``jax.set_mesh``); on an all-Explicit mesh the value is
  ``jax.sharding.reshard``-ed, on an all-Auto one ``with_sharding_constraint``-ed (its
  type then shows no axes).
- ``nnx.Linear(in, out)``: ``kernel`` of shape ``(in, out)``, ``bias`` of ``(out,)``;
  ``__call__(x, out_sharding=None)`` is ``lax.dot_general`` of x's last dim with the
  kernel's first (the ``out_sharding`` passed on), plus the bias reshaped to
  ``(1, ..., 1, out)``. ``nnx.LinearGeneral(in, out, axis=-1)``: ``kernel`` of shape
  ``(*in, *out)``, contracted with x's ``axis`` dims. ``nnx.Embed(num, features)``:
  ``embedding`` of shape ``(num, features)``; ``__call__(ids)`` is
  ``jnp.take(embedding, ids, axis=0)`` (with ``out_sharding``: under
  ``jax.sharding.auto_axes``, placed as it says); ``attend(q, out_sharding=None)`` is
  ``jnp.dot(q, embedding.T, out_sharding=...)``. All in ``flax/nnx/nn/linear.py``.
- A ``Variable`` is an ``NnxVariable`` holding its value (read by ``.value``); a layer
  is an ``NnxLayer`` holding its parameters' values.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, List, Optional, Tuple

import libcst as cst

from sharding_types import AxisType

from . import names as api
from .. import logical_axes as la
from .. import ops
from .. import transfer as tr
from ..events import MeshCtx, NeedsMesh, SpecUse
from ..interp.state import Arg, GradVal
from ..values import (UNKNOWN, ArrayVal, Const, InstanceVal, JitVal, MeshVal, PartialVal,
                      PytreeNodeVal, QualName, SpecVal, TupleVal, Value, const_int, int_tuple)
from ..api import ApiCall, ApiContext, attribute_of, calls, get_hook, index_of, method_of, models
from .logical import (LogicalResolution, context_rules, names_of, rules_of, spec_entries,
                      unboxed_shape)
from .initializers import default_dtype
from .specs import out_sharding_fn, spec_dims

# Not the pre-check's vocabulary: NNX's layers, transforms and states place nothing by
# themselves; its names that do spell the vocabulary (`with_partitioning`,
# `get_partition_spec`, `get_named_sharding`, the sharding keywords of `nnx.Param`)
MAKES_SHARDINGS = False


# -- sharding metadata ---------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class NnxInitializer(Value):
    """``nnx.with_partitioning(init, sharding, mesh=None, **metadata)``: an initializer
    whose result carries the variable metadata ``out_sharding=sharding``."""

    sharding: Value
    names_node: Optional[cst.CSTNode]
    mesh: Optional[Value] = None  # the mesh= metadata, when given
    rules: Optional[Value] = None  # the sharding_rules= metadata, when given
    dtype: Optional[str] = None  # the wrapped initializer's default dtype, when known


@dataclass(frozen=True, eq=False)
class NnxBoxed(Value):
    """What an ``NnxInitializer`` returns (flax's ``VariableMetadata``): the raw value
    and the metadata a Variable built from it takes."""

    value: Value
    init: NnxInitializer


@models("flax.nnx.with_partitioning", "flax.nnx.spmd.with_partitioning")
def with_partitioning(it: ApiContext, c: ApiCall) -> Value:
    sharding = c.args.get(1, "sharding")
    _site(it, c, sharding, c.args.node(1, "sharding") or c.node, None)
    it.pass_functions(c.args.args, c.ctx)
    return NnxInitializer(sharding, c.args.node(1, "sharding"), _metadata(c, "mesh"),
                          _metadata(c, "sharding_rules"),
                          default_dtype(c.args.get(0, "initializer")))


def _metadata(c: ApiCall, key: str) -> Optional[Value]:
    """The metadata ``key=`` given at ``c``; None where not given, unknown where a
    ``**kwargs`` may give it."""
    given = c.args.kw.get(key)
    if given is not None:
        return given.value
    return UNKNOWN if c.args.starred else None


@calls(NnxInitializer)
def call_initializer(it: ApiContext, callee: Value, c: ApiCall) -> Value:
    """``init(key, shape, dtype=...)``: the raw value (its sharding unknown: the wrapped
    initializer may be any function; its dtype the one given, or a known initializer's
    default), boxed with the metadata."""
    assert isinstance(callee, NnxInitializer)
    shape = int_tuple(c.args.get(1, "shape"))
    dtype = ops.dtype_of(c.args.get(2, "dtype")) if c.args.given(2, "dtype") else callee.dtype
    return NnxBoxed(ArrayVal(shape, node=c.node, dtype=dtype, dims=None), callee)


@dataclass(frozen=True, eq=False)
class NnxVariable(Value):
    """An ``nnx.Variable`` (``nnx.Param``): not an array itself (``jax.typeof`` does not
    type it); ``.value`` reads the array it holds."""

    value: Value


@attribute_of(NnxVariable)
def variable_attribute(it: ApiContext, base: Value, attr: str, node: cst.CSTNode,
                       ctx: MeshCtx) -> Value:
    assert isinstance(base, NnxVariable)
    return base.value if attr == "value" else UNKNOWN


@index_of(NnxVariable)
def variable_index(it: ApiContext, base: Value, e: cst.Subscript, env: Any,
                   ctx: MeshCtx) -> Optional[Value]:
    """``param[...]``, ``param[i]``: flax 0.12.8's ``Variable.__getitem__`` indexes the
    value it holds."""
    assert isinstance(base, NnxVariable)
    if not isinstance(base.value, ArrayVal):
        return None
    return get_hook("index")(it, base.value, e, env, ctx)


@models(*api.NNX_VARIABLES)
def variable(it: ApiContext, c: ApiCall) -> Value:
    """``nnx.Param(value, **metadata)``: the value as the Variable shards it eagerly."""
    value = c.args.get(0, "value")
    for key in api.NNX_SHARDING_KEYS:
        a = c.args.kw.get(key)
        if a is not None:
            shape = value.shape if isinstance(value, ArrayVal) else None
            _site(it, c, a.value, a.node or c.node, shape)
            init = NnxInitializer(a.value, a.node, _metadata(c, "mesh"),
                                  _metadata(c, "sharding_rules"))
            return NnxVariable(shard_value(it, c.ctx, c.node, _raw(value), init, "nnx.Param",
                                           at=a.node or c.node))
    it.pass_functions(c.args.args, c.ctx)
    if isinstance(value, NnxBoxed):
        return NnxVariable(shard_value(it, c.ctx, c.node, value.value, value.init, "nnx.Param"))
    return NnxVariable(value if isinstance(value, ArrayVal) and not c.args.kw else UNKNOWN)


def _raw(v: Value) -> Value:
    return v.value if isinstance(v, NnxBoxed) else v


def _site(it: ApiContext, c: ApiCall, sharding: Value, node: cst.CSTNode,
          shape: Optional[Tuple[Optional[int], ...]]) -> None:
    """The names resolved where they are written (the ``LogicalResolution`` fact and,
    on a known mesh, the spec's use there)."""
    names = names_of(sharding)
    context = context_rules(it, c.ctx)
    local_v = c.args.kw.get("sharding_rules")
    local = rules_of(local_v.value) if local_v is not None else None
    if names is None or context is None or (local_v is not None and local is None) or \
            (local_v is None and c.args.starred):  # **kwargs may give the rules
        return
    try:
        entries = la.nnx_var_pspec(names, context, local)
    except la.LogicalAxisError:
        return
    table = dict(la.composite_rules(context, local or ()))
    unmatched = tuple(n for n in names if isinstance(n, str) and n not in table)
    mesh = c.args.kw.get("mesh")
    on_mesh = mesh.value if mesh is not None and isinstance(mesh.value, MeshVal) \
        else it.context_mesh(c.ctx)
    it.prove(LogicalResolution("nnx", c.name, names, entries, unmatched,
                               tuple(table.items()), on_mesh, shape), node)
    if on_mesh is not None:  # NNX shards the value on it: P(*entries) must be valid there
        spec = SpecVal(spec_entries(entries), node=node)
        it.record("spec_uses", SpecUse(spec, node, f"{c.short}(out_sharding=)", on_mesh,
                                       sharded_shape(it, c.ctx, on_mesh, shape),
                                       from_context=mesh is None))


def sharded_shape(it: ApiContext, ctx: MeshCtx, mesh: MeshVal,
                  shape: Optional[Tuple[Optional[int], ...]]) -> Optional[Tuple[Optional[int], ...]]:
    """The shape a variable's sharding is checked against where flax shards it, or None
    (unchecked). On a mesh whose axes are all Explicit JAX rejects an indivisible dim
    eagerly and traced alike; on Auto axes the sharding is a constraint, which raises
    IndivisibleError only eagerly (flax 0.12.8 / JAX 0.10.2: ``nnx.Param(x (32, 1),
    out_sharding=(None, 'model'))`` on a ``model: 4`` mesh raises in plain code, not
    under ``nnx.jit``), so there the shape is checked only where no call in view may
    trace it (as Linen's unboxing, ``logical.unboxed_shape``)."""
    if mesh.types is not None and all(t == AxisType.Explicit for t in mesh.types):
        return shape
    return unboxed_shape(it, ctx, shape)


NO_MESH_RAISES = ("Flax NNX raises ValueError (\"An auto mesh context or metadata is required "
                  "if creating a variable with annotation out_sharding=...\")")


def legacy_mesh_note(ctx: MeshCtx) -> str:
    """Why a mesh context in force is none for Flax NNX: only the legacy ``with mesh:``
    can be (NNX reads the mesh ``jax.set_mesh`` sets)."""
    return " (the legacy `with mesh:` around it sets no mesh that Flax NNX reads)" \
        if ctx.mesh is not None else ""


def _eager(it: ApiContext) -> bool:
    """Whether variables are sharded when made: flax's default, unless the module turns
    eager sharding off somewhere (``nnx.use_eager_sharding(False)``, a variable's
    ``eager_sharding=False``), which the analysis does not follow."""
    return bool(it.memo(("nnx eager sharding", id(it.module)),
                        lambda: "eager_sharding" not in it.module.code))


def shard_value(it: ApiContext, ctx: MeshCtx, node: cst.CSTNode, value: Value,
                init: NnxInitializer, where: str, at: Optional[cst.CSTNode] = None) -> Value:
    """``value`` as a Variable with ``init``'s metadata holds it (``core.spmd.shard_value``):
    resharded onto its spec on an Explicit mesh; its type unknown where anything
    deciding it is. The spec is checked against the shape here (where flax shards it),
    reported at ``at`` (the metadata written at the call: one finding with its own
    check there), else at ``node``."""
    if not isinstance(value, ArrayVal):
        return UNKNOWN
    unknown = replace(value, dims=None, spec=None, node=node)
    names = names_of(init.sharding)
    if isinstance(init.sharding, Const) and init.sharding.value is None or names == ():
        return value  # no sharding metadata: the value as made
    context = context_rules(it, ctx)
    local = rules_of(init.rules) if init.rules is not None else None
    if names is None or context is None or (init.rules is not None and local is None) \
            or not _eager(it):
        return unknown
    no_metadata = init.mesh is None or (isinstance(init.mesh, Const) and init.mesh.value is None)
    if no_metadata:
        unknown = _needs_mesh_later(it, unknown, names)
    if no_metadata and ctx.known and ctx.eager and (ctx.mesh is None or not ctx.abstract) \
            and any(n is not None for n in names):
        # flax reads the mesh jax.set_mesh sets (the legacy `with mesh:` sets none for it)
        it.record("needs_mesh", NeedsMesh(
            at or node, f"{where} is made with the sharding names {tuple(names)} and no "
            f"`mesh=` metadata{legacy_mesh_note(ctx)}", replace(ctx, mesh=None),
            NO_MESH_RAISES))
        return unknown
    mesh = init.mesh if isinstance(init.mesh, MeshVal) else \
        it.context_mesh(ctx) if no_metadata else None
    try:
        entries = la.nnx_var_pspec(names, context, local)
    except la.LogicalAxisError:
        return unknown
    if mesh is None or mesh.names is None or value.shape is None:
        return unknown
    spec = SpecVal(spec_entries(entries))
    axes = spec.axis_names()
    if all(isinstance(e, (tuple, type(None))) for e in spec.entries) \
            and all(a in mesh.names for a in axes) and len(set(axes)) == len(axes):
        # the names are valid on the mesh (else they are reported where written): the
        # shape must divide, checked where flax shards the value
        it.record("spec_uses", SpecUse(spec, node, f"{where} variable", mesh,
                                       sharded_shape(it, ctx, mesh, value.shape),
                                       from_context=init.mesh is None, at=at or node))
    if mesh.types is None or len(set(mesh.types)) != 1 or mesh.types[0] == AxisType.Manual:
        return unknown  # mixed axis types: flax raises; unknown types: unknown
    dims = spec_dims(spec, mesh, len(value.shape), ctx)
    made = ArrayVal(value.shape, mesh, spec, node, value.varying, dtype=value.dtype,
                    weak=False, dims=dims)
    return _needs_mesh_later(it, made, names) if no_metadata else made


def _needs_mesh_later(it: ApiContext, value: ArrayVal, names: tuple) -> ArrayVal:
    """Note ``value`` as a variable's made from sharding ``names`` with no ``mesh=``
    metadata: a copy of it made later (an optimizer's moments) reads the mesh from the
    context again (``names_without_mesh``)."""
    it.memo(_NAMES_WITHOUT_MESH, dict)[id(value)] = (value, names)
    return value


_NAMES_WITHOUT_MESH = ("nnx variables with sharding names and no mesh metadata",)


def names_without_mesh(it: ApiContext, value: Value) -> Optional[tuple]:
    """The sharding names of a variable ``value`` holds, made with no ``mesh=`` metadata
    (``_needs_mesh_later``); None for any other value."""
    made = it.memo(_NAMES_WITHOUT_MESH, dict).get(id(value))
    return made[1] if made is not None and made[0] is value else None


# -- layers --------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class NnxLayer(Value):
    """An instance of one of Flax NNX's built-in layers: its parameters (each the array
    its Variable holds, or Const(None) for a missing bias) and the constructor's
    arguments its call reads."""

    kind: str  # "Linear", "LinearGeneral", "Embed", "LayerNorm", "RMSNorm"
    params: Tuple[Tuple[str, Value], ...]
    config: Tuple[Tuple[str, Any], ...] = ()
    node: Optional[cst.CSTNode] = None

    def param(self, name: str) -> Value:
        return dict(self.params).get(name, UNKNOWN)

    def option(self, name: str) -> Any:
        return dict(self.config).get(name)


_FLOAT32 = "float32"


def _make_param(it: ApiContext, c: ApiCall, init_key: str, shape: Optional[Tuple[Optional[int], ...]],
                default_placed: bool) -> Value:
    """A layer's parameter of ``shape``, made by the ``init_key`` initializer: boxed by
    ``nnx.with_partitioning``, placed by its metadata; the default initializer's
    (``default_placed``: a ``jax.random`` sample, replicated on the context mesh);
    another one's: its sharding unknown."""
    param_dtype = c.args.kw.get("param_dtype")
    dtype = ops.dtype_of(param_dtype.value) if param_dtype is not None else _FLOAT32
    if shape is None:
        return UNKNOWN
    raw = ArrayVal(shape, node=c.node, dtype=dtype, dims=None)
    given = c.args.kw.get(init_key)
    if given is None:
        if not default_placed or not c.ctx.known:
            return raw
        return ArrayVal(shape, it.context_mesh(c.ctx), None, c.node, dtype=dtype,
                        dims=((),) * len(shape))
    if isinstance(given.value, NnxInitializer):
        return shard_value(it, c.ctx, c.node, raw, given.value, f"nnx.{c.short} {init_key[:-5]}")
    return raw


def _features(v: Value) -> Optional[Tuple[Optional[int], ...]]:
    return int_tuple(v)


_UNFOLLOWED = ("dot_general", "dot_general_cls", "promote_dtype", "preferred_element_type",
               "kernel_metadata", "bias_metadata", "embedding_metadata", "batch_axis",
               "precision")


@models("flax.nnx.Linear", "flax.nnx.nn.linear.Linear")
def linear(it: ApiContext, c: ApiCall) -> Value:
    n_in, n_out = const_int(c.args.get(0, "in_features")), const_int(c.args.get(1, "out_features"))
    return _dense(it, c, (n_in,), (n_out,), (-1,))


@models("flax.nnx.LinearGeneral", "flax.nnx.nn.linear.LinearGeneral")
def linear_general(it: ApiContext, c: ApiCall) -> Value:
    axis = int_tuple(c.args.kw["axis"].value) if "axis" in c.args.kw else (-1,)
    return _dense(it, c, _features(c.args.get(0, "in_features")),
                  _features(c.args.get(1, "out_features")), axis)


def _dense(it: ApiContext, c: ApiCall, n_in: Optional[tuple], n_out: Optional[tuple],
           axis: Optional[tuple]) -> Value:
    it.pass_functions(c.args.args, c.ctx)
    if c.args.starred or n_in is None or n_out is None or axis is None \
            or None in n_in or None in n_out or len(axis) != len(n_in):
        return UNKNOWN
    use_bias = c.args.kw.get("use_bias")
    bias_on = use_bias is None or (isinstance(use_bias.value, Const) and use_bias.value.value)
    if use_bias is not None and not isinstance(use_bias.value, Const):
        return UNKNOWN
    kernel = _make_param(it, c, "kernel_init", n_in + n_out, True)
    # the default bias init is zeros: replicated on the context mesh
    bias = _make_param(it, c, "bias_init", n_out, True) if bias_on else Const(None)
    return NnxLayer(c.short, (("kernel", kernel), ("bias", bias)),
                    _options(c) + (("axis", axis), ("in", n_in), ("out", n_out)), c.node)


@models("flax.nnx.Embed", "flax.nnx.nn.linear.Embed")
def embed(it: ApiContext, c: ApiCall) -> Value:
    it.pass_functions(c.args.args, c.ctx)
    num, features = const_int(c.args.get(0, "num_embeddings")), const_int(c.args.get(1, "features"))
    if c.args.starred or num is None or features is None:
        return UNKNOWN
    # the default init (variance_scaling, a jax.random sample) is replicated on the context
    # mesh: flax 0.12.8 / JAX 0.10.2 type nnx.Embed(8, 16)'s table float32[8,16] there
    table = _make_param(it, c, "embedding_init", (num, features), True)
    return NnxLayer("Embed", (("embedding", table),),
                    _options(c) + (("num_embeddings", num), ("features", features)), c.node)


_NORMS = {"flax.nnx.LayerNorm": "LayerNorm", "flax.nnx.nn.normalization.LayerNorm": "LayerNorm",
          "flax.nnx.RMSNorm": "RMSNorm", "flax.nnx.nn.normalization.RMSNorm": "RMSNorm"}
# keywords that change what the norm computes over (or how): its result is not followed
_NORM_UNFOLLOWED = ("reduction_axes", "feature_axes", "axis_name", "axis_index_groups",
                    "use_fast_variance", "scale_metadata", "bias_metadata")


@models(*_NORMS)
def norm(it: ApiContext, c: ApiCall) -> Value:
    """``nnx.LayerNorm(num_features)`` / ``nnx.RMSNorm(num_features)``: a ``scale`` of
    ones (and LayerNorm's ``bias`` of zeros, unless ``use_bias=False``), each of shape
    ``(num_features,)`` and replicated on the context mesh by the default initializers."""
    it.pass_functions(c.args.args, c.ctx)
    n = const_int(c.args.get(0, "num_features"))
    kind = _NORMS[c.name]
    if c.args.starred or n is None:
        return UNKNOWN
    use_bias = c.args.kw.get("use_bias")
    bias_on = kind == "LayerNorm" and (use_bias is None or (
        isinstance(use_bias.value, Const) and use_bias.value.value))
    if use_bias is not None and not isinstance(use_bias.value, Const):
        return UNKNOWN
    scale = _make_param(it, c, "scale_init", (n,), True)
    bias = _make_param(it, c, "bias_init", (n,), True) if bias_on else Const(None)
    unfollowed = any(k in c.args.kw for k in _NORM_UNFOLLOWED)
    return NnxLayer(kind, (("scale", scale), ("bias", bias)),
                    _options(c) + (("unfollowed", True),) * unfollowed, c.node)


def _normalize(it: ApiContext, callee: NnxLayer, c: ApiCall, x: Value) -> Value:
    """``LayerNorm``/``RMSNorm.__call__`` over the last dim: statistics reduced over it
    (kept as a dim of 1), the input scaled by them, by ``scale`` and shifted by ``bias``
    (flax/nnx/nn/normalization.py, ``_normalize``); in the layer's ``dtype`` or the
    operands' promoted one."""
    scale, bias = callee.param("scale"), callee.param("bias")
    if not isinstance(x, ArrayVal) or not tr.rank(x) or not isinstance(scale, ArrayVal):
        return UNKNOWN
    binop = get_hook("binop")
    stat = it.call_api("jax.numpy.mean", c.node, [_arg(x), _arg(Const(-1), keyword="axis"),
                                                   _arg(Const(True), keyword="keepdims")],
                       c.env, c.ctx)
    y = binop(it, "Subtract" if callee.kind == "LayerNorm" else "Multiply", x, stat, c.node, c.ctx)
    y = binop(it, "Multiply", y, scale, c.node, c.ctx)
    if isinstance(bias, ArrayVal):
        y = binop(it, "Add", y, bias, c.node, c.ctx)
    dtype = callee.option("dtype")
    if isinstance(y, ArrayVal) and dtype is not None and not (
            isinstance(dtype, Const) and dtype.value is None):
        y = replace(y, dtype=ops.dtype_of(dtype), weak=False)
    return y


def _options(c: ApiCall) -> Tuple[Tuple[str, Any], ...]:
    dtype = c.args.kw.get("dtype")
    unfollowed = any(k in c.args.kw for k in _UNFOLLOWED)
    return (("dtype", dtype.value if dtype is not None else None), ("unfollowed", unfollowed))


@attribute_of(NnxLayer)
def layer_attribute(it: ApiContext, base: Value, attr: str, node: cst.CSTNode,
                    ctx: MeshCtx) -> Value:
    assert isinstance(base, NnxLayer)
    for k, v in base.params:
        if k == attr:
            return v if isinstance(v, Const) else NnxVariable(v)  # a missing bias: None
    if attr in ("num_embeddings", "features"):
        n = base.option(attr)
        return Const(n) if isinstance(n, int) else UNKNOWN
    return UNKNOWN


@calls(NnxLayer)
def call_layer(it: ApiContext, callee: Value, c: ApiCall) -> Value:
    assert isinstance(callee, NnxLayer)
    if c.args.starred or callee.option("unfollowed"):
        return UNKNOWN
    x = c.args.get(0, "inputs" if callee.kind in ("Linear", "LinearGeneral", "Embed") else "x")
    if callee.kind == "Embed":
        return _lookup(it, callee, c, x)
    if callee.kind in ("LayerNorm", "RMSNorm"):
        return _normalize(it, callee, c, x) if len(c.args.args) == 1 else UNKNOWN
    return _project(it, callee, c, x)


def _arg(v: Value, node: Optional[cst.CSTNode] = None, keyword: Optional[str] = None) -> Arg:
    return Arg(keyword, "", v, node)


def _ints(xs: Tuple[int, ...]) -> TupleVal:
    return TupleVal(tuple(Const(i) for i in xs))


def _promoted(callee: NnxLayer, *xs: Value) -> Optional[List[ArrayVal]]:
    """The operands as the layer's ``promote_dtype`` gives them: a common dtype (the
    layer's ``dtype=`` where given); unknown dtypes where the analysis cannot tell."""
    arrays = [x for x in xs if isinstance(x, ArrayVal)]
    if len(arrays) != len(xs):
        return None
    dtype = callee.option("dtype")
    if dtype is not None and not (isinstance(dtype, Const) and dtype.value is None):
        target = ops.dtype_of(dtype)
    else:
        kinds = {a.dtype for a in arrays}
        target = arrays[0].dtype if len(kinds) == 1 else None
    return [a if a.dtype == target else replace(a, dtype=target, weak=False) for a in arrays]


def _project(it: ApiContext, callee: NnxLayer, c: ApiCall, x: Value) -> Value:
    """``Linear``/``LinearGeneral.__call__``: ``lax.dot_general`` over the layer's
    ``axis`` dims, then the bias."""
    kernel, bias = callee.param("kernel"), callee.param("bias")
    rank = tr.rank(x) if isinstance(x, ArrayVal) else None
    axis = callee.option("axis")
    n_out = callee.option("out")
    promoted = _promoted(callee, x, kernel)
    if rank is None or promoted is None:
        return UNKNOWN
    x, kernel = promoted
    if any(not isinstance(a, int) or not -rank <= a < rank for a in axis):
        return UNKNOWN
    axes = tuple(a % rank for a in axis)
    dims = TupleVal((TupleVal((_ints(axes), _ints(tuple(range(len(axes)))))),
                     TupleVal((_ints(()), _ints(())))))
    args = [_arg(x, c.args.node(0, "inputs")), _arg(kernel), _arg(dims)]
    out_sharding = c.args.kw.get("out_sharding")
    if out_sharding is not None:
        args.append(Arg("out_sharding", "", out_sharding.value, out_sharding.node))
    y = it.call_api("jax.lax.dot_general", c.node, args, c.env, c.ctx)
    if isinstance(bias, Const) and bias.value is None:
        return y
    if not isinstance(y, ArrayVal) or not isinstance(bias, ArrayVal) or tr.rank(y) is None:
        return UNKNOWN
    kept = (1,) * (rank - len(axes))
    shaped = it.call_api("jax.numpy.reshape", c.node,
                         [_arg(bias), _arg(_ints(kept + tuple(n_out)))], c.env, c.ctx)
    return get_hook("binop")(it, "Add", y, shaped, c.node, c.ctx)


def _lookup(it: ApiContext, callee: NnxLayer, c: ApiCall, ids: Value) -> Value:
    """``Embed.__call__``: ``jnp.take(embedding, ids, axis=0)``; with ``out_sharding``,
    under ``auto_axes``, the result placed as it says."""
    table = callee.param("embedding")
    features = callee.option("features")
    if callee.option("num_embeddings") == 1 or not isinstance(table, ArrayVal) \
            or not isinstance(ids, ArrayVal) or tr.rank(ids) is None:
        return UNKNOWN
    if ids.dtype is not None and (tr.is_inexact(ids.dtype) or ids.dtype == "bool"):
        return UNKNOWN  # flax raises ValueError: not an integer input
    dtype = callee.option("dtype")
    out_dtype = ops.dtype_of(dtype) if dtype is not None and not (
        isinstance(dtype, Const) and dtype.value is None) else table.dtype
    out = c.args.kw.get("out_sharding")
    if out is not None and not (isinstance(out.value, Const) and out.value.value is None):
        shape = ids.shape + (features,) if ids.shape is not None else None
        rank = len(shape) if shape is not None else None
        placed = out_sharding_fn(c.ctx)(out.value, rank)
        dims = placed[0] if placed is not None and not placed[1] else None
        return ArrayVal(shape, it.context_mesh(c.ctx), None, c.node, ids.varying,
                        dtype=out_dtype, dims=dims)
    res = it.infer(c.node, _take_rows, table, ids, c.node, not c.ctx.eager,
                   it.sizes(c.ctx, table), fallback=UNKNOWN)
    return replace(res, dtype=out_dtype) if isinstance(res, ArrayVal) else res


def _take_rows(table: ArrayVal, ids: ArrayVal, node: cst.CSTNode, traced: bool,
               sizes: Any) -> ArrayVal:
    """``table[ids]`` (``jnp.take(table, ids, axis=0)`` gathers the same way)."""
    return replace(tr.indexing.index(table, [("array", ids)], traced, sizes), node=node)


@method_of(NnxLayer)
def layer_method(it: ApiContext, base: Value, c: ApiCall) -> Optional[Value]:
    """``Embed.attend(q, out_sharding=None)``: ``jnp.dot(q, embedding.T, ...)``."""
    assert isinstance(base, NnxLayer)
    if base.kind != "Embed" or c.name != "attend" or c.args.starred or base.option("unfollowed"):
        return UNKNOWN
    table = base.param("embedding")
    q = c.args.get(0, "query")
    promoted = _promoted(base, q, table)
    if promoted is None:
        return UNKNOWN
    q, table = promoted
    args = [_arg(q, c.args.node(0, "query")), _arg(replace(tr.layout.transpose(table, None),
                                                          node=c.node))]
    out = c.args.kw.get("out_sharding")
    if out is not None:
        args.append(Arg("out_sharding", "", out.value, out.node))
    return it.call_api("jax.numpy.dot", c.node, args, c.env, c.ctx)


# -- transforms ----------------------------------------------------------------------------------
NNX_JITS = ("flax.nnx.jit", "flax.nnx.transforms.compilation.jit")
api.DECORATOR_CALLS.update(NNX_JITS)


@models(*NNX_JITS)
def jit(it: ApiContext, c: ApiCall) -> Value:
    """``nnx.jit(f)`` traces ``f`` as ``jax.jit`` does, its modules' arrays as the
    arguments; with ``in_shardings``/``out_shardings`` (which apply to the modules'
    states too) the call is not followed."""
    f = c.args.get(0, "fun")
    kw = c.args.kw
    if f is UNKNOWN and not c.args.pos:  # @nnx.jit(static_argnums=...)
        return PartialVal(QualName(c.name), (), tuple((k, a.value) for k, a in kw.items()))
    if any(k in kw for k in ("in_shardings", "out_shardings")) or c.args.starred:
        it.pass_functions(c.args.args, c.ctx)
        return UNKNOWN
    options = tuple((k, a.value, a.node or c.node) for k, a in kw.items())
    return JitVal(f, c.node, None, options)


@models("flax.nnx.grad", "flax.nnx.value_and_grad",
        "flax.nnx.transforms.autodiff.grad", "flax.nnx.transforms.autodiff.value_and_grad")
def grad(it: ApiContext, c: ApiCall) -> Value:
    """``nnx.grad(f)`` / ``nnx.value_and_grad(f)``: ``f`` runs on the arguments as under
    ``jax.grad`` (a module's gradient is a State, unknown here)."""
    if not c.args.pos or c.args.starred:
        it.pass_functions(c.args.args, c.ctx)
        return UNKNOWN
    return GradVal(c.args.pos[0], c.short == "value_and_grad", c.args.kw.get("argnums"),
                   c.args.kw.get("has_aux"))


# ``flax.nnx``'s activations are ``jax.nn``'s (flax/nnx/nn/activations.py re-exports them)
NNX_ACTIVATIONS = ("celu", "elu", "gelu", "glu", "hard_sigmoid", "hard_silu", "hard_swish",
                   "hard_tanh", "identity", "leaky_relu", "log_sigmoid", "log_softmax",
                   "logsumexp", "one_hot", "relu", "relu6", "selu", "sigmoid", "silu",
                   "soft_sign", "softmax", "softplus", "standardize", "swish", "tanh")


@models(*(f"flax.nnx.{n}" for n in NNX_ACTIVATIONS))
def activation(it: ApiContext, c: ApiCall) -> Value:
    return it.call_api(f"jax.nn.{c.short}", c.node, c.args.args, c.env, c.ctx)



# -- states --------------------------------------------------------------------------------------
STATE = "nnx.State"


def _module(v: Value) -> bool:
    """A module the source constructed (a source ``nnx.Module`` subclass's instance, or
    a built-in layer)."""
    return isinstance(v, (InstanceVal, NnxLayer))


@models("flax.nnx.split", "flax.nnx.graphlib.split")
def split(it: ApiContext, c: ApiCall) -> Value:
    """``nnx.split(module)``: ``(graphdef, state)``, the state an ``nnx.State`` (with
    filters, one state per filter: not followed)."""
    if len(c.args.args) != 1 or c.args.starred or not _module(c.args.pos[0]):
        return UNKNOWN
    return TupleVal((UNKNOWN, PytreeNodeVal(STATE)))


@models("flax.nnx.state", "flax.nnx.graphlib.state")
def state(it: ApiContext, c: ApiCall) -> Value:
    """``nnx.state(module)``: its ``nnx.State`` (with filters: not followed)."""
    if len(c.args.args) != 1 or c.args.starred or not _module(c.args.pos[0]):
        return UNKNOWN
    return PytreeNodeVal(STATE)


@models("flax.nnx.get_partition_spec", "flax.nnx.spmd.get_partition_spec",
        "flax.nnx.get_named_sharding", "flax.nnx.spmd.get_named_sharding")
def state_shardings(it: ApiContext, c: ApiCall) -> Value:
    """``nnx.get_partition_spec(tree)`` / ``nnx.get_named_sharding(tree, mesh)``: a
    ``jax.tree.map`` over the tree (``flax/nnx/spmd.py``), so a State gives a State."""
    tree = c.args.get(0, "tree")
    if isinstance(tree, PytreeNodeVal) and tree.kind == STATE and not c.args.starred:
        return PytreeNodeVal(STATE)
    return UNKNOWN
