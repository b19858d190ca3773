"""Elementwise ops: broadcasting (``lax.broadcasting_sharding_rule``), select, unary
maps, dtype casts and the ``*_like`` constructors."""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

from ..facts import BroadcastConflict, OperandConflict
from ..values import ArrayVal, Const, Value, union_varying
from .arrays import Conflict, Dims, array, derived, one_dim_per_axis, rank, shape_of, unknown_like
from .call import Call, DTypeArg, Missing, Op, Registry, register
from .dtypes import DTYPE_KINDS, DType, promote, scalar_dtype, to_float


def _dtype(v: Value) -> Optional[DType]:
    return (v.dtype, v.weak) if isinstance(v, ArrayVal) else scalar_dtype(v)


def broadcast(op: str, primitive: Optional[str], operands: Sequence[Value]) -> ArrayVal:
    """``lax.broadcasting_sharding_rule`` after jnp's rank promotion.

    Per dim: equal shardings stay; otherwise size-1 unsharded dims drop out, and the
    remaining sharded entries must agree, else ShardingTypeError ("incompatible
    shardings for broadcasting"). An unsharded operand joins a sharded one for free.
    Python scalars take part with their weak dtype only."""
    arrays = [o for o in operands if isinstance(o, ArrayVal)]
    vary = union_varying(list(operands))
    dtypes = [d for d in (_dtype(o) for o in operands) if d is not None]
    if len(dtypes) != len(operands) or any(a.unreduced is None or a.unreduced for a in arrays):
        return ArrayVal(None, varying=vary)
    dt = dtypes[0]
    for d in dtypes[1:]:
        dt = promote(dt, d)
    ranks = [r for r in (rank(a) for a in arrays) if r is not None]
    if not arrays or len(ranks) != len(arrays):
        return ArrayVal(None, varying=vary, dtype=dt[0], weak=dt[1])
    n = max(ranks)
    shapes: List[Tuple[Optional[int], ...]] = []
    specs: List[Optional[Dims]] = []
    for a, r in zip(arrays, ranks):
        shapes.append((1,) * (n - r) + shape_of(a, r))
        specs.append(None if a.dims is None else ((),) * (n - r) + tuple(a.dims))
    out_shape: List[Optional[int]] = []
    for ds in zip(*shapes):
        big = {d for d in ds if d != 1}
        if None in big:
            out_shape.append(None)
        elif len(big) > 1:
            return ArrayVal(None, varying=vary)  # shapes do not broadcast
        else:
            out_shape.append(big.pop() if big else 1)
    known = tuple(s for s in specs if s is not None)
    if len(known) != len(specs) or n == 0:
        dims = None if len(known) != len(specs) else ()
        return array(out_shape, dims, dt[0], dt[1], vary, arrays[0])
    out_dims = tuple(_merge_dim(op, primitive, known, shapes, i) for i in range(n))
    one_dim_per_axis(op, out_dims, broadcast=True)
    return array(out_shape, out_dims, dt[0], dt[1], vary, arrays[0])


def _merge_dim(op: str, primitive: Optional[str], specs, shapes, i: int) -> Tuple[str, ...]:
    ss = [s[i] for s in specs]
    if all(s == ss[0] for s in ss):
        return ss[0]
    nontrivial = [s for s, sh in zip(ss, shapes) if not (sh[i] == 1 and not s)]
    if not nontrivial:
        return ()
    if all(s == nontrivial[0] for s in nontrivial):
        return nontrivial[0]
    res: Tuple[str, ...] = ()
    for s in ss:
        if not res and s:
            res = s
        elif res and s and res != s:
            raise Conflict(BroadcastConflict(op, primitive, specs, i, res, s))
    return res


def elementwise(op: str, primitive: Optional[str], operands: Sequence[Value]) -> ArrayVal:
    return broadcast(op, primitive, operands)


def floor_divide(op: str, operands: Sequence[Value]) -> ArrayVal:
    """``//``: on floats jnp computes ``where(y == 0, x, x - x % y)``, a select whose
    operands need no broadcasting when ``x`` and ``y`` have one shape, so then they must be
    sharded alike (and like the result). JAX's broadcasting error names ``rem`` for floats
    and ``div`` for integers."""
    res = broadcast(op, _by_kind(operands, int_prim="div", float_prim="rem"), operands)
    x, y = operands
    if _is_float(res) and isinstance(x, ArrayVal) and isinstance(y, ArrayVal):
        select(op, [derived(y, dtype="bool"), x, res])
    return res


