"""Ops that give a dim a new length in place: padding (``jnp.pad``, ``lax.pad``) and
dynamic slicing (``lax.dynamic_slice``, ``dynamic_slice_in_dim``,
``dynamic_index_in_dim``).

In explicit mode each keeps every dim's sharding, and on a sharded dim the new length
must divide by the axes' size, else JAX raises ShardingTypeError ("padding on sharded
dims where out dim (9) is not divisible by mesh axes (2) ... is not implemented";
"dynamic_slice on sharded dims where ..."); JAX 0.10.2 and 0.12.0.1 alike, eagerly and
under ``jit``. A result with no dim longer than 1 is the versions' difference
(``unit_slice_replicated``): rejected up to 0.10, replicated since 0.11, so its type is
left unknown and nothing is reported."""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

from ..facts import ShardedAxisConflict
from ..values import ArrayVal, Const, TupleVal, Value, const_int, union_varying
from .arrays import Conflict, Sizes, axes_size, derived, norm_axis, rank, unknown_like
from .call import Call, Op, Registry, register


def resized(op: str, check: str, x: ArrayVal, lengths: Sequence[Optional[int]],
            sizes: Sizes, keep: Optional[Sequence[bool]] = None) -> ArrayVal:
    """``x`` with dim ``i`` now ``lengths[i]`` long (None: unknown), its shardings kept;
    a sharded dim whose new length does not divide by its axes' size is rejected by
    ``check``. ``keep``: which dims the result keeps (``dynamic_index_in_dim`` drops
    its dim)."""
    if x.shape is None or x.dims is None or len(lengths) != len(x.shape):
        return unknown_like([x])
    if all(n == 1 for n in lengths) and any(x.dims):
        # rejected up to JAX 0.10, replicated since 0.11 (compat: unit_slice_replicated)
        return unknown_like([x])
    for d, (axes, n) in enumerate(zip(x.dims, lengths)):
        if axes and n is not None and n != x.shape[d]:
            per = axes_size(axes, sizes)
            if per is not None and n % per:
                raise Conflict(ShardedAxisConflict(op, x, d, check, size=n))
    shape, dims = tuple(lengths), tuple(x.dims)
    if keep is not None:
        shape = tuple(s for s, k in zip(shape, keep) if k)
        dims = tuple(a for a, k in zip(dims, keep) if k)
    return derived(x, shape=shape, dims=dims, varying=union_varying([x]))


def _pairs(v: Value, n: int) -> Optional[List[Tuple[int, int]]]:
    """numpy's ``pad_width`` broadcast to ``(n, 2)``: an int, ``(k,)``, ``(lo, hi)``,
    ``((lo, hi),)`` or one pair per dim; None when not known ints of those shapes."""
    rows = _int_rows(v)
    if rows is None:
        return None
    if len(rows) == 1:
        rows = rows * n
    if len(rows) != n:
        return None
    out = []
    for r in rows:
        if len(r) == 1:
            r = r * 2
        if len(r) != 2:
            return None
        out.append((r[0], r[1]))
    return out


def _int_rows(v: Value) -> Optional[List[Tuple[int, ...]]]:
    """``pad_width`` as rows of ints: an int is one row of one; a flat tuple of ints one
    row; a tuple of tuples one row each."""
    k = const_int(v)
    if k is not None:
        return [(k,)]
    if not isinstance(v, TupleVal) or not v.items:
        return None
    flat = [const_int(x) for x in v.items]
    if all(x is not None for x in flat):
        return [tuple(x for x in flat if x is not None)]
    rows = []
    for item in v.items:
        inner = [const_int(x) for x in item.items] if isinstance(item, TupleVal) else [None]
        if not inner or any(x is None for x in inner):
            return None
        rows.append(tuple(x for x in inner if x is not None))
    return rows


def _read_jnp_pad(c: Call) -> Optional[tuple]:
    x = c.array(0, "array")
    mode = c.arg(2, "mode")
    if x is None or x.shape is None or set(c.kw) - {"array", "pad_width", "mode",
                                                    "constant_values"}:
        return None
    if mode is not None and not (isinstance(mode, Const) and mode.value == "constant"):
        return None  # the other modes slice and join instead (other checks)
    width = c.arg(1, "pad_width")
    pairs = _pairs(width, len(x.shape)) if width is not None else None
    if pairs is None or any(lo < 0 or hi < 0 for lo, hi in pairs):
        return None
    lengths = [None if s is None else s + lo + hi for s, (lo, hi) in zip(x.shape, pairs)]
    return (c.name, "pad", x, lengths, c.sizes)


def _read_lax_pad(c: Call) -> Optional[tuple]:
    x, config = c.array(0, "operand"), c.arg(2, "padding_config")
    rows = _int_rows(config) if config is not None else None
    if x is None or x.shape is None or rows is None or len(rows) != len(x.shape) \
            or any(len(r) != 3 or r[2] < 0 for r in rows):
        return None
    lengths = [None if s is None else s + lo + hi + max(s - 1, 0) * interior
               for s, (lo, hi, interior) in zip(x.shape, rows)]
    if any(n is not None and n < 0 for n in lengths):
        return None
    return (c.name, "pad", x, lengths, c.sizes)


def _read_dynamic_slice(c: Call) -> Optional[tuple]:
    x, sizes_arg = c.array(0, "operand"), c.arg(2, "slice_sizes")
    lengths = _int_rows(sizes_arg) if sizes_arg is not None else None
    if x is None or x.shape is None or lengths is None or len(lengths) != 1 \
            or len(lengths[0]) != len(x.shape):
        return None
    return (c.name, "dynamic_slice", x, list(lengths[0]), c.sizes)


def _read_dynamic_slice_in_dim(c: Call) -> Optional[tuple]:
    x, size, axis = c.array(0, "operand"), c.int_arg(2, "slice_size"), c.int_arg(3, "axis", 0)
    n = rank(x) if x is not None else None
    if x is None or x.shape is None or n is None or size is None or axis is None \
            or norm_axis(axis, n) is None:
        return None
    a = norm_axis(axis, n)
    lengths = [size if i == a else s for i, s in enumerate(x.shape)]
    return (c.name, "dynamic_slice", x, lengths, c.sizes)


def _read_dynamic_index_in_dim(c: Call) -> Optional[tuple]:
    x, axis = c.array(0, "operand"), c.int_arg(2, "axis", 0)
    keepdims = c.bool_kw("keepdims", True) if len(c.pos) < 4 else None
    n = rank(x) if x is not None else None
    if x is None or x.shape is None or n is None or axis is None or keepdims is None \
            or norm_axis(axis, n) is None:
        return None
    a = norm_axis(axis, n)
    lengths = [1 if i == a else s for i, s in enumerate(x.shape)]
    keep = None if keepdims else [i != a for i in range(n)]
    return (c.name, "dynamic_slice", x, lengths, c.sizes, keep)


OPS: Registry = {}
register(OPS, ["jax.numpy.pad"], Op(resized, _read_jnp_pad))
register(OPS, ["jax.lax.pad"], Op(resized, _read_lax_pad))
register(OPS, ["jax.lax.dynamic_slice"], Op(resized, _read_dynamic_slice))
register(OPS, ["jax.lax.dynamic_slice_in_dim"], Op(resized, _read_dynamic_slice_in_dim))
register(OPS, ["jax.lax.dynamic_index_in_dim"], Op(resized, _read_dynamic_index_in_dim))
