"""``OPS``: every op shardcheck types, by canonical name, with its transfer rule.

Names are JAX's public spellings (``jax.numpy.sum``, ``jax.lax.dot_general``); array
methods and Python operators on arrays are ``jax.Array.<name>`` (``jax.Array.sum``,
``jax.Array.__add__``), their first argument the array itself. Each op is tested from a
table of calls against JAX (tests/transfer_table.py).
"""

from __future__ import annotations

from typing import Dict, Mapping, Optional, Sequence

from ..values import Value
from . import (along_axis, contraction, elementwise, indexing, joining, layout, linalg, reduction,
               resizing)
from .arrays import Sizes, no_sizes
from .call import Call, Op, OutSharding, Registry, no_out_sharding


def _merge(*tables: Registry) -> Registry:
    out: Registry = {}
    for t in tables:
        for name, op in t.items():
            if name in out:
                raise ValueError(f"op {name} registered twice")
            out[name] = op
    return out


OPS: Registry = _merge(elementwise.OPS, contraction.OPS, reduction.OPS, layout.OPS,
                       joining.OPS, along_axis.OPS, linalg.OPS, indexing.OPS, resizing.OPS)

# Python's operators on arrays (by libcst's operator class name) as the ops they call
OPERATORS: Dict[str, str] = {
    "Add": "jax.Array.__add__", "Subtract": "jax.Array.__sub__",
    "Multiply": "jax.Array.__mul__", "Divide": "jax.Array.__truediv__",
    "FloorDivide": "jax.Array.__floordiv__", "Modulo": "jax.Array.__mod__",
    "Power": "jax.Array.__pow__", "MatrixMultiply": "jax.Array.__matmul__",
    "BitAnd": "jax.Array.__and__", "BitOr": "jax.Array.__or__", "BitXor": "jax.Array.__xor__",
    "LessThan": "jax.Array.__lt__", "LessThanEqual": "jax.Array.__le__",
    "GreaterThan": "jax.Array.__gt__", "GreaterThanEqual": "jax.Array.__ge__",
    "Equal": "jax.Array.__eq__", "NotEqual": "jax.Array.__ne__",
    "Minus": "jax.Array.__neg__", "Plus": "jax.Array.__pos__", "BitInvert": "jax.Array.__invert__",
}


def call_op(name: str, pos: Sequence[Value], kw: Optional[Mapping[str, Value]] = None,
            sizes: Sizes = no_sizes,
            out_sharding: OutSharding = no_out_sharding) -> Optional[Value]:
    """The result of calling op ``name`` on abstract arguments; None when it is not
    registered or its arguments are not known well enough. Raises ``Conflict`` when JAX
    rejects the call."""
    op: Optional[Op] = OPS.get(name)
    if op is None:
        return None
    return op.apply(Call(name, list(pos), dict(kw or {}), sizes, out_sharding))