def power(op: str, operands: Sequence[Value]) -> ArrayVal:
    """``**``: JAX's broadcasting error names ``pow`` for floats (integer powers are
    computed otherwise)."""
    return broadcast(op, _by_kind(operands, int_prim=None, float_prim="pow"), operands)


def _is_float(a: ArrayVal) -> bool:
    return a.dtype is not None and DTYPE_KINDS.get(a.dtype, 2) >= 2


def _by_kind(operands: Sequence[Value], int_prim: Optional[str], float_prim: str) -> Optional[str]:
    dts = [_dtype(o) for o in operands]
    if any(d is None or d[0] is None for d in dts):
        return None
    dt = promote(dts[0] or (None, None), dts[1] or (None, None))
    if dt[0] is None:
        return None
    return float_prim if DTYPE_KINDS.get(dt[0], 2) >= 2 else int_prim


def true_divide(op: str, primitive: Optional[str], operands: Sequence[Value]) -> ArrayVal:
    """``/``: broadcasting, and ints become float32."""
    res = broadcast(op, primitive, operands)
    dt, weak = to_float((res.dtype, res.weak))
    return derived(res, dtype=dt, weak=weak)


def compare(op: str, primitive: Optional[str], operands: Sequence[Value]) -> ArrayVal:
    """Comparisons and logical ops: broadcasting, and the result is bool."""
    return derived(broadcast(op, primitive, operands), dtype="bool", weak=False)


def select(op: str, operands: Sequence[Value]) -> ArrayVal:
    """``jnp.where(c, x, y)`` / ``lax.select``. When no operand needs broadcasting, JAX's
    select rule wants the condition and both cases sharded alike; otherwise all three
    are first broadcast to the merged (broadcasting-rule) sharding. The dtype is the
    cases' promoted dtype."""
    arrays = [o for o in operands if isinstance(o, ArrayVal)]
    if len(arrays) == len(operands) and all(a.shape is not None and None not in a.shape
                                            and a.dims is not None for a in arrays):
        if len({a.shape for a in arrays}) == 1:
            c, x, y = arrays
            specs = tuple(a.dims or () for a in arrays)
            if x.dims != y.dims:
                raise Conflict(OperandConflict(op, "select-cases", specs))
            if c.dims != x.dims:
                raise Conflict(OperandConflict(op, "select-condition", specs))
    try:
        res = broadcast(op, None, operands)
    except Conflict as c:
        f = c.fact
        assert isinstance(f, BroadcastConflict)
        raise Conflict(OperandConflict(op, "select-broadcast", f.specs, f.dim)) from None
    dt = promote(_dtype(operands[1]) or (None, None), _dtype(operands[2]) or (None, None))
    return derived(res, dtype=dt[0], weak=dt[1])


def same(x: ArrayVal) -> ArrayVal:
    """An op that keeps the type (negation, rounding, ``relu``, ``copy``)."""
    return derived(x)


def absolute(x: ArrayVal) -> ArrayVal:
    """``abs``: the type, but complex becomes the real dtype of its precision."""
    dt = {"complex64": "float32", "complex128": "float64"}.get(x.dtype or "", x.dtype)
    return derived(x, dtype=dt)


def to_complex(x: ArrayVal) -> ArrayVal:
    """``lax.conj``: the complex dtype of the input's precision."""
    dt = {"float64": "complex128", "complex128": "complex128"}.get(x.dtype or "", "complex64")
    return derived(x, dtype=dt if x.dtype is not None else None, weak=False)


def float_op(x: Value) -> Optional[ArrayVal]:
    """exp/sqrt/tanh/gelu/softmax...: the same sharding, ints become float32. On a Python
    number, a weak float scalar (``jnp.sqrt(8)``)."""
    if isinstance(x, ArrayVal):
        dt, weak = to_float((x.dtype, x.weak))
        return derived(x, dtype=dt, weak=weak)
    sd = scalar_dtype(x)
    if sd is None:
        return None
    dt, weak = to_float(sd)
    return ArrayVal((), None, None, None, frozenset(), dtype=dt, weak=weak, dims=())


def with_dtype(x: ArrayVal, dtype: Optional[str]) -> ArrayVal:
    """``astype`` and the ``*_like`` constructors given a dtype: a strong ``dtype``."""
    return derived(x, dtype=dtype, weak=False)


