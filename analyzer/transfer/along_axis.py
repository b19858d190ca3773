"""Ops that run along one dim, which JAX wants unsharded in explicit mode: cumulative
reductions, sort/argsort, top_k, roll (whose static slices must divide evenly) and
take_along_axis (a gather)."""

from __future__ import annotations

from typing import Optional

from ..facts import ShardedAxisConflict
from ..values import ArrayVal, TupleVal, union_varying
from .arrays import Conflict, Sizes, axes_size, derived, norm_axis, rank, unknown_like
from .call import MISSING, Call, DTypeArg, Missing, Op, Registry, register
from .layout import reshape

def along(op: str, x: ArrayVal, axis: int, check: str) -> ArrayVal:
    """``x`` checked: dim ``axis`` must be unsharded, else ``check`` rejects it."""
    n = rank(x)
    if n is None or x.dims is None:
        return derived(x)
    a = norm_axis(axis, n)
    if a is None:
        return unknown_like([x])
    if x.dims[a]:
        raise Conflict(ShardedAxisConflict(op, x, a, check))
    return derived(x)


def _flat(op: str, x: ArrayVal, axis: Optional[int], sizes: Sizes) -> tuple:
    """(array, axis) to run along: ``axis=None`` flattens first (a reshape)."""
    return (reshape(op, x, (-1,), sizes), 0) if axis is None else (x, axis)


def cumulative(op: str, x: ArrayVal, axis: Optional[int], sizes: Sizes,
               dtype: DTypeArg = MISSING) -> ArrayVal:
    """cumsum/cumprod/cummax/...: bools sum as int32. Without an axis, jnp flattens the
    input, which must then be fully replicated."""
    if axis is None:
        n = rank(x)
        if n is not None and x.dims is not None:
            sharded = [d for d in range(n) if x.dims[d]]
            if sharded:
                prim = op.rsplit(".", 1)[-1]
                raise Conflict(ShardedAxisConflict(op, x, sharded[0], "unspecified-axis",
                                                   primitive=prim))
    y, a = _flat(op, x, axis, sizes)
    res = along(op, y, a, "cumulative")
    if not isinstance(dtype, Missing):
        return derived(res, dtype=dtype, weak=False)
    if x.dtype == "bool" and op.rsplit(".", 1)[-1] in ("cumsum", "cumprod"):
        return derived(res, dtype="int32", weak=False)
    return res


def sort(op: str, x: ArrayVal, axis: Optional[int], sizes: Sizes,
         indices: bool = False) -> ArrayVal:
    """sort/argsort (``indices``: int32 positions) along ``axis`` (None: flattened)."""
    y, a = _flat(op, x, axis, sizes)
    res = along(op, y, a, "sort")
    return derived(res, dtype="int32", weak=False) if indices else res


def top_k(op: str, x: ArrayVal, k: Optional[int]) -> Optional[TupleVal]:
    """``lax.top_k``: along the last dim; (values, int32 indices) with ``k`` there."""
    along(op, x, -1, "top_k")
    if k is None or x.shape is None or x.dims is None:
        return None
    vals = derived(x, shape=x.shape[:-1] + (k,))
    return TupleVal((vals, derived(vals, dtype="int32", weak=False)))


def take_along_axis(op: str, x: ArrayVal, idx: ArrayVal, axis: int) -> Optional[ArrayVal]:
    """``jnp.take_along_axis(x, idx, axis)``, a gather: in explicit mode neither ``x`` nor
    ``idx`` may be sharded along ``axis`` (ShardingTypeError "Use `.at[...].get(out_sharding=)`
    ..."). Every other dim broadcasts the two and takes the sharding one of them has (JAX
    0.10.2: ``float32[8@data,6,16]`` along -1 with ``int32[8,6@model,1]`` gives
    ``float32[8@data,6@model,1]``); two different shardings of one dim are rejected too,
    which is left unknown here."""
    n = rank(x)
    if n is None or rank(idx) != n or x.shape is None or idx.shape is None:
        return None
    a = norm_axis(axis, n)
    if a is None:
        return None
    if x.dims is not None and x.dims[a]:
        raise Conflict(ShardedAxisConflict(op, x, a, "gather"))
    if idx.dims is not None and idx.dims[a]:
        raise Conflict(ShardedAxisConflict(op, idx, a, "gather", index="sharded-index"))
    shape: list = []
    for i, (s, t) in enumerate(zip(x.shape, idx.shape)):
        if i == a or s == 1:
            shape.append(t)
        elif t == 1 or s == t:
            shape.append(s)
        else:
            return None  # sizes that do not broadcast, or one unknown
    dims = None
    if x.dims is not None and idx.dims is not None:
        out = []
        for i, (d, e) in enumerate(zip(x.dims, idx.dims)):
            if d and e and d != e:
                return None
            out.append(() if i == a else d or e)
        used = [ax for d in out for ax in d]
        if len(used) != len(set(used)):
            return None
        dims = tuple(out)
    return derived(x, shape=tuple(shape), dims=dims,
                   varying=union_varying([x, idx]))


