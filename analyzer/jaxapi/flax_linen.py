"""Flax Linen: what a module's ``init`` and ``apply`` run, where they run (eagerly,
under ``jax.jit`` or ``jax.eval_shape``), and the shapes of the built-in layers'
outputs (``nn.Dense``, ``nn.Embed``). The logical-axis APIs are in ``logical``.

What flax 0.12.8 does, read from its source (``flax/linen/module.py``,
``flax/linen/linear.py``):

- ``Module.init(rngs, *args, method=None, mutable=..., **kwargs)`` runs ``method``
  (``__call__`` by default) on a clone of the module bound to a fresh scope, with
  ``args``, and returns the variables it made; ``Module.apply(variables, *args,
  rngs=None, method=None, mutable=False, **kwargs)`` runs it on ``variables`` and
  returns what it returns. Both are plain Python: called under ``jax.jit`` or
  ``jax.eval_shape``, the method's code runs in that trace, under the logical axis
  rules and the mesh in force there.
- ``nn.Dense(features)(x)``: ``x``'s shape with its last dim replaced by ``features``
  (``lax.dot_general`` with a ``(x.shape[-1], features)`` kernel);
  ``nn.Embed(num_embeddings, features)(ids)``: ``ids``' shape plus ``features``
  (``jnp.take`` of the table); an input that is not an integer array raises;
  ``nn.LayerNorm()(x)``/``nn.RMSNorm()(x)``: ``x``'s shape. With the default dtypes
  (float32 parameters, ``dtype=None``) each output is float32.
- ``self.param(name, init, shape)`` (``module_param``): ``init(rng, shape)``.
- Types: where the mesh in force is known and has Auto axes only, no parameter's type
  names an axis, so a layer's output is typed from its input's type; elsewhere its
  sharding is left unknown (the variables may be placed anywhere, Explicit axes too).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, Optional, Tuple

import libcst as cst

from sharding_types import AxisType

from .. import logical_axes as la
from .. import ops
from .. import transfer as tr
from ..events import MeshCtx, SpecUse
from ..values import (UNKNOWN, ArrayVal, ClassVal, Const, FuncVal, InstanceVal, LogicalInit,
                      PartialVal, QualName, SpecVal, Value, const_int, int_tuple)
from ..api import ApiCall, ApiContext, calls, hook, models
from .flax_nnx import NNX_ACTIVATIONS
from .initializers import default_dtype
from .logical import context_rules, record_param_spec, spec_entries, unboxed_shape

# Not the pre-check's vocabulary: Linen's layers and init/apply place nothing by
# themselves; the boxing of their parameters is `logical`'s vocabulary
MAKES_SHARDINGS = False

LINEN_MODULES = ("flax.linen.Module", "flax.linen.module.Module")


def is_linen_class(cls: ClassVal, depth: int = 0) -> bool:
    """Whether a source class derives from ``flax.linen.Module``."""
    if depth > 20:
        return False
    for b in cls.bases:
        if isinstance(b, QualName) and b.name in LINEN_MODULES:
            return True
        if isinstance(b, ClassVal) and is_linen_class(b, depth + 1):
            return True
    return False


@dataclass(frozen=True, eq=False)
class LinenEntry(Value):
    """``module.init`` or ``module.apply`` of an instance of a source Linen module, with
    the module's ``__call__`` bound (None where the class defines none)."""

    instance: InstanceVal
    kind: str  # "init" or "apply"
    call: Optional[Value]


@hook("inherited")
def inherited(it: ApiContext, inst: InstanceVal, attr: str,
              bound: Callable[[str], Optional[Value]]) -> Optional[Value]:
    if attr in ("init", "apply") and is_linen_class(inst.cls):
        return LinenEntry(inst, attr, bound("__call__"))
    return None


# the keyword arguments init/apply keep for themselves (the rest go to the method)
_OPTIONS = ("method", "mutable", "rngs", "capture_intermediates")