def one_hot(x: ArrayVal, n: int, dtype: Optional[str]) -> ArrayVal:
    """``jax.nn.one_hot``: a new trailing (unsharded) class dim."""
    r = rank(x)
    if r is None:
        return unknown_like([x])
    shape = tuple(x.shape or (None,) * r) + (n,)
    dims = None if x.dims is None else tuple(x.dims) + ((),)
    return derived(x, shape=shape, dims=dims, dtype=dtype, weak=False)


# -- how calls read their arguments ---------------------------------------------------------
def _binary(primitive: Optional[str]):
    def read(c: Call) -> Optional[tuple]:
        if len(c.pos) != 2 or c.kw or not any(isinstance(p, ArrayVal) for p in c.pos):
            return None
        return (c.name, primitive, list(c.pos))
    return read


def _operands(c: Call) -> Optional[tuple]:
    read = _binary(None)(c)
    return None if read is None else (read[0], read[2])


def _comparison(primitive: Optional[str]):
    def read(c: Call) -> Optional[tuple]:  # isclose(a, b, rtol, atol): the arrays only
        if len(c.pos) < 2 or not any(isinstance(p, ArrayVal) for p in c.pos[:2]):
            return None
        return (c.name, primitive, list(c.pos[:2]))
    return read


def _read_x(c: Call) -> Optional[tuple]:
    x = c.first("x", "a", "operand")
    return (x,) if isinstance(x, ArrayVal) else None


def _read_float(c: Call) -> Optional[tuple]:
    x = c.first("x", "a", "operand")
    if isinstance(x, ArrayVal) or (x is not None and len(c.pos) == 1 and not c.kw):
        return (x,)
    return None


def _read_clip(c: Call) -> Optional[tuple]:
    x = c.first("x", "a", "arr")
    bounds = [v for k, v in c.kw.items() if k in ("min", "max", "a_min", "a_max")]
    bounds += list(c.pos[1:3])
    if not isinstance(x, ArrayVal) or any(not isinstance(b, (ArrayVal, Const)) for b in bounds):
        return None
    return (c.name, None, [x] + [b for b in bounds if isinstance(b, ArrayVal)])


def _read_where(c: Call) -> Optional[tuple]:
    if len(c.pos) != 3 or c.kw:
        return None
    if not all(isinstance(p, ArrayVal) or scalar_dtype(p) is not None for p in c.pos):
        return None
    if c.name == "jax.lax.select" and not all(isinstance(p, ArrayVal) for p in c.pos):
        return None
    return (c.name, list(c.pos))


def _read_astype(c: Call) -> Optional[tuple]:
    x = c.array(0, "x")
    dt = c.dtype_arg(1, "dtype")
    return None if x is None else (x, None if isinstance(dt, Missing) else dt)


def _read_like(dtype_pos: int):
    def read(c: Call) -> Optional[tuple]:
        x = c.array(0, "a")
        if x is None or set(c.kw) - {"dtype"}:
            return None
        return (x, c.dtype_arg(dtype_pos, "dtype"))
    return read


def like(x: ArrayVal, dtype: DTypeArg) -> ArrayVal:
    """zeros_like/ones_like/empty_like: the type of ``x``, or ``dtype`` (strong)."""
    return derived(x) if isinstance(dtype, Missing) else with_dtype(x, dtype)


def full_like(x: ArrayVal, dtype: DTypeArg) -> ArrayVal:
    """full_like without a dtype: not modelled (the fill value may change the dtype)."""
    return derived(x, dtype=None) if isinstance(dtype, Missing) else with_dtype(x, dtype)


def _read_one_hot(c: Call) -> Optional[tuple]:
    x, n = c.array(0, "x"), c.int_arg(1, "num_classes")
    dt = c.dtype_arg(2, "dtype") if "dtype" in c.kw else "float32"
    if x is None or n is None:
        return None
    return (x, n, None if isinstance(dt, Missing) else dt)


OPS: Registry = {}
# jnp name -> the primitive JAX's broadcasting error names (None: it depends on the dtype
# or on the JAX version, e.g. hypot's is "or" in 0.10.2 and "max" in 0.12)
_BINARY = {"add": "add", "subtract": "sub", "multiply": "mul", "maximum": "max",
           "minimum": "min", "mod": "rem", "remainder": "rem", "arctan2": "atan2",
           "logaddexp": "max", "hypot": None,
           "fmax": "gt", "fmin": "lt", "nextafter": "nextafter", "bitwise_and": "and",
           "bitwise_or": "or", "bitwise_xor": "xor"}
_COMPARE = {"greater": "gt", "less": "lt", "equal": "eq", "not_equal": "ne",
            "greater_equal": "ge", "less_equal": "le", "logical_and": "and",
            "logical_or": "or", "logical_xor": "xor", "isclose": "and"}
