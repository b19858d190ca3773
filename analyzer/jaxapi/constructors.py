"""Where arrays come from: ``jnp.zeros``/``ones``/``full``/``empty``, ``arange``,
``jnp.array``/``asarray``, ``jax.random`` samplers and keys, and NumPy's host arrays."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Optional, Tuple

from . import names as api
from .. import ops
from .. import transfer as tr
from ..events import SpecUse
from ..values import (UNKNOWN, ArrayVal, Const, QualName, ShardingVal, TupleVal, Unknown,
                      Value, const_int, int_tuple, union_varying)
from .argument_kinds import is_device_list_call
from .placement import check_out_sharding
from ..api import ApiCall, ApiContext, method_of, models, models_prefix
from .specs import out_sharding_fn, spec_and_mesh, spec_dims

# Not the pre-check's vocabulary: arrays without a sharding never conflict: a sharded
# operand comes from a name of the vocabulary
MAKES_SHARDINGS = False


_RANDOM_DTYPES = {  # jax.random.<name>: (dtype arg index, default dtype)
    **{n: (2, "float32") for n in ("normal", "uniform", "gumbel", "laplace", "logistic",
                                  "exponential", "cauchy")},
    "randint": (4, "int32"), "bits": (2, "uint32"), "rademacher": (2, "int32"),
}
_NUMPY_DEFAULT = {"int32": "int64", "float32": "float64"}  # NumPy's defaults are 64-bit
_GENERATOR_SAMPLERS = ("normal", "uniform", "standard_normal", "random", "integers")


@models(*api.ARRAY_CONSTRUCTORS)
def constructor(it: ApiContext, c: ApiCall) -> Value:
    shape = int_tuple(c.args.get(api.ARRAY_CONSTRUCTORS[c.name], "shape"))
    check_out_sharding(it, c, shape)
    return on_device(it, c, constructed(it, c, shape), traced_keeps=False)


@models(*api.ARANGES)
def arange(it: ApiContext, c: ApiCall) -> Value:
    nums = [p.value if isinstance(p, Const) and isinstance(p.value, (int, float))
            and not isinstance(p.value, bool) else None for p in c.args.pos[:3]]
    n = None
    if nums and None not in nums:
        start, stop, step = ((0, nums[0], 1) if len(nums) == 1 else
                             (nums[0], nums[1], 1) if len(nums) == 2 else tuple(nums))
        if step:
            n = max(0, math.ceil((stop - start) / step))  # type: ignore[operator]  # None excluded
    shape = (n,) if n is not None else None
    check_out_sharding(it, c, shape)
    has_dtype = c.args.given(3, "dtype")
    dt = ops.dtype_of(c.args.get(3, "dtype")) if has_dtype else (
        None if None in nums or not nums else
        "float32" if any(isinstance(x, float) for x in nums) else "int32")
    if c.name.startswith("numpy."):
        return ArrayVal(shape, node=c.node, numpy=True,
                        dtype=dt if has_dtype else _NUMPY_DEFAULT.get(dt or "", dt))
    dtype_v = QualName(f"jax.numpy.{dt}") if dt else UNKNOWN
    return on_device(it, c, constructed(it, c, shape, dtype=dtype_v, default=dt, placed=False),
                     traced_keeps=True)


@models("jax.numpy.zeros_like", "jax.numpy.ones_like", "jax.numpy.empty_like",
        "jax.numpy.full_like")
def like(it: ApiContext, c: ApiCall) -> Value:
    """``jnp.zeros_like(x, device=s)``: the op rule's type of ``x``, then placed."""
    it.pass_functions(c.args.args, c.ctx)
    if c.args.starred:
        return UNKNOWN
    kw = {k: v for k, v in c.args.kw_values().items() if k != "device"}
    x = c.args.pos[0] if c.args.pos else None
    res = it.infer(c.node, ops.call_op, c.name, c.args.pos, kw, c.node, it.sizes(c.ctx, x),
                   out_sharding_fn(c.ctx))
    return on_device(it, c, res, traced_keeps=False)


