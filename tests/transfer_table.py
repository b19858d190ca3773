"""The op transfer table: calls, their input types, and what JAX 0.10.2 makes of them.

Each row is an expression over inputs ``x``, ``y``, ``z``, ``w`` of the given types on an
Explicit mesh ``('x': 2, 'y': 4)``, and ``str(jax.typeof(result))`` (a tuple for tuple
results) or the error JAX raises. tests/test_transfer_table.py checks each row against the
analyzer's op registry and against JAX itself. ``static`` says where the analyzer knows
less than JAX (``UNKNOWN``: no full type), ``mode`` how the row runs under JAX: traced
(``jax.eval_shape``, the default), ``eager`` (concrete arrays), or inside ``shard_map``.
``jax012`` is JAX 0.12's answer where it differs from 0.10.2's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional, Tuple

from shardcheck.analyzer import facts


@dataclass(frozen=True)
class Raises:
    """JAX raises ``error`` (a regex over "Type: message"); the analyzer gives ``fact``
    (with ``check`` where the fact type has several)."""

    fact: type
    error: str
    check: Optional[str] = None


UNKNOWN = "unknown"  # the analyzer gives no full type (and no conflict)
SAME = "same"  # the analyzer gives exactly JAX's answer


@dataclass(frozen=True)
class Row:
    call: str
    inputs: Tuple[str, ...]
    expect: Any  # str | tuple of str | Raises
    static: Any = SAME
    mode: str = "traced"
    jax012: Any = SAME  # JAX 0.12's answer when it differs

    @property
    def id(self) -> str:
        return f"{self.call} {self.mode} " + " ".join(self.inputs)


def rows(*rs: Row) -> List[Row]:
    return list(rs)


A = "float32[8@x,16]"
AY = "float32[8@y,16]"
B = "float32[8,16@y]"
C = "float32[8@x,16@y]"
R = "float32[8,16]"
I = "int32[8@x,16]"
IY = "int32[8@y,16]"
BO = "bool[8@x,16]"
BOY = "bool[8@y,16]"

Bcast = facts.BroadcastConflict
Contract = facts.ContractionConflict
Operands = facts.OperandConflict
Reshape = facts.ReshapeConflict
Along = facts.ShardedAxisConflict
Duplicate = facts.DuplicateResultAxis


def _bcast(primitive: Optional[str]) -> Raises:
    prefix = f"{primitive} got" if primitive else r"\w+ got"
    return Raises(Bcast, f"ShardingTypeError: {prefix} incompatible shardings for broadcasting")


# -- elementwise ------------------------------------------------------------------------------
_BINARY = {  # jnp name -> (inputs' dtype, the primitive JAX's broadcasting error names)
    "add": ("float32", "add"), "subtract": ("float32", "sub"), "multiply": ("float32", "mul"),
    "maximum": ("float32", "max"), "minimum": ("float32", "min"), "power": ("float32", "pow"),
    "mod": ("float32", "rem"), "remainder": ("float32", "rem"), "floor_divide": ("float32", "rem"),
    "arctan2": ("float32", "atan2"), "logaddexp": ("float32", "max"), "hypot": ("float32", None),
    "fmax": ("float32", "gt"), "fmin": ("float32", "lt"), "nextafter": ("float32", "nextafter"),
    "bitwise_and": ("int32", "and"), "bitwise_or": ("int32", "or"), "bitwise_xor": ("int32", "xor"),
    "true_divide": ("float32", "div"), "divide": ("float32", "div"),
    "greater": ("float32", "gt"), "less": ("float32", "lt"), "equal": ("float32", "eq"),
    "not_equal": ("float32", "ne"), "greater_equal": ("float32", "ge"), "less_equal": ("float32", "le"),
    "logical_and": ("bool", "and"), "logical_or": ("bool", "or"), "logical_xor": ("bool", "xor"),
    "isclose": ("float32", "and"),
}
_LAX_BINARY = ("add", "sub", "mul", "div", "max", "min", "pow", "rem", "lt", "le", "gt", "ge",
               "eq", "ne")
_OPERATORS = {"+": "add", "-": "sub", "*": "mul", "/": "div", "//": "rem", "%": "rem",
              "**": "pow", "<": "lt", "<=": "le", ">": "gt", ">=": "ge", "==": "eq", "!=": "ne"}
_BITWISE_OPERATORS = {"&": "and", "|": "or", "^": "xor"}


def _binary_rows() -> List[Row]:
    out: List[Row] = []
    for name, (dt, prim) in _BINARY.items():
        out_dt = "bool" if name in _COMPARISONS else "float32" if name.endswith("divide") and \
            name != "floor_divide" else dt
        out.append(Row(f"jnp.{name}(x, y)", (f"{dt}[8@x,16]", f"{dt}[1,16@y]"),
                       expect=f"{out_dt}[8@x,16@y]"))
        out.append(Row(f"jnp.{name}(x, y)", (f"{dt}[8@x,16]", f"{dt}[8@y,16]"), expect=_bcast(prim)))
    for name in _LAX_BINARY:
        out_dt = "bool" if name in ("lt", "le", "gt", "ge", "eq", "ne") else "float32"
        out.append(Row(f"lax.{name}(x, y)", (A, R), expect=f"{out_dt}[8@x,16]"))
        out.append(Row(f"lax.{name}(x, y)", (A, AY), expect=_bcast(name)))
    for sym, prim in _OPERATORS.items():
        out_dt = "bool" if prim in ("lt", "le", "gt", "ge", "eq", "ne") else "float32"
        if sym != "//":  # see _FLOOR_DIVIDE
            out.append(Row(f"x {sym} y", (A, B), expect=f"{out_dt}[8@x,16@y]"))
        out.append(Row(f"x {sym} y", (A, AY), expect=_bcast(prim)))
    for sym, prim in _BITWISE_OPERATORS.items():
        out.append(Row(f"x {sym} y", (I, "int32[8,16@y]"), expect="int32[8@x,16@y]"))
        out.append(Row(f"x {sym} y", (I, IY), expect=_bcast(prim)))
    return out


_COMPARISONS = ("greater", "less", "equal", "not_equal", "greater_equal", "less_equal",
                "logical_and", "logical_or", "logical_xor", "isclose")

_DTYPE_ROWS = rows(
    Row("x + 1.0", (I,), expect="~float32[8@x,16]"),
    Row("x + 1.0", (A,), expect=A),
    Row("x + 1", (I,), expect="int32[8@x,16]"),
    Row("x * 2", ("float32[]",), expect="float32[]"),
    Row("x * 2", ("~float32[]",), expect="~float32[]"),
    Row("x + y", ("int8[8@x,16]", I), expect="int32[8@x,16]"),
    Row("x + y", ("uint8[8@x,16]", "int8[16]"), expect="int16[8@x,16]"),
    Row("x + y", ("uint8[8@x,16]", "uint32[16]"), expect="uint32[8@x,16]"),
    Row("x - y", ("int16[8@x,16]", "uint8[16@y]"), expect="int16[8@x,16@y]"),
    Row("x + y", ("bfloat16[8@x,16]", "float16[8,16]"), expect="float32[8@x,16]"),
    Row("x + y", ("bfloat16[8@x,16]", A), expect="float32[8@x,16]"),
    Row("x + y", ("int32[8@x,16]", "float16[16]"), expect="float16[8@x,16]"),
    Row("x / 2", (I,), expect="float32[8@x,16]"),
    Row("x / y", (I, "int32[16@y]"), expect="float32[8@x,16@y]"),
    Row("lax.div(x, y)", (I, I), expect="int32[8@x,16]"),
    Row("x + y", ("float32[8@(x,y),16]", A), expect=_bcast("add")),
    Row("x + y", ("float32[1,16]", A), expect="float32[8@x,16]"),
    Row("x + y", ("float32[16]", C), expect="float32[8@x,16@y]"),
    Row("x + y", (C, "float32[16@x]"), expect=_bcast("add")),
    # a broadcast may not put one axis on two dims (the first step of a pairwise distance)
    Row("x[:, None] + x[None, :]", ("float32[8@x]",),
        expect=Raises(Duplicate, "add operation with inputs: .* produces an illegally sharded "
                                 "result")),
    Row("x * y", ("float32[8@x,1]", "float32[1,8@x]"),
        expect=Raises(Duplicate, "mul operation with inputs: .* produces an illegally sharded "
                                 "result")),
    Row("x - y", ("float32[8@x,1]", "float32[1,8@y]"), expect="float32[8@x,8@y]"),
    Row("x < 0.5", (A,), expect="bool[8@x,16]"),
    Row("x > y", (I, "float32[16@y]"), expect="bool[8@x,16@y]"),
    Row("lax.conj(x)", (C,), expect="complex64[8@x,16@y]"),
    Row("lax.conj(x)", ("complex64[8@x]",), expect="complex64[8@x]"),
)

# float floor division selects between its operands (jnp's _float_divmod): with no
# broadcasting needed they must be sharded alike
_FLOOR_DIVIDE = rows(
    Row("x // y", (A, B), expect=Raises(Operands, "select cases must have the same shardings",
                                         "select-cases")),
    Row("x // y", (A, R), expect=Raises(Operands, "select `which` must be scalar or have the same "
                                                  "sharding as cases", "select-condition")),
    Row("jnp.floor_divide(x, y)", (R, A), expect=Raises(Operands, "select cases must have the same "
                                                                  "shardings", "select-cases")),
    Row("x // y", (A, "float32[16@y]"), expect=C),
    Row("x // y", (A, A), expect=A),
    Row("x // 2.0", (A,), expect=A),
    Row("x // y", (I, "int32[8,16@y]"), expect="int32[8@x,16@y]"),
    Row("x // y", (I, IY), expect=_bcast("div")),
    Row("x ** y", (I, IY), expect=_bcast(None)),
)

_UNARY_SAME = ["jnp." + n for n in ("negative", "positive", "square", "sign", "floor", "ceil",
                                    "round", "trunc", "conj", "conjugate", "abs", "absolute")]
_UNARY_SAME += ["lax." + n for n in ("neg", "sign", "floor", "ceil", "round", "square", "abs")]
_UNARY_FLOAT = ["jnp." + n for n in (
    "exp", "exp2", "log", "log1p", "log2", "log10", "expm1", "sqrt", "cbrt", "tanh", "sinh",
    "cosh", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh",
    "reciprocal", "sinc", "deg2rad", "rad2deg", "fabs", "rint")]
_UNARY_FLOAT += ["lax." + n for n in (
    "exp", "exp2", "log", "log1p", "expm1", "sqrt", "rsqrt", "cbrt", "tanh", "sinh", "cosh",
    "sin", "cos", "tan", "asin", "acos", "atan", "asinh", "acosh", "atanh", "erf", "erfc",
    "erf_inv", "logistic")]
_UNARY_FLOAT += ["jax.scipy.special." + n for n in ("erf", "erfc", "expit")]
_NN = ["jax.nn." + n for n in (
    "relu", "relu6", "hard_tanh", "gelu", "silu", "swish", "sigmoid", "softplus", "elu", "selu",
    "celu", "log_sigmoid", "soft_sign", "hard_sigmoid", "hard_silu", "hard_swish", "mish",
    "squareplus", "sparse_plus", "tanh", "leaky_relu", "softmax", "log_softmax", "standardize")]
# what stays integer on an int32 input, what becomes float32
_ON_INT32 = {"jnp.negative": "int32", "jnp.sign": "int32", "jnp.floor": "int32",
             "jnp.round": "int32", "jnp.square": "int32", "jnp.abs": "int32", "jnp.exp": "float32",
             "jnp.sqrt": "float32", "jnp.fabs": "float32", "jnp.rint": "float32",
             "jnp.reciprocal": "float32", "jax.nn.relu": "int32", "jax.nn.gelu": "float32",
             "jax.nn.softmax": "float32"}


def _unary_rows() -> List[Row]:
    out = [Row(f"{f}(x)", (C,), expect=C) for f in _UNARY_SAME + _UNARY_FLOAT + _NN]
    out += [Row(f"{f}(x)", (I,), expect=f"{dt}[8@x,16]") for f, dt in _ON_INT32.items()]
    out += rows(Row("jnp.abs(x)", ("complex64[8@x,4]",), expect="float32[8@x,4]"),
                Row("jnp.sqrt(x)", ("~float32[]",), expect="~float32[]"),
                Row("jnp.exp(x)", ("~int32[]",), expect="~float32[]"),
                Row("-x", (C,), expect=C), Row("+x", (I,), expect=I),
                Row("~x", (I,), expect=I), Row("abs(x)", (C,), expect=C),
                Row("x.conj()", (C,), expect=C), Row("x.round()", (C,), expect=C),
                Row("x.copy()", (C,), expect=C),
                Row("x.block_until_ready()", (C,), expect=C, mode="eager"))
    return out


_SELECT_ROWS = rows(
    Row("jnp.where(x, y, z)", (BO, A, A), expect=A),
    Row("jnp.where(x, y, 0.0)", (BO, A), expect=A),
    Row("jnp.where(x, y, z)", (BO, A, "float32[16]"), expect=A),
    Row("jnp.where(x, y, z)", ("bool[8,16]", A, "float32[16@y]"), expect=C),
    Row("jnp.where(x, y, z)", (BO, A, I), expect=A),
    Row("jnp.where(x, y, z)", (BO, A, R),
        expect=Raises(Operands, "select cases must have the same shardings", "select-cases")),
    Row("jnp.where(x, y, z)", ("bool[8,16]", A, A),
        expect=Raises(Operands, "select `which` must be scalar or have the same sharding",
                      "select-condition")),
    Row("jnp.where(x, y, 0.0)", (BO, AY),
        expect=Raises(Operands, "got incompatible shardings for broadcasting", "select-broadcast")),
    Row("lax.select(x, y, z)", (BO, A, A), expect=A),
    Row("lax.select(x, y, z)", (BO, A, C),
        expect=Raises(Operands, "select cases must have the same shardings", "select-cases")),
)

_MISC_ELEMENTWISE = rows(
    Row("jnp.clip(x, 0.0, 1.0)", (C,), expect=C),
    Row("jnp.clip(x, y, z)", (A, "float32[16@y]", "float32[16]"), expect=C),
    Row("jnp.clip(x, y)", (A, AY), expect=_bcast(None)),
    Row("x.clip(0, 1)", (I,), expect=I),
    Row("jnp.astype(x, jnp.bfloat16)", (C,), expect="bfloat16[8@x,16@y]"),
    Row("x.astype(jnp.int32)", (C,), expect="int32[8@x,16@y]"),
    Row("x.astype('float16')", ("~float32[8@x]",), expect="float16[8@x]"),
    Row("jnp.zeros_like(x)", (C,), expect=C),
    Row("jnp.ones_like(x, dtype=jnp.int32)", (C,), expect="int32[8@x,16@y]"),
    Row("jnp.empty_like(x)", ("~float32[8@x]",), expect="~float32[8@x]"),
    Row("jnp.full_like(x, 2.0)", (C,), expect=C, static=UNKNOWN),
    Row("jnp.full_like(x, 2, dtype=jnp.int8)", (C,), expect="int8[8@x,16@y]"),
    Row("jax.nn.one_hot(x, 4)", ("int32[8@x]",), expect="float32[8@x,4]"),
    Row("jax.nn.one_hot(x, 4, dtype=jnp.bfloat16)", ("int32[8@x,4@y]",), expect="bfloat16[8@x,4@y,4]"),
)

ELEMENTWISE = _binary_rows() + _DTYPE_ROWS + _FLOOR_DIVIDE + _unary_rows() + _SELECT_ROWS + _MISC_ELEMENTWISE

# -- contractions -----------------------------------------------------------------------------
_AMBIGUOUS = Raises(Contract, "Contracting dimensions are sharded and it is ambiguous", "ambiguous")
_INCONSISTENT = Raises(Contract, "dot_general requires contracting dimensions to have consistent "
                                 "sharding", "contracting")
_INCONSISTENT_012 = Raises(Contract, "Contracting dimensions are sharded and it is ambiguous",
                           "contracting")  # JAX 0.12 words it as the ambiguous case
_BATCH_012 = Raises(Contract, "dot_general requires lhs batch dimensions and rhs batch dimensions "
                              "to have the same sharding", "batch")

CONTRACTION = rows(
    Row("x @ y", (A, "float32[16,4]"), expect="float32[8@x,4]"),
    Row("x @ y", (A, "float32[16,4@y]"), expect="float32[8@x,4@y]"),
    Row("x @ y", (B, "float32[16,4]"), expect="float32[8,4]"),
    Row("x @ y", (B, "float32[16@y,4]"), expect=_AMBIGUOUS),
    Row("x @ y", ("float32[8,16@x]", "float32[16@y,4]"), expect=_INCONSISTENT,
        jax012=_INCONSISTENT_012),
    Row("x @ x.T", (A,), expect=Raises(Duplicate, "produces an illegally sharded result")),
    Row("x @ y", ("float32[16@x]", "float32[16@x]"), expect=_AMBIGUOUS),
    Row("x @ y", ("float32[16]", "float32[16@y]"), expect="float32[]"),
    Row("x @ y", (A, "float32[16]"), expect="float32[8@x]"),
    Row("x @ y", ("float32[8]", A), expect="float32[16]"),
    Row("x @ y", ("float32[2@x,8,16]", "float32[2@x,16,4@y]"), expect="float32[2@x,8,4@y]"),
    Row("x @ y", ("float32[2@x,8,16]", "float32[2,16,4@y]"),
        expect=Raises(Contract, "ValueError: Incompatible types for matmul arguments", "matmul-batch")),
    Row("x @ y", ("float32[2,8,16]", "float32[16,4@y]"), expect="float32[2,8,4@y]"),
    Row("jnp.matmul(x, y, out_sharding=P('x', None))", (C, "float32[16@y,4]"), expect="float32[8@x,4]"),
    Row("jnp.matmul(x, y, out_sharding=P(None, None, unreduced={'y'}))", (C, "float32[16@y,4]"),
        expect="float32[8,4]{U:y}"),
    Row("jnp.matmul(x, y)", (C, "float32[16@y,4]"), expect=_AMBIGUOUS),
    Row("jnp.dot(x, y)", (A, "float32[16,4@y]"), expect="float32[8@x,4@y]"),
    Row("jnp.dot(x, y, out_sharding=P('x'))", (C, "float32[16@y,4]"), expect="float32[8@x,4]"),
    Row("x.dot(y)", (A, "float32[16,4@y]"), expect="float32[8@x,4@y]"),
    Row("jnp.einsum('bf,fd->bd', x, y)", (A, "float32[16,4@y]"), expect="float32[8@x,4@y]"),
    Row("jnp.einsum('bf,fd->db', x, y)", (A, "float32[16,4@y]"), expect="float32[4@y,8@x]"),
    Row("jnp.einsum('bf,fd->bd', x, y)", ("float32[8,16@x]", "float32[16@y,4]"), expect=_INCONSISTENT,
        jax012=_INCONSISTENT_012),
    Row("jnp.einsum('bf,fd->bd', x, y)", (B, "float32[16@y,4]"), expect=_AMBIGUOUS),
    Row("jnp.einsum('bf,fd->bd', x, y, out_sharding=P('x', None))", (C, "float32[16@y,4]"),
        expect="float32[8@x,4]"),
    Row("jnp.einsum('bqd,bkd->bqk', x, y)", ("float32[2@x,8,4]", "float32[2@x,8,4]"),
        expect="float32[2@x,8,8]"),
    Row("jnp.einsum('i,j->ij', x, y)", ("float32[8@x]", "float32[4@x]"),
        expect=Raises(Duplicate, "produces an illegally sharded result")),
    Row("jnp.einsum('ij->ji', x)", (C,), expect="float32[16@y,8@x]"),
    Row("jnp.einsum('ij->i', x)", (C,), expect="float32[8@x]"),
    Row("jnp.einsum('ij,k->ik', x, y)", (C, "float32[4]"), expect="float32[8@x,4]"),
    Row("lax.dot_general(x, y, (((1,), (0,)), ((), ())))", (A, "float32[16,4@y]"),
        expect="float32[8@x,4@y]"),
    Row("lax.dot_general(x, y, (((2,), (1,)), ((0,), (0,))))",
        ("float32[4@x,8,16]", "float32[4@y,16,2]"),
        expect=Raises(Contract, "dot_general requires lhs batch dimensions and rhs batch dimensions "
                                "to have the consistent sharding", "batch"), jax012=_BATCH_012),
    Row("lax.dot_general(x, y, (((2,), (1,)), ((0,), (0,))))",
        ("float32[4@x,8,16]", "float32[4,16,4@y]"), expect="float32[4@x,8,4@y]",
        jax012=_BATCH_012),  # 0.12 wants batch dims sharded alike even if one side is not
    Row("lax.dot_general(x, y, (((1,), (0,)), ((), ())), out_sharding=P('x'))",
        (C, "float32[16@y,4]"), expect="float32[8@x,4]"),
)

# -- reductions -------------------------------------------------------------------------------
_REDUCTIONS = {  # name -> the result dtype on float32 / on int32
    "sum": ("float32", "int32"), "prod": ("float32", "int32"), "mean": ("float32", "float32"),
    "max": ("float32", "int32"), "min": ("float32", "int32"), "amax": ("float32", "int32"),
    "amin": ("float32", "int32"), "var": ("float32", "float32"), "std": ("float32", "float32"),
    "argmax": ("int32", "int32"), "argmin": ("int32", "int32"), "any": ("bool", "bool"),
    "all": ("bool", "bool"), "nansum": ("float32", "int32"), "nanmean": ("float32", "float32"),
    "nanmax": ("float32", "int32"), "nanmin": ("float32", "int32"), "nanprod": ("float32", "int32"),
    "nanvar": ("float32", "float32"), "nanstd": ("float32", "float32"),
}
_METHODS = ("sum", "prod", "mean", "max", "min", "var", "std", "argmax", "argmin", "any", "all")


def _reduction_rows() -> List[Row]:
    out: List[Row] = []
    for name, (on_float, on_int) in _REDUCTIONS.items():
        out.append(Row(f"jnp.{name}(x, axis=0)", (C,), expect=f"{on_float}[16@y]"))
        out.append(Row(f"jnp.{name}(x, axis=1)", (I,), expect=f"{on_int}[8@x]"))
    for name in _METHODS:
        out.append(Row(f"x.{name}(axis=1)", (C,), expect=f"{_REDUCTIONS[name][0]}[8@x]"))
    return out + rows(
        Row("jnp.sum(x)", (C,), expect="float32[]"),
        Row("jnp.sum(x, axis=(0, 1))", (C,), expect="float32[]"),
        Row("jnp.sum(x, axis=-1, keepdims=True)", (C,), expect="float32[8@x,1]"),
        Row("jnp.max(x, axis=1, keepdims=True)", (A,), expect="float32[8@x,1]"),
        Row("jnp.argmax(x)", (C,), expect="int32[]"),
        Row("jnp.argmax(x, axis=0, keepdims=True)", (C,), expect="int32[1,16@y]"),
        Row("jnp.sum(x, axis=0)", ("bool[8@x,16@y]",), expect="int32[16@y]"),
        Row("jnp.sum(x, axis=0)", ("uint8[8@x,16@y]",), expect="uint32[16@y]"),
        Row("jnp.sum(x, axis=0)", ("int8[8@x,16@y]",), expect="int32[16@y]"),
        Row("jnp.prod(x, axis=0)", ("int16[8@x,16@y]",), expect="int32[16@y]"),
        Row("jnp.max(x, axis=0)", ("int8[8@x,16@y]",), expect="int8[16@y]"),
        Row("jnp.mean(x, axis=0)", ("bfloat16[8@x,16@y]",), expect="bfloat16[16@y]"),
        Row("jnp.sum(x, axis=0, dtype=jnp.float16)", (C,), expect="float16[16@y]"),
        Row("jnp.mean(x)", ("~float32[8]",), expect="float32[]"),
        Row("jnp.sum(x, axis=0)", ("~float32[8,4@y]",), expect="float32[4@y]"),
        Row("jnp.max(x)", ("~int32[8]",), expect="int32[]"),
        Row("jnp.var(x)", ("~int32[8]",), expect="float32[]"),
        Row("jax.nn.logsumexp(x, axis=0)", (C,), expect="float32[16@y]"),
        Row("jax.nn.logsumexp(x, axis=1)", (I,), expect="float32[8@x]"),
        Row("jax.scipy.special.logsumexp(x, axis=1, keepdims=True)", (C,), expect="float32[8@x,1]"),
        Row("jnp.median(x, axis=1)", (A,), expect="float32[8@x]"),
        Row("jnp.median(x, axis=1)", (I,), expect="float32[8@x]"),
        Row("jnp.median(x, axis=0)", (A,),
            expect=Raises(Along, "Arguments to sort must be unsharded over the sorting dimension", "sort")),
        Row("jnp.median(x)", (A,),
            expect=Raises(Along, "Arguments to sort must be unsharded over the sorting dimension", "sort")),
        Row("jnp.median(x)", (B,), expect=Raises(Reshape, "This reshape is not supported")),
        Row("jnp.median(x)", (R,), expect="float32[]"),
        Row("jnp.linalg.norm(x, axis=1)", (C,), expect="float32[8@x]"),
        Row("jnp.linalg.norm(x)", (C,), expect="float32[]"),
        Row("jnp.linalg.norm(x, axis=0, keepdims=True)", (I,), expect="float32[1,16]"),
        Row("jnp.linalg.vector_norm(x, axis=1)", (C,), expect="float32[8@x]"),
        Row("jnp.linalg.vector_norm(x, ord=1)", (C,), expect="float32[]"),
    )


REDUCTION = _reduction_rows()

# -- layout -----------------------------------------------------------------------------------
_RESHAPE_ERROR = Raises(Reshape, "This reshape is not supported. Please specify the sharding of the "
                                 "output via the `out_sharding` argument")
LAYOUT = rows(
    Row("jnp.transpose(x)", (C,), expect="float32[16@y,8@x]"),
    Row("jnp.transpose(x, (1, 0, 2))", ("float32[2@x,4@y,3]",), expect="float32[4@y,2@x,3]"),
    Row("lax.transpose(x, (1, 0))", (C,), expect="float32[16@y,8@x]"),
    Row("x.transpose()", (C,), expect="float32[16@y,8@x]"),
    Row("x.transpose(1, 0)", (C,), expect="float32[16@y,8@x]"),
    Row("x.transpose((1, 0))", (C,), expect="float32[16@y,8@x]"),
    Row("x.T", (C,), expect="float32[16@y,8@x]"),
    Row("x.mT", ("float32[2,8@x,16@y]",), expect="float32[2,16@y,8@x]"),
    Row("jnp.swapaxes(x, 0, 2)", ("float32[2@x,4@y,3]",), expect="float32[3,4@y,2@x]"),
    Row("x.swapaxes(0, 1)", (C,), expect="float32[16@y,8@x]"),
    Row("jnp.matrix_transpose(x)", ("float32[2,8@x,16@y]",), expect="float32[2,16@y,8@x]"),
    Row("jnp.expand_dims(x, 1)", (C,), expect="float32[8@x,1,16@y]"),
    Row("jnp.expand_dims(x, (0, -1))", (C,), expect="float32[1,8@x,16@y,1]"),
    Row("lax.expand_dims(x, (0,))", (C,), expect="float32[1,8@x,16@y]"),
    Row("jnp.squeeze(x)", ("float32[1,8@x,1]",), expect="float32[8@x]"),
    Row("jnp.squeeze(x, axis=0)", ("float32[1,8@x,1]",), expect="float32[8@x,1]"),
    Row("lax.squeeze(x, (2,))", ("float32[1,8@x,1]",), expect="float32[1,8@x]"),
    Row("x.squeeze()", ("float32[1,8@x,1]",), expect="float32[8@x]"),
    Row("jnp.reshape(x, (128,))", (C,), expect="float32[128@(x,y)]"),
    Row("jnp.reshape(x, (128,))", (B,), expect=_RESHAPE_ERROR),
    Row("jnp.reshape(x, (2, 4, 16))", (A,), expect="float32[2@x,4,16]"),
    Row("jnp.reshape(x, (4, 4, 8))", ("float32[16@y,8]",), expect="float32[4@y,4,8]"),
    Row("jnp.reshape(x, (2, 8, 8))", ("float32[16@y,8]",), expect=_RESHAPE_ERROR),
    Row("jnp.reshape(x, (8, 2, 8))", (B,), expect=_RESHAPE_ERROR),
    Row("jnp.reshape(x, (8, 4, 4))", (B,), expect="float32[8,4@y,4]"),
    Row("jnp.reshape(x, (64, 2))", (C,), expect=_RESHAPE_ERROR),
    Row("jnp.reshape(x, (1, 8, 16, 1))", (C,), expect="float32[1,8@x,16@y,1]"),
    Row("jnp.reshape(x, (8, -1))", ("float32[8@x,4,4]",), expect="float32[8@x,16]"),
    Row("jnp.reshape(x, (128,))", (R,), expect="float32[128]"),
    Row("jnp.reshape(x, (128,), out_sharding=P('y'))", (B,), expect="float32[128@y]"),
    Row("lax.reshape(x, (128,))", (C,), expect="float32[128@(x,y)]"),
    Row("lax.reshape(x, (128,))", (B,), expect=_RESHAPE_ERROR),
    Row("x.reshape(128)", (B,), expect=_RESHAPE_ERROR),
    Row("x.reshape(4, 2, 16)", (A,), expect="float32[4@x,2,16]"),
    Row("x.reshape((2, 64))", (C,), expect=_RESHAPE_ERROR),
    Row("x.reshape(128, out_sharding=P('y'))", (B,), expect="float32[128@y]"),
    Row("jnp.ravel(x)", (C,), expect="float32[128@(x,y)]"),
    Row("jnp.ravel(x)", (B,), expect=_RESHAPE_ERROR),
    Row("x.ravel()", (A,), expect="float32[128@x]"),
    Row("x.flatten()", (B,), expect=_RESHAPE_ERROR),
    Row("jnp.split(x, 2, axis=1)", (C,), expect=("float32[8@x,8@y]", "float32[8@x,8@y]")),
    Row("jnp.split(x, 2)", (A,), expect=("float32[4@x,16]", "float32[4@x,16]")),
    Row("jnp.split(x, 8, axis=1)", (C,), expect=Raises(
        None, "split on sharded dims where out dim .* is not divisible by mesh axes"),
        static=UNKNOWN),
    Row("jnp.repeat(x, 3, axis=1)", (A,), expect="float32[8@x,48]"),
    Row("x.repeat(2, axis=0)", (B,), expect="float32[16,16@y]"),
    Row("jnp.repeat(x, 2, axis=1, out_sharding=P('x', 'y'))", (B,), expect="float32[8@x,32@y]"),
    Row("jnp.repeat(x, 2, axis=0)", (A,), expect=Raises(
        None, "Please pass sharding to `jnp.repeat` via `out_sharding`"), static=UNKNOWN),
    Row("jnp.tril(x)", (C,), expect=C),
    Row("jnp.broadcast_to(x, (3, 8, 16))", ("float32[8@x,1]",), expect="float32[3,8@x,16]"),
    Row("jnp.broadcast_to(x, (2, 8, 16))", (C,), expect="float32[2,8@x,16@y]"),
    Row("jnp.broadcast_to(x, (3, 8, 16))", ("float32[16]",), expect="float32[3,8,16]"),
    Row("jnp.broadcast_to(x, (2, 8, 16), out_sharding=P(None, 'x', 'y'))", (B,),
        expect="float32[2,8@x,16@y]"),
    Row("jnp.triu(x, 1)", (A,), expect=A),
)

# -- indexing ---------------------------------------------------------------------------------
_GATHER = "Use `.at\\[...\\].get\\(out_sharding=\\)` to provide output PartitionSpec for the gather"
_SLICE = "slicing on sharded dims where out dim .* is not divisible by mesh axes .* is not implemented"
INDEXING = rows(
    Row("x[0]", (A,), expect=Raises(Along, _GATHER, "gather"), mode="eager"),
    Row("x[:4]", (A,), expect=Raises(Along, _GATHER, "gather"), mode="eager"),
    Row("x[-1]", (A,), expect=Raises(Along, _GATHER, "gather"), mode="eager"),
    Row("x[:, 0]", (A,), expect="float32[8@x]", mode="eager"),
    Row("x[None]", (A,), expect="float32[1,8@x,16]", mode="eager"),
    Row("x[..., 2:6]", (A,), expect="float32[8@x,4]", mode="eager"),
    Row("x[0]", (A,), expect=Raises(Along, _SLICE, "slice")),
    Row("x[1:]", (A,), expect=Raises(Along, _SLICE, "slice")),
    Row("x[:2]", (AY,), expect=Raises(Along, _SLICE, "slice")),
    Row("x[:4]", (A,), expect="float32[4@x,16]"),
    Row("x[2:6]", (A,), expect="float32[4@x,16]"),
    Row("x[::2]", (A,), expect="float32[4@x,16]"),
    Row("x[:4]", ("float32[8@(x,y),16]",), expect=Raises(Along, _SLICE, "slice")),
    Row("x[y]", (A, "int32[2]"), expect=Raises(Along, _GATHER, "gather")),
    Row("x[y]", ("float32[16,8@y]", "int32[8@x]"), expect=Raises(Along, _GATHER, "gather")),
    Row("x[y]", ("float32[16,8@y]", "int32[8@x]"), expect=Raises(Along, _GATHER, "gather"),
        mode="eager"),
    Row("x[y]", ("float32[16,8]", "int32[8@y]"), expect=Raises(Along, _GATHER, "gather")),
    Row("x[y]", ("float32[16,8@y]", "int32[8]"), expect="float32[8,8@y]"),
    Row("x[y]", ("float32[16,8@y]", "int32[8]"), expect="float32[8,8@y]", mode="eager"),
    Row("x[y]", ("float32[16,8@x]", "int32[8,4]"), expect="float32[8,4,8@x]"),
    Row("x[y, :]", ("float32[16,8@y]", "int32[8]"), expect="float32[8,8@y]"),
    Row("x[:, 0]", (C,), expect=Raises(Along, _SLICE, "slice")),
    Row("x[:, 3]", (A,), expect="float32[8@x]"),
    Row("x[..., None]", (C,), expect="float32[8@x,16@y,1]"),
    Row("jnp.take(x, y, axis=0)", ("float32[16,8@y]", "int32[8]"), expect="float32[8,8@y]"),
    Row("jnp.take(x, y, axis=0)", ("float32[16,8@y]", "int32[8]"), expect="float32[8,8@y]",
        mode="eager"),
    Row("jnp.take(x, y, axis=0)", ("float32[16,8]", "int32[8@x,4]"),
        expect=Raises(Along, _GATHER, "gather")),
    Row("jnp.take(x, y, axis=0)", ("float32[16@y,8]", "int32[8]"),
        expect=Raises(Along, _GATHER, "gather")),
)

# -- joining ----------------------------------------------------------------------------------
_SAME_SHARDING = Raises(Operands, "All operands should have the same sharding", "same-sharding")
JOINING = rows(
    Row("jnp.concatenate([x, y], axis=1)", (A, "float32[8@x,4]"), expect="float32[8@x,20]"),
    Row("jnp.concatenate([x, y])", (A, "float32[4@x,16]"), expect="float32[12@x,16]"),
    Row("jnp.concatenate([x, y], axis=1)", (A, "float32[8,4]"), expect=_SAME_SHARDING),
    Row("jnp.concatenate((x, y), axis=-1)", ("int32[8@x,16]", A), expect="float32[8@x,32]"),
    Row("jnp.stack([x, y])", (A, A), expect="float32[2,8@x,16]"),
    Row("jnp.stack([x, y], axis=-1)", (C, C), expect="float32[8@x,16@y,2]"),
    Row("jnp.stack([x, y])", (A, B), expect=_SAME_SHARDING),
    Row("lax.dynamic_update_slice(x, y, (0, 0))", (A, "float32[8@x,4]"), expect=A),
    Row("lax.dynamic_update_slice(x, y, (0, 0))", (A, "float32[8,4]"),
        expect=Raises(Operands, "dynamic_update_slice operand sharding must be equal to update "
                                "sharding", "update")),
)

# -- along one axis ---------------------------------------------------------------------------
_CUMULATIVE = Raises(Along, "Input should be unsharded over the axis being reduced", "cumulative")
# JAX 0.12 rejects any roll along a sharded dim (0.10.2 only shifts its shards can't follow)
_ROLL_012 = Raises(Along, "`a` cannot be sharded on the axis being rolled over", "slice")
_REPLICATED = Raises(Along, "The input should be fully replicated when axis is not specified to "
                           "cum", "unspecified-axis")
_SORT = Raises(Along, "Arguments to sort must be unsharded over the sorting dimension", "sort")
ALONG_AXIS = rows(
    Row("jnp.cumsum(x, axis=1)", (A,), expect=A),
    Row("jnp.cumsum(x, axis=0)", (A,), expect=_CUMULATIVE),
    Row("jnp.cumsum(x)", (A,), expect=_REPLICATED),
    Row("jnp.cumsum(x)", (R,), expect="float32[128]"),
    Row("jnp.cumsum(x)", (B,), expect=_REPLICATED),
    Row("x.cumprod()", (B,), expect=_REPLICATED),
    Row("jnp.cumsum(x, axis=1)", (BO,), expect="int32[8@x,16]"),
    Row("jnp.cumsum(x, axis=1, dtype=jnp.float16)", (A,), expect="float16[8@x,16]"),
    Row("jnp.cumprod(x, axis=-1)", ("int8[8@x,16]",), expect="int8[8@x,16]"),
    Row("jnp.cumprod(x, axis=-1)", (BO,), expect="int32[8@x,16]"),
    Row("jnp.cumsum(x)", ("int8[8,16]",), expect="int8[128]"),
    Row("jnp.cumprod(x, axis=-1)", (B,), expect=_CUMULATIVE),
    Row("x.cumsum(axis=1)", (A,), expect=A),
    Row("x.cumprod(axis=0)", (A,), expect=_CUMULATIVE),
    Row("lax.cumsum(x, axis=1)", (A,), expect=A),
    Row("lax.cumsum(x)", (A,), expect=_CUMULATIVE),
    Row("lax.cumprod(x, axis=1)", (A,), expect=A),
    Row("lax.cummax(x, axis=1)", (I,), expect=I),
    Row("lax.cummin(x, axis=0)", (B,), expect=B),
    Row("lax.cumlogsumexp(x, axis=1)", (A,), expect=A),
    Row("lax.cumlogsumexp(x, axis=1)", (B,), expect=_CUMULATIVE),
    Row("jnp.sort(x)", (A,), expect=A),
    Row("jnp.sort(x)", (B,), expect=_SORT),
    Row("jnp.sort(x, axis=0)", (A,), expect=_SORT),
    Row("jnp.sort(x, axis=None)", (A,), expect=_SORT),
    Row("jnp.sort(x, axis=None)", (R,), expect="float32[128]"),
    Row("jnp.sort(x, axis=None)", (B,), expect=_RESHAPE_ERROR),
    Row("jnp.argsort(x, axis=None)", (A,), expect=_SORT),
    Row("x.sort()", (C,), expect=_SORT),
    Row("x.sort(axis=0)", (B,), expect=B),
    Row("lax.sort(x)", (A,), expect=A),
    Row("lax.sort(x, dimension=0)", (A,), expect=_SORT),
    Row("jnp.argsort(x)", (A,), expect="int32[8@x,16]"),
    Row("jnp.argsort(x, axis=0)", (A,), expect=_SORT),
    Row("x.argsort(axis=0)", (B,), expect="int32[8,16@y]"),
    Row("lax.top_k(x, 2)", (A,), expect=("float32[8@x,2]", "int32[8@x,2]")),
    Row("lax.top_k(x, 2)", (B,), expect=Raises(Along, "The input should be unsharded over the axis "
                                                      "along which to compute the top_k values", "top_k")),
    Row("jnp.roll(x, 2, axis=0)", (A,), expect=A, jax012=_ROLL_012),
    Row("jnp.roll(x, -2, axis=0)", (A,), expect=A, jax012=_ROLL_012),
    Row("jnp.roll(x, 1, axis=0)", (A,), expect=Raises(Along, _SLICE, "slice"), jax012=_ROLL_012),
    Row("jnp.roll(x, 2, axis=0)", (AY,), expect=Raises(Along, _SLICE, "slice"), jax012=_ROLL_012),
    Row("jnp.roll(x, 3, axis=1)", (A,), expect=A),
    Row("jnp.roll(x, 2)", (A,), expect=A, jax012=_ROLL_012),
    Row("jnp.roll(x, 1)", (A,), expect=Raises(Along, _SLICE, "slice"), jax012=_ROLL_012),
    Row("jnp.roll(x, 1)", (B,), expect=_RESHAPE_ERROR),
    Row("jnp.take_along_axis(x, y, axis=-1)", (A, "int32[8@x,1]"), expect="float32[8@x,1]"),
    Row("jnp.take_along_axis(x, y, axis=-1)", (R, "int32[8@x,1]"), expect="float32[8@x,1]"),
    Row("jnp.take_along_axis(x, y, axis=1)", (A, "int32[8,4@y]"),
        expect=Raises(Along, _GATHER, "gather")),
    Row("jnp.take_along_axis(x, y, axis=-1)", (B, "int32[8,1]"),
        expect=Raises(Along, _GATHER, "gather")),
    Row("jnp.take_along_axis(x, y, axis=0)", ("float32[8,16@y]", "int32[2,16]"),
        expect="float32[2,16@y]"),
    Row("jnp.take_along_axis(x, y, axis=-1)", (A, "int32[8@y,1]"), expect=Raises(None, _GATHER),
        static=UNKNOWN),
)

# -- resizing a dim in place: the new length of a sharded dim must divide by its axes' size --
_PAD = Raises(Along, "padding on sharded dims where out dim .* is not divisible", "pad")
_DSLICE = Raises(Along, "dynamic_slice on sharded dims where out dim .* is not divisible",
                 "dynamic_slice")
RESIZING = rows(
    Row("jnp.pad(x, ((1, 0), (0, 0)))", (C,), expect=_PAD),
    Row("jnp.pad(x, ((1, 1), (0, 0)))", (C,), expect="float32[10@x,16@y]"),
    Row("jnp.pad(x, ((0, 0), (2, 2)))", (C,), expect="float32[8@x,20@y]"),
    Row("jnp.pad(x, ((0, 0), (0, 3)))", (C,), expect=_PAD),
    Row("jnp.pad(x, 1)", (C,), expect=_PAD),
    Row("jnp.pad(x, 2)", (C,), expect="float32[12@x,20@y]"),
    Row("jnp.pad(x, (1, 1))", (C,), expect=_PAD),
    Row("jnp.pad(x, 1)", (R,), expect="float32[10,18]"),
    Row("jnp.pad(x, (1, 3), constant_values=2.0)", (A,), expect="float32[12@x,20]"),
    Row("lax.pad(x, 0.0, ((1, 0, 0), (0, 0, 0)))", (C,), expect=_PAD),
    Row("lax.pad(x, 0.0, ((0, 0, 1), (0, 0, 0)))", (C,), expect=_PAD),
    Row("lax.pad(x, 0.0, ((1, 1, 0), (0, 0, 0)))", (C,), expect="float32[10@x,16@y]"),
    Row("lax.dynamic_slice_in_dim(x, 2, 4, axis=1)", (C,), expect="float32[8@x,4@y]"),
    Row("lax.dynamic_slice_in_dim(x, 2, 3, axis=1)", (C,), expect=_DSLICE),
    Row("lax.dynamic_slice(x, (0, 0), (4, 16))", (C,), expect="float32[4@x,16@y]"),
    Row("lax.dynamic_slice(x, (0, 0), (1, 16))", (C,), expect=_DSLICE),
    Row("lax.dynamic_slice(x, (0, 0), (1, 3))", (R,), expect="float32[1,3]"),
    Row("lax.dynamic_index_in_dim(x, 2, axis=0)", (C,), expect=_DSLICE),
    # every dim cut to 1: rejected by JAX 0.10, replicated since 0.11; left unknown
    Row("lax.dynamic_slice_in_dim(x, 3, 1)", ("float32[8@x]",), expect=_DSLICE,
        static=UNKNOWN, jax012="float32[1]"),
    Row("lax.dynamic_index_in_dim(x, 2, axis=1, keepdims=False)", (A,), expect="float32[8@x]"),
)

# -- linear algebra ---------------------------------------------------------------------------
M = "float32[4,8@x,8]"  # a matrix dim sharded
MB = "float32[4@x,8,8]"  # a batch dim sharded
MR = "float32[4,8,8]"


def _factor(primitive: str) -> Raises:
    return Raises(Along, f"Input 0 to {primitive} must be unsharded on non-batch dimensions",
                  "factorization")


_SYMMETRIZE = Raises(Along, "add operation with inputs: .* produces an illegally sharded result",
                     "symmetrize")
LINALG = rows(
    Row("jnp.linalg.inv(x)", (M,), expect=_factor("lu")),
    Row("jnp.linalg.inv(x)", (MR,), expect=MR),
    Row("jnp.linalg.inv(x)", (MB,), expect=Raises(None, "ValueError: Mapped away dimension"),
        static=UNKNOWN),
    Row("jnp.linalg.det(x)", (M,), expect=_factor("lu")),
    Row("jnp.linalg.det(x)", (MB,), expect="float32[4@x]"),
    Row("jnp.linalg.det(x)", ("int32[8,8]",), expect="float32[]"),
    Row("jnp.linalg.slogdet(x)", (MB,), expect=("float32[4@x]", "float32[4@x]")),
    Row("jnp.linalg.slogdet(x)", ("float32[8,8@y]",), expect=_factor("lu")),
    Row("jnp.linalg.solve(x, y)", (M, MR), expect=_factor("lu")),
    Row("jnp.linalg.solve(x, y)", ("float32[8,8]", "float32[8]"), expect="float32[8]"),
    Row("jnp.linalg.solve(x, y)", (MB, "float32[4@x,8,3]"), expect="float32[4@x,8,3]",
        static=UNKNOWN),
    Row("jnp.linalg.qr(x)", (M,), expect=_factor("qr")),
    Row("jnp.linalg.qr(x)", ("float32[4@x,8,6]",), expect=("float32[4@x,8,6]", "float32[4@x,6,6]")),
    Row("jnp.linalg.svd(x)", (M,), expect=_factor("svd")),
    Row("jnp.linalg.svd(x)", ("float32[4@x,8,6]",),
        expect=("float32[4@x,8,8]", "float32[4@x,6]", "float32[4@x,6,6]")),
    Row("jnp.linalg.svd(x, full_matrices=False)", ("float32[4@x,8,6]",),
        expect=("float32[4@x,8,6]", "float32[4@x,6]", "float32[4@x,6,6]")),
    Row("jnp.linalg.svd(x, compute_uv=False)", ("float32[4@x,8,6]",), expect="float32[4@x,6]"),
    Row("jnp.linalg.pinv(x)", (M,), expect=_factor("svd")),
    Row("jnp.linalg.pinv(x)", ("float32[4@x,8,6]",), expect="float32[4@x,6,8]"),
    Row("jnp.linalg.eig(x)", (M,), expect=_factor("eig")),
    Row("jnp.linalg.eig(x)", (MB,), expect=("complex64[4@x,8]", "complex64[4@x,8,8]")),
    Row("jnp.linalg.eigh(x)", (M,), expect=_SYMMETRIZE),
    Row("jnp.linalg.eigh(x)", (MB,), expect=("float32[4@x,8]", "float32[4@x,8,8]")),
    Row("jnp.linalg.eigvalsh(x)", (M,), expect=_SYMMETRIZE),
    Row("jnp.linalg.eigvalsh(x)", (MB,), expect="float32[4@x,8]"),
    Row("jnp.linalg.cholesky(x)", ("float32[8@x,8]",), expect=_SYMMETRIZE),
    Row("jnp.linalg.cholesky(x)", (MR,), expect=MR),
    Row("jnp.linalg.cholesky(x)", (MB,), expect=Raises(None, "select `which` must be scalar"),
        static=UNKNOWN),
    Row("jnp.linalg.matrix_power(x, 3)", ("float32[8@x,8]",), expect="float32[8@x,8]"),
    Row("jnp.linalg.matrix_power(x, 3)", ("float32[8,8@y]",), expect="float32[8,8@y]"),
    Row("jnp.linalg.matrix_power(x, 2)", ("float32[8@x,8@y]",), expect=_INCONSISTENT,
        jax012=_INCONSISTENT_012),
    Row("jnp.linalg.matrix_power(x, 0)", ("float32[8@x,8]",), expect="float32[8,8]"),
    Row("jnp.linalg.matrix_power(x, -1)", ("float32[8@x,8]",), expect=_factor("lu")),
    Row("jnp.linalg.matrix_power(x, -1)", ("float32[8,8]",), expect="float32[8,8]"),
    Row("jax.lax.linalg.lu(x)", (M,), expect=_factor("lu")),
    Row("jax.lax.linalg.lu(x)", (MB,), expect=("float32[4@x,8,8]", "int32[4@x,8]", "int32[4@x,8]")),
    Row("jax.lax.linalg.qr(x)", (M,), expect=_factor("qr")),
    Row("jax.lax.linalg.qr(x)", ("float32[4@x,8,6]",), expect=("float32[4@x,8,8]", "float32[4@x,8,6]")),
    Row("jax.lax.linalg.svd(x)", ("float32[4@x,8,6]",),
        expect=("float32[4@x,8,8]", "float32[4@x,6]", "float32[4@x,6,6]")),
    Row("jax.lax.linalg.svd(x)", (M,), expect=_factor("svd")),
    Row("jax.lax.linalg.eigh(x)", (M,), expect=_SYMMETRIZE),
    Row("jax.lax.linalg.eigh(x)", (MB,), expect=("float32[4@x,8,8]", "float32[4@x,8]")),
    Row("jax.lax.linalg.cholesky(x)", (M,), expect=_SYMMETRIZE),
    Row("jax.lax.linalg.cholesky(x)", (MR,), expect=MR),
    Row("jax.lax.linalg.triangular_solve(x, y, left_side=True)", ("float32[4,8,8@x]", MR),
        expect=Raises(Along, "triangular solve input `a` must be unsharded on the contracting axis",
                      "triangular_solve")),
    Row("jax.lax.linalg.triangular_solve(x, y)", ("float32[4,8@x,8]", MR),
        expect=Raises(Along, "triangular solve input `a` must be unsharded on the contracting axis",
                      "triangular_solve")),
    Row("jax.lax.linalg.triangular_solve(x, y, left_side=True)", (M, MR), expect=M, static=UNKNOWN),
    Row("jax.scipy.linalg.lu(x)", ("float32[8,8@x]",), expect=_factor("lu")),
    Row("jax.scipy.linalg.lu(x)", ("float32[8,6]",), expect=("float32[8,8]", "float32[8,6]", "float32[6,6]")),
    Row("jax.scipy.linalg.cholesky(x)", ("float32[8@x,8]",), expect=_factor("cholesky")),
    Row("jax.scipy.linalg.cholesky(x)", ("float32[8,8]",), expect="float32[8,8]"),
    Row("jax.scipy.linalg.inv(x)", ("float32[8,8@x]",), expect=_factor("lu")),
    Row("jax.scipy.linalg.inv(x)", ("float32[8,8]",), expect="float32[8,8]"),
    Row("jax.scipy.linalg.det(x)", ("float32[8,8@x]",), expect=_factor("lu")),
    Row("jax.scipy.linalg.det(x)", (MB,), expect="float32[4@x]"),
    Row("jax.scipy.linalg.qr(x)", ("float32[8@x,8]",), expect=_factor("qr")),
    Row("jax.scipy.linalg.qr(x)", ("float32[8,6]",), expect=("float32[8,8]", "float32[8,6]")),
    Row("jax.scipy.linalg.svd(x)", ("float32[8@x,8]",), expect=_factor("svd")),
    Row("jax.scipy.linalg.svd(x)", ("float32[8,6]",), expect=("float32[8,8]", "float32[6]", "float32[6,6]")),
    Row("jax.scipy.linalg.eigh(x)", ("float32[8@x,8]",), expect=_SYMMETRIZE),
    Row("jax.scipy.linalg.eigh(x)", ("float32[8,8]",), expect=("float32[8]", "float32[8,8]")),
    Row("jax.scipy.linalg.solve(x, y)", ("float32[8@x,8]", "float32[8,4]"), expect=_factor("lu")),
    Row("jax.scipy.linalg.solve(x, y)", ("float32[8,8]", "float32[8,4]"), expect="float32[8,4]"),
)

# -- collectives inside shard_map (inputs: global types; the body sees their blocks) ----------
COLLECTIVES = rows(
    Row("lax.all_gather(x, 'y', axis=1, tiled=True)", (C,), expect="float32[4,16]{V:(x,y)}",
        mode="shard_map"),
    Row("lax.all_gather(x, 'y')", (C,), expect="float32[4,4,4]{V:(x,y)}", mode="shard_map"),
    Row("lax.all_gather(x, 'x', axis=2)", (C,), expect="float32[4,4,2]{V:(x,y)}", mode="shard_map"),
    Row("lax.psum_scatter(x, 'y', scatter_dimension=1, tiled=True)", (C,),
        expect="float32[4,1]{V:(x,y)}", mode="shard_map"),
    Row("lax.psum_scatter(x, 'x')", ("float32[4@x,8@y]",), expect="float32[2]{V:(x,y)}",
        mode="shard_map"),
    Row("lax.all_to_all(x, 'y', 0, 1, tiled=True)", (C,), expect="float32[1,16]{V:(x,y)}",
        mode="shard_map"),
)

ROWS: List[Row] = (ELEMENTWISE + CONTRACTION + REDUCTION + LAYOUT + INDEXING + JOINING
                   + ALONG_AXIS + RESIZING + LINALG + COLLECTIVES)