_OPERATORS = {"__add__": "add", "__sub__": "sub", "__mul__": "mul", "__mod__": "rem",
              "__and__": "and", "__or__": "or", "__xor__": "xor"}
_COMPARE_OPERATORS = {"__lt__": "lt", "__le__": "le", "__gt__": "gt", "__ge__": "ge",
                      "__eq__": "eq", "__ne__": "ne"}
for _n, _p in _BINARY.items():
    register(OPS, [f"jax.numpy.{_n}"], Op(elementwise, _binary(_p)))
for _n in ("add", "sub", "mul", "div", "max", "min", "pow", "rem"):
    register(OPS, [f"jax.lax.{_n}"], Op(elementwise, _binary(_n)))
for _n, _p in _OPERATORS.items():
    register(OPS, [f"jax.Array.{_n}"], Op(elementwise, _binary(_p)))
register(OPS, ["jax.numpy.floor_divide", "jax.Array.__floordiv__"], Op(floor_divide, _operands))
register(OPS, ["jax.numpy.power", "jax.Array.__pow__"], Op(power, _operands))
register(OPS, ["jax.numpy.true_divide", "jax.numpy.divide", "jax.Array.__truediv__"],
         Op(true_divide, _binary("div")))
for _n, _p in _COMPARE.items():
    register(OPS, [f"jax.numpy.{_n}"], Op(compare, _comparison(_p)))
for _n in ("lt", "le", "gt", "ge", "eq", "ne"):
    register(OPS, [f"jax.lax.{_n}"], Op(compare, _comparison(_n)))
for _n, _p in _COMPARE_OPERATORS.items():
    register(OPS, [f"jax.Array.{_n}"], Op(compare, _comparison(_p)))
register(OPS, ["jax.numpy.where", "jax.lax.select"], Op(select, _read_where))

_SAME = ["jax.numpy." + n for n in ("negative", "positive", "square", "sign", "floor", "ceil",
                                    "round", "trunc", "conj", "conjugate", "tril", "triu")]
_SAME += ["jax.lax." + n for n in ("neg", "sign", "floor", "ceil", "round", "square")]
_SAME += ["jax.nn." + n for n in ("relu", "relu6", "hard_tanh")]
_SAME += ["jax.Array." + n for n in ("__neg__", "__pos__", "__invert__", "copy", "conj",
                                     "round", "block_until_ready")]
_FLOAT = ["jax.numpy." + n for n in (
    "exp", "exp2", "log", "log1p", "log2", "log10", "expm1", "sqrt", "cbrt", "tanh", "sinh",
    "cosh", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh",
    "reciprocal", "sinc", "deg2rad", "rad2deg", "fabs", "rint")]
_FLOAT += ["jax.lax." + n for n in (
    "exp", "exp2", "log", "log1p", "expm1", "sqrt", "rsqrt", "cbrt", "tanh", "sinh", "cosh",
    "sin", "cos", "tan", "asin", "acos", "atan", "asinh", "acosh", "atanh", "erf", "erfc",
    "erf_inv", "logistic")]
_FLOAT += ["jax.scipy.special." + n for n in ("erf", "erfc", "expit")]
_FLOAT += ["jax.nn." + n for n in (
    "gelu", "silu", "swish", "sigmoid", "softplus", "elu", "selu", "celu", "log_sigmoid",
    "soft_sign", "hard_sigmoid", "hard_silu", "hard_swish", "mish", "squareplus",
    "sparse_plus", "tanh", "leaky_relu", "softmax", "log_softmax", "standardize")]
register(OPS, _SAME, Op(same, _read_x))
register(OPS, ["jax.numpy.abs", "jax.numpy.absolute", "jax.lax.abs", "jax.Array.__abs__"],
         Op(absolute, _read_x))
register(OPS, _FLOAT, Op(float_op, _read_float))
register(OPS, ["jax.lax.conj"], Op(to_complex, _read_x))
register(OPS, ["jax.numpy.clip", "jax.Array.clip"], Op(elementwise, _read_clip))
register(OPS, ["jax.numpy.astype", "jax.Array.astype"], Op(with_dtype, _read_astype))
register(OPS, ["jax.numpy.zeros_like", "jax.numpy.ones_like", "jax.numpy.empty_like"],
         Op(like, _read_like(1)))
register(OPS, ["jax.numpy.full_like"], Op(full_like, _read_like(2)))
register(OPS, ["jax.nn.one_hot"], Op(one_hot, _read_one_hot))