def on_device(it: ApiContext, c: ApiCall, v: Value, traced_keeps: bool) -> Value:
    """``v`` made with ``device=`` (JAX 0.10.2, tests/inference/constructors.py): run
    eagerly the array is put there, and a weak type becomes strong; traced, arange keeps
    the sharding while zeros/ones/full/empty and the ``*_like`` ignore it. Where the code
    may run either way, what differs is unknown."""
    arg = c.args.kw.get("device")
    if arg is None or not isinstance(v, ArrayVal) or v.numpy \
            or (isinstance(arg.value, Const) and arg.value.value is None):
        return v
    if not (c.ctx.eager or traced_keeps):
        return replace(v, dims=None, mesh=None, weak=None if v.weak is not False else False)
    target = arg.value
    if not isinstance(target, ShardingVal):  # a Device, or a sharding it cannot see
        return replace(v, dims=None, mesh=None, weak=False if c.ctx.eager else v.weak)
    spec, mesh = spec_and_mesh(target, c.ctx)
    if spec is not None and v.shape is not None:  # checked against the shape, as device_put
        it.record("spec_uses", SpecUse(spec, spec.node or arg.node or c.node,
                                       f"{c.short}(device=)", mesh, v.shape))
    dims = spec_dims(spec, mesh, tr.rank(v), c.ctx)
    if c.ctx.eager:  # committed there, as by device_put
        return replace(v, dims=dims, mesh=mesh, spec=spec, weak=False)
    return replace(v, dims=dims, mesh=mesh)


def constructed(it: ApiContext, c: ApiCall, shape: Optional[tuple],
                dtype: Optional[Value] = None, default: Optional[str] = None,
                placed: bool = True) -> Value:
    """zeros/ones/full/empty and jax.random samplers: replicated unless ``placed`` and
    out_sharding says otherwise. ``dtype``: the dtype when the caller read it (arange);
    UNKNOWN there gives an unknown dtype, never a guess."""
    short, kw = c.short, c.args.kw
    dt: Optional[str] = default
    weak: Optional[bool] = False
    if c.name.startswith("jax.random."):
        i, dt = _RANDOM_DTYPES.get(short, (None, None))
        if i is not None and c.args.given(i, "dtype"):
            dt = ops.dtype_of(c.args.get(i, "dtype"))  # None: told, but not resolved
    elif dtype is not None:
        dt = ops.dtype_of(dtype) if dtype is not UNKNOWN else default
    else:
        i = 2 if short == "full" else 1
        v = c.args.get(i, "dtype")
        if isinstance(v, Const) and isinstance(v.value, (int, float)):
            return UNKNOWN  # `jnp.ones(4, 4)`: no dtype; JAX raises TypeError, no array
        if c.args.given(i, "dtype") and not (isinstance(v, Const) and v.value is None):
            dt = ops.dtype_of(v)  # None: told, but not resolved
        elif short == "full":
            fill = c.args.get(1, "fill_value")
            sd = tr.scalar_dtype(fill)
            dt, weak = (sd if sd is not None else (None, None))
            if isinstance(fill, ArrayVal):
                dt, weak = fill.dtype, fill.weak
        elif default is None:
            dt = "float64" if c.name.startswith("numpy.") else "float32"
    if c.name.startswith("numpy."):
        return ArrayVal(shape, node=c.node, dtype=dt, numpy=True)
    rank = len(shape) if shape is not None else None
    dims: Optional[tuple] = ((),) * rank if rank is not None else None
    if placed and "out_sharding" in kw and not (isinstance(kw["out_sharding"].value, Const)
                                     and kw["out_sharding"].value.value is None):
        out = out_sharding_fn(c.ctx)(kw["out_sharding"].value, rank)
        dims = out[0] if out is not None and not out[1] else None
    if c.ctx.manual_axes and dims is not None and any(dims):
        dims = None
    vary = _key_varying(c, c.args.pos[:1]) if c.name.startswith("jax.random.") else frozenset()
    return ArrayVal(shape, it.context_mesh(c.ctx), None, c.node, vary, dtype=dt,
                    weak=weak, dims=dims)


def _key_varying(c: ApiCall, inputs) -> Optional[frozenset]:
    """Random values vary over the manual axes their key (and fold_in's data) vary over:
    a key folded with ``axis_index`` gives per-shard samples. Unknown inside shard_map
    when an input is; outside, nothing varies."""
    out = union_varying(inputs)
    if out is None and not c.ctx.manual_axes:
        return frozenset()
    return out


@models("jax.random.key", "jax.random.split", "jax.random.fold_in")
def random_key(it: ApiContext, c: ApiCall) -> Value:
    shape: Tuple[int, ...] = ()
    if c.name == "jax.random.split":
        n = const_int(c.args.get(1, "num")) if c.args.given(1, "num") else 2
        base = c.args.pos[0] if c.args.pos else UNKNOWN
        if n is None or not (isinstance(base, ArrayVal) and base.shape == ()):
            return UNKNOWN
        shape = (n,)
    inputs = c.args.pos[:2] if c.name == "jax.random.fold_in" else (
        c.args.pos[:1] if c.name == "jax.random.split" else [])
    return ArrayVal(shape, it.context_mesh(c.ctx), None, c.node, _key_varying(c, inputs),
                    dtype="key<fry>", weak=False, dims=((),) * len(shape))