@calls(LinenEntry)
def call_entry(it: ApiContext, callee: Value, c: ApiCall) -> Value:
    """``init(rngs, *args)`` / ``apply(variables, *args)``: the module's ``__call__``
    runs on ``args`` in the caller's context (its findings reported in it). ``apply``
    returns what the method returns (``mutable=`` not given); the variables ``init``
    returns are not followed."""
    assert isinstance(callee, LinenEntry)
    it.pass_functions(c.args.args, c.ctx)
    if c.args.starred or not c.args.pos or "method" in c.args.kw or callee.call is None \
            or callee.call is UNKNOWN:
        return UNKNOWN
    args = tuple(c.args.pos[1:])
    kwargs = {k: a.value for k, a in c.args.kw.items() if k not in _OPTIONS}
    it.note_call(callee.call, c.ctx, args, kwargs)
    if callee.kind != "apply" or "mutable" in c.args.kw or "capture_intermediates" in c.args.kw:
        return UNKNOWN
    func: Value = callee.call
    bound: Tuple[Value, ...] = ()
    if isinstance(func, PartialVal):  # the bound method: self first
        if func.kwargs:
            return UNKNOWN
        bound = tuple(func.args)
        func = func.func
    if not isinstance(func, FuncVal):
        return UNKNOWN
    return it.eval_return(func, bound + args, kwargs, c.ctx)


def run_library_callable(it: ApiContext, f: Value, c: ApiCall) -> bool:
    """Run ``f`` (``model.init``, ``model.apply``) as called by ``c`` (whose context is
    the trace it runs in); False where ``f`` is not such a callable."""
    if not isinstance(f, LinenEntry):
        return False
    call_entry(it, f, c)
    return True


# -- layers --------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class LinenLayer(Value):
    """``nn.Dense(features)`` / ``nn.Embed(num_embeddings, features)`` / ``nn.LayerNorm()``
    / ``nn.RMSNorm()``, before its call: its parameters' initializers, where
    ``nn.with_logical_partitioning`` boxed them."""

    kind: str
    features: int
    num: Optional[int] = None  # Embed's num_embeddings
    inits: Tuple[Tuple[str, LogicalInit], ...] = ()
    float32: bool = False  # no dtype=/param_dtype=: the output is float32 (flax's defaults)


_UNFOLLOWED = ("dot_general", "dot_general_cls")


def _boxed_inits(c: ApiCall, *keys: str) -> Tuple[Tuple[str, LogicalInit], ...]:
    out = []
    for key in keys:
        given = c.args.kw.get(key)
        if given is not None and isinstance(given.value, LogicalInit):
            out.append((key[:-5], given.value))
    return tuple(out)


@models("flax.linen.Dense", "flax.linen.linear.Dense")
def dense(it: ApiContext, c: ApiCall) -> Value:
    it.pass_functions(c.args.args, c.ctx)
    features = const_int(c.args.get(0, "features"))
    if features is None or c.args.starred or any(k in c.args.kw for k in _UNFOLLOWED):
        return UNKNOWN
    use_bias = c.args.kw.get("use_bias")
    keys = ("kernel_init", "bias_init") if use_bias is None or (
        isinstance(use_bias.value, Const) and use_bias.value.value is True) else ("kernel_init",)
    return LinenLayer("Dense", features, inits=_boxed_inits(c, *keys), float32=_default_dtypes(c))


@models("flax.linen.Embed", "flax.linen.linear.Embed")
def embed(it: ApiContext, c: ApiCall) -> Value:
    it.pass_functions(c.args.args, c.ctx)
    num = const_int(c.args.get(0, "num_embeddings"))
    features = const_int(c.args.get(1, "features"))
    if num is None or features is None or num == 1 or c.args.starred:
        return UNKNOWN  # one embedding: flax broadcasts it (not a take)
    return LinenLayer("Embed", features, num, _boxed_inits(c, "embedding_init"),
                      float32=_default_dtypes(c))


