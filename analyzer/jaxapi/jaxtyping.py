"""jaxtyping annotations on parameters: ``Float[Array, "batch seq 512"]`` states a rank (and
the sizes written as numbers, and a dtype where the name fixes one), never a sharding.

A function no call in view reaches gets its array parameters from here, so a spec longer
than the array, or a dim that does not divide, is found in library code too. What the
annotation leaves open stays unknown: named and broadcast dims (``batch``, ``#n``,
``_``) have unknown sizes, and a variadic shape (``*batch``, ``...``) an unknown rank.
The array's sharding, varying axes and weak type are unknown, so nothing is inferred
about collectives.
"""

from __future__ import annotations

import re
from typing import List, Optional, Tuple

import libcst as cst

from ..events import MeshCtx
from ..interp.state import Env
from ..api import ApiContext
from ..values import ArrayVal, QualName


# jaxtyping's dtype names -> the dtype they fix (None: a family of dtypes)
_DTYPES = {
    "Float": None, "Int": None, "UInt": None, "Integer": None, "Num": None, "Real": None,
    "Inexact": None, "Complex": None, "Shaped": None, "Bool": "bool", "BFloat16": "bfloat16",
    "Float16": "float16", "Float32": "float32", "Float64": "float64", "Int8": "int8",
    "Int16": "int16", "Int32": "int32", "Int64": "int64", "UInt8": "uint8",
    "UInt16": "uint16", "UInt32": "uint32", "UInt64": "uint64", "Complex64": "complex64",
    "Complex128": "complex128",
}
# the array types whose annotations describe a jax.Array
_ARRAYS = ("jaxtyping.Array", "jax.Array", "jax.numpy.ndarray", "jaxtyping.ArrayLike")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def jaxtyping_array(it: ApiContext, expr: cst.BaseExpression, env: Env,
                    ctx: MeshCtx) -> Optional[ArrayVal]:
    """The array ``Float[Array, "b 512"]`` describes; None for any other annotation."""
    if not isinstance(expr, cst.Subscript) or len(expr.slice) != 2:
        return None
    head = it.ev(expr.value, env, ctx)
    if not isinstance(head, QualName) or not head.name.startswith("jaxtyping."):
        return None
    kind = head.name.rsplit(".", 1)[-1]
    if kind not in _DTYPES:
        return None
    array_node, dims_node = (s.slice for s in expr.slice)
    if not isinstance(array_node, cst.Index) or not isinstance(dims_node, cst.Index):
        return None
    array = it.ev(array_node.value, env, ctx)
    if not isinstance(array, QualName) or it.profile.canonical(array.name) not in _ARRAYS:
        return None
    text = dims_node.value
    if not isinstance(text, cst.SimpleString):
        return None
    value = text.evaluated_value
    shape = parse_dims(value) if isinstance(value, str) else None
    if shape is None:
        return None
    return ArrayVal(shape, None, None, None, None, dtype=_DTYPES[kind], weak=None, dims=None,
                    unreduced=None)


def parse_dims(text: str) -> Optional[Tuple[Optional[int], ...]]:
    """``"batch 512 #n _"`` -> ``(None, 512, None, None)``; None where the rank is not
    fixed (``*batch``, ``...``) or a token is not one jaxtyping reads as one dim."""
    out: List[Optional[int]] = []
    for token in text.split():
        if token.startswith("*") or token == "..." or "..." in token:
            return None
        token = token.lstrip("#")
        if token.isdigit():
            out.append(int(token))
        elif "=" in token:  # name=expr: a size computed from others
            out.append(None)
        elif token == "_" or _NAME.match(token):
            out.append(None)
        else:  # an expression such as "dim-1": one dim of unknown size
            if not re.match(r"^[A-Za-z0-9_+\-*/()]+$", token):
                return None
            out.append(None)
    return tuple(out)