@models("numpy.random.randn", "numpy.random.rand")
def numpy_randn(it: ApiContext, c: ApiCall) -> Value:
    return ArrayVal(tuple(const_int(p) for p in c.args.pos), node=c.node, dtype="float64",
                    numpy=True)


@dataclass(frozen=True, eq=False)
class NumpyGeneratorVal(Value):
    """``np.random.default_rng(seed)``: NumPy's ``Generator``; its draws are host arrays."""


@models("numpy.random.default_rng")
def default_rng(it: ApiContext, c: ApiCall) -> Value:
    it.pass_functions(c.args.args, c.ctx)
    return NumpyGeneratorVal()


# Generator method -> (the position of ``size``, the dtype drawn unless ``dtype=`` says)
_DRAWS = {"integers": (2, "int64"), "normal": (2, "float64"), "uniform": (2, "float64"),
          "random": (0, "float64"), "standard_normal": (0, "float64")}


@method_of(NumpyGeneratorVal)
def generator_method(it: ApiContext, rng: Value, c: ApiCall) -> Optional[Value]:
    """``rng.integers(low, high, size, dtype=np.int64)``, ``rng.normal(loc, scale,
    size)``, ``rng.uniform(...)``, ``rng.random(size)``, ``rng.standard_normal(size)``:
    a host array of ``size``'s shape (a scalar without one)."""
    if c.name not in _DRAWS or c.args.starred:
        return UNKNOWN
    at, default = _DRAWS[c.name]
    dtype: Optional[str] = default
    if c.args.given(at, "size"):
        shape = int_tuple(c.args.get(at, "size"))
    else:
        shape = ()
    given = c.args.kw.get("dtype")
    if given is not None:
        dtype = ops.dtype_of(given.value)
    elif c.name == "integers" and len(c.args.pos) > 3:
        dtype = ops.dtype_of(c.args.pos[3])
    return ArrayVal(shape, node=c.node, dtype=dtype, numpy=True)


@models_prefix("numpy.random.")
def numpy_random(it: ApiContext, c: ApiCall) -> Value:
    size = c.args.keyword("size")
    if size is not None:
        return ArrayVal(int_tuple(size), node=c.node, numpy=True)
    return unmodelled(it, c)


@models("numpy.reshape")
def numpy_reshape(it: ApiContext, c: ApiCall) -> Value:
    pos = c.args.pos
    if len(pos) >= 2 and isinstance(pos[0], ArrayVal) and not c.args.starred:
        return ArrayVal(resolve_reshape(pos[0].shape, int_tuple(pos[1])), node=c.node, numpy=True)
    return unmodelled(it, c)


@models("numpy.zeros_like", "numpy.ones_like")
def numpy_like(it: ApiContext, c: ApiCall) -> Value:
    if c.args.pos and isinstance(c.args.pos[0], ArrayVal):
        return ArrayVal(c.args.pos[0].shape, node=c.node, numpy=True)
    return UNKNOWN


@models("jax.numpy.array", "numpy.array", "jax.numpy.asarray", "numpy.asarray")
def as_array(it: ApiContext, c: ApiCall) -> Value:
    pos, kw, e = c.args.pos, c.args.kw, c.node
    x = pos[0] if pos else UNKNOWN
    dt_arg = kw["dtype"].value if "dtype" in kw else (pos[1] if len(pos) > 1 else None)
    dt = ops.dtype_of(dt_arg) if dt_arg is not None else None
    to_numpy = c.name.startswith("numpy.")
    dev = kw.get("device")
    if not to_numpy and dev is not None and not (isinstance(dev.value, Const) and dev.value.value is None):
        # JAX 0.10.2 places it through with_sharding_constraint, which rejects Explicit
        # axes with no mesh set: where it lands is not modelled
        it.pass_functions(c.args.args, c.ctx)
        return UNKNOWN
    if isinstance(x, ArrayVal):
        if to_numpy:
            return ArrayVal(x.shape, node=e, dtype=dt or x.dtype, numpy=True)
        if x.numpy:
            return ArrayVal(x.shape, it.context_mesh(c.ctx), None, e, frozenset(),
                            dtype=dt or tr.canonical_dtype(x.dtype), weak=False,
                            dims=((),) * len(x.shape) if x.shape is not None else None)
        return replace(x, node=e, spec=None, dtype=dt or x.dtype, weak=False if dt else x.weak)
    shape = _literal_shape(x)
    if shape is None:
        devices = _device_list(it, c)
        if to_numpy and devices is not None:  # np.array(jax.devices()): to reshape for a Mesh
            return ArrayVal(devices, node=e, dtype="object", numpy=True)
        return UNKNOWN
    lit = _literal_dtype(x)
    if to_numpy:
        return ArrayVal(shape, node=e, dtype=dt or _NUMPY_DEFAULT.get(lit or "", lit), numpy=True)
    weak: Optional[bool] = False
    if dt is None:
        dt = lit
        weak = shape == () and dt in ("int32", "float32")
    return ArrayVal(shape, it.context_mesh(c.ctx), None, e, frozenset(), dtype=dt, weak=weak,
                    dims=((),) * len(shape))