def _default_dtypes(c: ApiCall) -> bool:
    """Whether the layer keeps flax's dtypes: float32 parameters (``param_dtype``) and
    the computation in their dtype promoted with the input's (``dtype=None``), which for
    any input JAX holds (x64 off) is float32."""
    return not any(k in c.args.kw for k in ("dtype", "param_dtype", "promote_dtype"))


_NORMS = ("flax.linen.LayerNorm", "flax.linen.normalization.LayerNorm", "flax.linen.RMSNorm",
          "flax.linen.normalization.RMSNorm")
# keywords that change what a norm reduces over, or drop its float32 parameters
_NORM_UNFOLLOWED = ("reduction_axes", "feature_axes", "axis_name", "axis_index_groups",
                    "use_scale", "use_bias", "use_fast_variance", "force_float32_reductions")


@models(*_NORMS)
def norm(it: ApiContext, c: ApiCall) -> Value:
    """``nn.LayerNorm()`` / ``nn.RMSNorm()``: over the last dim, with a float32 ``scale``
    (and LayerNorm's ``bias``) of that dim's size; the output has the input's shape."""
    it.pass_functions(c.args.args, c.ctx)
    if c.args.starred or c.args.pos or any(k in c.args.kw for k in _NORM_UNFOLLOWED):
        return UNKNOWN
    return LinenLayer(c.name.rsplit(".", 1)[1], 0, inits=_boxed_inits(c, "scale_init", "bias_init"),
                      float32=_default_dtypes(c))


@calls(LinenLayer)
def call_layer(it: ApiContext, callee: Value, c: ApiCall) -> Value:
    """The layer's parameters made and unboxed (its first call in ``init``), and the
    output's shape; its full type where the mesh in force has Auto axes only and the
    input is unsharded in its type (so are the parameters, and so is the output: JAX
    0.10.2 with flax 0.12.8 on 8 CPU devices), with flax's default dtypes."""
    assert isinstance(callee, LinenLayer)
    x = c.args.get(0, "inputs")
    if c.args.starred or len(c.args.args) != 1 or not isinstance(x, ArrayVal) \
            or x.shape is None:
        return UNKNOWN
    shape: Tuple[Optional[int], ...]
    shapes: Dict[str, Tuple[Optional[int], ...]]
    if callee.kind in ("LayerNorm", "RMSNorm"):
        if not x.shape:
            return UNKNOWN
        shape = x.shape
        shapes = {"scale": (x.shape[-1],), "bias": (x.shape[-1],)}
    elif callee.kind == "Dense":
        if not x.shape:
            return UNKNOWN
        shape = x.shape[:-1] + (callee.features,)
        shapes = {"kernel": (x.shape[-1], callee.features), "bias": (callee.features,)}
    else:
        if x.dtype is not None and (tr.is_inexact(x.dtype) or x.dtype == "bool"):
            return UNKNOWN  # flax raises: the input must be an integer array
        shape = x.shape + (callee.features,)
        shapes = {"embedding": (callee.num, callee.features)}
    for name, init in callee.inits:
        _unbox(it, c, name, init, shapes[name])
    if callee.float32 and _untyped_sharding(it, c, x):
        return ArrayVal(shape, node=c.node, varying=x.varying, weak=False, dtype="float32",
                        dims=((),) * len(shape))
    return ArrayVal(shape, node=c.node, varying=x.varying, weak=None, dims=None)


def _untyped_sharding(it: ApiContext, c: ApiCall, x: ArrayVal) -> bool:
    """Whether no sharding shows in the types here: the input's type is unsharded, and
    no parameter's type is sharded (``untyped_here``)."""
    if x.dims is None or any(x.dims) or x.varying != frozenset():
        return False
    return untyped_here(it, c.ctx)


