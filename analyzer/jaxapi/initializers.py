"""Parameter initializers: ``jax.nn.initializers`` and Flax's re-exports of them
(``nnx.initializers``, ``nn.initializers``, which add the factories ``zeros_init()``
and ``ones_init()``).

A factory (``lecun_normal()``, ``normal(0.02)``, ``variance_scaling(...)``) returns an
initializer, a function ``init(key, shape, dtype=<the factory's dtype>)``; ``zeros`` and
``ones`` are such functions themselves. JAX 0.10.2: every factory's ``dtype`` defaults to
``jnp.float_``, float32 with x64 off, and so do ``zeros``/``ones``. What an initializer
returns is an array of ``shape`` in that dtype; its sharding is left unknown here (a
Variable's metadata, a logical box or ``out_sharding=`` places it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from .. import ops
from ..api import ApiCall, ApiContext, calls, models
from ..values import UNKNOWN, ArrayVal, QualName, Value, int_tuple

# Not the pre-check's vocabulary: initializers make values of a shape; a sharding
# comes with the partitioning that wraps them
MAKES_SHARDINGS = False

_MODULES = ("jax.nn.initializers", "flax.nnx.initializers", "flax.linen.initializers",
            "flax.nnx.nn.initializers")
_FACTORIES = ("constant", "delta_orthogonal", "glorot_normal", "glorot_uniform", "he_normal",
              "he_uniform", "kaiming_normal", "kaiming_uniform", "lecun_normal", "lecun_uniform",
              "normal", "orthogonal", "truncated_normal", "uniform", "variance_scaling",
              "xavier_normal", "xavier_uniform")
_FUNCTIONS = ("zeros", "ones")
# flax's factories of those two (``nn.initializers.zeros_init()``)
_FLAX_FACTORIES = ("zeros_init", "ones_init")
FUNCTION_NAMES = frozenset(f"{m}.{n}" for m in _MODULES for n in _FUNCTIONS)
_DEFAULT = "float32"  # jnp.float_ with x64 off


@dataclass(frozen=True, eq=False)
class InitializerVal(Value):
    """What a factory returns: ``init(key, shape, dtype=dtype)``."""

    dtype: Optional[str]  # None: the factory's dtype= is not known


@models(*(f"{m}.{n}" for m in _MODULES for n in _FACTORIES),
        *(f"{m}.{n}" for m in _MODULES[1:] for n in _FLAX_FACTORIES))
def factory(it: ApiContext, c: ApiCall) -> Value:
    it.pass_functions(c.args.args, c.ctx)
    given = c.args.kw.get("dtype")
    return InitializerVal(ops.dtype_of(given.value) if given is not None else _DEFAULT)


def default_dtype(init: Value) -> Optional[str]:
    """The dtype ``init(key, shape)`` gives, for a known initializer (else None)."""
    if isinstance(init, InitializerVal):
        return init.dtype
    if isinstance(init, QualName) and init.name in FUNCTION_NAMES:
        return _DEFAULT
    return None


def _made(c: ApiCall, dtype: Optional[str]) -> Value:
    if c.args.starred:
        return UNKNOWN
    shape = int_tuple(c.args.get(1, "shape"))
    if c.args.given(2, "dtype"):
        dtype = ops.dtype_of(c.args.get(2, "dtype"))
    return ArrayVal(shape, node=c.node, dtype=dtype, weak=False, dims=None)


@calls(InitializerVal)
def call_initializer(it: ApiContext, callee: Value, c: ApiCall) -> Value:
    assert isinstance(callee, InitializerVal)
    return _made(c, callee.dtype)


@models(*FUNCTION_NAMES)
def constant_initializer(it: ApiContext, c: ApiCall) -> Value:
    """``zeros(key, shape, dtype=float32)`` / ``ones(...)``."""
    return _made(c, _DEFAULT)