@method_of(Unknown)
def generator_sampler(it: ApiContext, base: Value, c: ApiCall) -> Optional[Value]:
    """``rng.normal(size=(8, 4))`` on a NumPy Generator: a host array of that shape."""
    size = c.args.keyword("size")
    if c.name in _GENERATOR_SAMPLERS and size is not None and int_tuple(size) is not None:
        return ArrayVal(int_tuple(size), node=c.node)
    return None


def unmodelled(it: ApiContext, c: ApiCall) -> Value:
    """A call shardcheck does not model: any function passed to it may run here."""
    if c.args.kw.get("out_sharding") is not None:
        check_out_sharding(it, c, None)
    it.pass_functions(c.args.args, c.ctx)
    return UNKNOWN


def resolve_reshape(old: Optional[tuple], new: Optional[tuple]) -> Optional[tuple]:
    """The new shape of a reshape, with one ``-1`` resolved when the old shape is known
    (else that dimension unknown: ``np.array(jax.devices()).reshape(-1, 4)``)."""
    if new is None:
        return None
    if -1 in new and new.count(-1) == 1 and None not in new:
        if old is None or None in old:
            return tuple(None if s == -1 else s for s in new)
        total = math.prod(old)
        rest = math.prod(s for s in new if s != -1)
        if rest and total % rest == 0:
            return tuple(total // rest if s == -1 else s for s in new)
        return None
    return None if -1 in new else new


@models("jax.device_count", "jax.local_device_count")
def device_count(it: ApiContext, c: ApiCall) -> Value:
    """The number of devices, where the module sets it up for itself
    (``jax_num_cpu_devices``, ``--xla_force_host_platform_device_count``), as
    ``np.array(jax.devices())`` and the mesh checks take it; else unknown, as with a
    ``backend=`` given."""
    if c.args.args:
        return UNKNOWN
    from .devices import device_setup
    setup = device_setup(it.module)
    return Const(setup.count) if setup is not None else UNKNOWN


def _device_list(it: ApiContext, c: ApiCall) -> Optional[tuple]:
    """``jax.devices()`` (or ``jax.local_devices()``) written as the argument: the shape
    of the array of them, its length the device count the program sets up, where it
    sets one (``jax_num_cpu_devices``), else unknown."""
    if not is_device_list_call(it, c, c.args.node(0, "object")):
        return None
    from .devices import device_setup
    setup = device_setup(it.module)
    return (setup.count if setup is not None else None,)


def _literal_shape(v: Value) -> Optional[tuple]:
    if isinstance(v, Const) and isinstance(v.value, (int, float, bool)):
        return ()
    if isinstance(v, TupleVal):
        if not v.items:
            return (0,)
        inner = [_literal_shape(i) for i in v.items]
        if any(s is None for s in inner) or len(set(inner)) != 1:
            return None
        return (len(v.items),) + inner[0]  # type: ignore[operator]  # None excluded
    return None


def _literal_dtype(v: Value) -> Optional[str]:
    if isinstance(v, Const):
        return ("bool" if isinstance(v.value, bool) else "int32" if isinstance(v.value, int)
                else "float32" if isinstance(v.value, float) else None)
    if isinstance(v, TupleVal):
        kinds = {_literal_dtype(i) for i in v.items}
        if None in kinds or not kinds:
            return None
        for k in ("float32", "int32", "bool"):
            if k in kinds:
                return k
    return None