def untyped_here(it: ApiContext, ctx: MeshCtx) -> bool:
    """Whether a Linen module's parameters, made here or passed to ``apply``, name no
    axis in their types: the mesh in force is known and has Auto axes only (an array
    placed on another mesh's Explicit axes meets it in an error). With no mesh in force,
    variables placed by ``NamedSharding`` on Explicit axes keep those types, so nothing
    is claimed."""
    if not ctx.known:
        return False
    mesh = it.context_mesh(ctx)
    return mesh is not None and mesh.types is not None and all(
        t == AxisType.Auto for t in mesh.types)


def _unbox(it: ApiContext, c: ApiCall, name: str, init: LogicalInit,
           shape: Tuple[Optional[int], ...]) -> None:
    """A parameter boxed by ``nn.with_logical_partitioning`` (no ``mesh=``), unboxed when
    the layer makes it: ``LogicallyPartitioned.unbox`` is ``nn.with_logical_constraint``
    of its names under the rules in force there (a no-op with none, or with no mesh).
    Checked on flax 0.12.8 / JAX 0.10.2: a rule's mesh axis the context mesh lacks
    raises ValueError eagerly, under ``jax.jit`` and ``jax.eval_shape`` alike; an
    indivisible dim raises only eagerly (IndivisibleError)."""
    rules = context_rules(it, c.ctx)
    mesh = it.context_mesh(c.ctx)
    if init.rules_given or not rules or mesh is None or not c.ctx.known:
        return
    try:
        res = la.resolve_linen(init.names, rules)
    except la.LogicalAxisError:
        return  # repeated names: reported where they are written
    spec = SpecVal(spec_entries(res.entries), node=c.node)
    if not spec.complete:
        return
    it.record("spec_uses", SpecUse(spec, c.node, f"Linen param {name!r}", mesh,
                                   unboxed_shape(it, c.ctx, shape), from_context=True))


@hook("module_param")
def module_param(it: ApiContext, e: cst.Call, base: Value, args: list,
                 ctx: MeshCtx) -> Optional[Value]:
    """``self.param(name, init, *init_args)`` in a Linen module: ``init(rng, *init_args)``.

    A boxed initializer's spec is checked where Linen unboxes it
    (``logical.record_param_spec``, whatever the receiver: a method's ``self`` may be
    unknown). The value: ``init_args[0]``'s shape in the initializer's dtype (or the
    dtype passed after the shape), typed where the mesh in force has Auto axes only (no
    type then names an axis; elsewhere a boxed parameter is sharded by the rules, a plain
    one by whatever placed the variables)."""
    init = args[1].value
    shape = int_tuple(args[2].value) if len(args) > 2 and args[2].keyword is None else None
    if isinstance(init, LogicalInit):
        name = args[0].value.value if isinstance(args[0].value, Const) else "?"
        record_param_spec(it, init, name, ctx, shape)
    if not (isinstance(base, InstanceVal) and is_linen_class(base.cls)) or len(args) < 3 \
            or any(a.keyword is not None for a in args[:3]):
        return None
    dtype = init.dtype if isinstance(init, LogicalInit) else default_dtype(init)
    if len(args) > 3:
        dtype = ops.dtype_of(args[3].value) if len(args) == 4 else None
    if shape is None or None in shape or dtype is None or not untyped_here(it, ctx):
        return None
    return ArrayVal(shape, node=e, dtype=dtype, weak=False, dims=((),) * len(shape))


# ``flax.linen``'s activations are ``jax.nn``'s functions (flax/linen/activation.py
# re-exports them; ``nn.gelu is jax.nn.gelu`` on flax 0.12.8)
LINEN_ACTIVATIONS = tuple(n for n in NNX_ACTIVATIONS if n != "identity")


@models(*(f"flax.linen.{n}" for n in LINEN_ACTIVATIONS))
def activation(it: ApiContext, c: ApiCall) -> Value:
    return it.call_api(f"jax.nn.{c.short}", c.node, c.args.args, c.env, c.ctx)