def roll(op: str, x: ArrayVal, shift: int, axis: Optional[int], sizes: Sizes) -> ArrayVal:
    """``jnp.roll`` with a static shift: two static slices along ``axis`` (of lengths
    ``shift % n`` and the rest) joined again, so on a sharded dim the shift must divide by
    the axes' size. ``axis=None`` rolls the flattened array and reshapes it back."""
    y, a = _flat(op, x, axis, sizes)
    n = rank(y)
    if n is None or y.dims is None or y.shape is None or norm_axis(a, n) is None:
        return unknown_like([x])
    a = a % n
    axes, size = y.dims[a], y.shape[a]
    if axes:
        n_ax = axes_size(axes, sizes)
        if size is None or n_ax is None:
            return unknown_like([x])
        if (shift % size) % n_ax:
            raise Conflict(ShardedAxisConflict(op, y, a, "slice"))
    if axis is None:
        return reshape(op, y, x.shape, sizes)
    return derived(x)


# -- how calls read their arguments ---------------------------------------------------------
def _lax(c: Call) -> bool:
    return c.name.startswith("jax.lax.")


def _read_cumulative(c: Call) -> Optional[tuple]:
    if _lax(c):  # lax.cumsum(operand, axis=0, reverse=False)
        x, axis = c.array(0, "operand"), c.int_arg(1, "axis", 0)
        if x is None or axis is None or "reverse" in c.kw:
            return None
        return (c.name, x, axis, c.sizes, MISSING)
    x = c.array(0, "a")
    known, axis = c.optional_int(1, "axis")
    return (c.name, x, axis, c.sizes, c.dtype_arg(2, "dtype")) if x is not None and known else None


def _read_sort(indices: bool):
    def read(c: Call) -> Optional[tuple]:
        if _lax(c):  # lax.sort(operand, dimension=-1): never flattens
            x, axis = c.array(0, "operand"), c.int_arg(1, "dimension", -1)
            known = axis is not None
        else:
            x = c.array(0, "a")
            known, axis = c.optional_int(1, "axis") if c.arg(1, "axis") is not None else (True, -1)
        return (c.name, x, axis, c.sizes, indices) if x is not None and known else None
    return read


def _read_top_k(c: Call) -> Optional[tuple]:
    x = c.array(0, "operand")
    return (c.name, x, c.int_arg(1, "k")) if x is not None else None


def _read_take_along_axis(c: Call) -> Optional[tuple]:
    x, idx, axis = c.array(0, "arr"), c.array(1, "indices"), c.int_arg(2, "axis")
    if x is None or idx is None or axis is None:
        return None
    return (c.name, x, idx, axis)


def _read_roll(c: Call) -> Optional[tuple]:
    x, shift = c.array(0, "a"), c.int_arg(1, "shift")
    known, axis = c.optional_int(2, "axis")
    if x is None or shift is None or not known:
        return None
    return (c.name, x, shift, axis, c.sizes)


OPS: Registry = {}
register(OPS, ["jax.numpy.cumsum", "jax.numpy.cumprod", "jax.Array.cumsum", "jax.Array.cumprod",
               "jax.lax.cumsum", "jax.lax.cumprod", "jax.lax.cummax", "jax.lax.cummin",
               "jax.lax.cumlogsumexp"], Op(cumulative, _read_cumulative))
register(OPS, ["jax.numpy.sort", "jax.Array.sort", "jax.lax.sort"], Op(sort, _read_sort(False)))
register(OPS, ["jax.numpy.argsort", "jax.Array.argsort"], Op(sort, _read_sort(True)))
register(OPS, ["jax.lax.top_k"], Op(top_k, _read_top_k))
register(OPS, ["jax.numpy.roll"], Op(roll, _read_roll))
register(OPS, ["jax.numpy.take_along_axis"], Op(take_along_axis, _read_take_along_axis))
