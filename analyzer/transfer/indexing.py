"""Basic indexing ``x[...]`` on an abstract array.

JAX lowers indexing differently eagerly and under tracing (``jit``, ``eval_shape``), and
the sharding rules differ with it (JAX 0.10.2, checked in tests/transfer_table.py):

- eagerly, anything but ``:`` on a sharded dim is a gather JAX will not shard
  (ShardingTypeError asking for ``.at[...].get(out_sharding=)``);
- traced, static ints and slices become ``lax.slice``, whose rule keeps a dim's sharding
  when the sliced length divides by the axes' size (``x[:4]`` on ``8@x`` with ``x: 2``) and
  rejects it otherwise (an int index is a slice of length 1); array indices are gathers.

A gather (an integer array index) is rejected in both modes when the index array is
sharded (over any axis: the output sharding "could not be resolved unambiguously") or
the dim it indexes is; an unsharded index into an unsharded leading dim gives the index's
shape followed by the remaining dims, which keep their sharding (``table[ids]``).
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

from ..facts import ShardedAxisConflict
from ..values import ArrayVal
from .arrays import Conflict, Sizes, axes_size, derived, no_sizes, rank, unknown_like
from .call import Call, Op, Registry, register
from .dtypes import DTYPE_KINDS

FULL = "full"  # a ':' slice
NEW = "newaxis"
ELLIPSIS = "ellipsis"
Item = object  # FULL, NEW, ELLIPSIS, ("int", i), ("slice", lo, hi, step), ("array", index), None


def expand(items: Sequence[Item], n: int) -> Optional[List[Item]]:
    """``items`` with the Ellipsis (or the missing trailing dims) as ``:``."""
    if sum(1 for it in items if it == ELLIPSIS) > 1:
        return None
    consuming = [it for it in items if it not in (NEW, ELLIPSIS)]
    if len(consuming) > n:
        return None
    if ELLIPSIS in items:
        k = list(items).index(ELLIPSIS)
        return list(items[:k]) + [FULL] * (n - len(consuming)) + list(items[k + 1:])
    return list(items) + [FULL] * (n - len(consuming))


def _slice_length(it: Item, size: Optional[int]) -> Optional[int]:
    """The length ``x[it]`` keeps of a dim of ``size`` (1 for an int), None if unknown."""
    if isinstance(it, tuple) and it[0] == "int":
        return 1
    if not (isinstance(it, tuple) and it[0] == "slice") or size is None:
        return None
    lo, hi, st = it[1], it[2], it[3]
    if any(v is not None and not isinstance(v, int) for v in (lo, hi, st)) or st == 0:
        return None
    return len(range(*slice(lo, hi, st).indices(size)))


def index(x: ArrayVal, items: Sequence[Item], traced: bool = False,
          sizes: Sizes = no_sizes) -> ArrayVal:
    """``:`` keeps a dim, ``None`` adds one, an int drops one, a slice shortens one; on a
    sharded dim the rules above apply (``traced``: the code runs under tracing)."""
    n = rank(x)
    expanded = expand(items, n) if n is not None else None
    if n is None or expanded is None:
        return unknown_like([x])
    for it in expanded:
        _sharded_index(it)
    ids = _array_index(expanded[0]) if expanded else None
    if ids is not None and all(it == FULL for it in expanded[1:]):
        return _gather_leading(x, ids)
    shape = list(x.shape or (None,) * n)
    dims = x.dims
    out_shape: List[Optional[int]] = []
    out_dims: List[Tuple[str, ...]] = []
    d = 0
    unknown = False
    for it in expanded:
        if it == NEW:
            out_shape.append(1)
            out_dims.append(())
            continue
        axes = dims[d] if dims is not None else None
        size = shape[d]
        if it == FULL:
            out_shape.append(size)
            out_dims.append(axes or ())
        elif it is None:
            unknown = True
        elif axes:
            kept = _sharded_dim(x, d, it, traced, sizes)
            if kept is None:
                unknown = True
            elif not (isinstance(it, tuple) and it[0] == "int"):
                out_shape.append(kept)
                out_dims.append(axes)
        elif isinstance(it, tuple) and it[0] == "int":
            pass  # dim dropped
        elif isinstance(it, tuple) and it[0] == "slice":
            out_shape.append(_slice_length(it, size))
            out_dims.append(())
        else:
            unknown = True
        d += 1
    if unknown:
        return ArrayVal(None, varying=x.varying, dtype=x.dtype, weak=x.weak)
    if dims is None:  # the shape all the same (a host array's, or one of unknown sharding)
        return derived(x, shape=tuple(out_shape))
    return derived(x, shape=tuple(out_shape), dims=tuple(out_dims))


def _array_index(it: Item) -> Optional[ArrayVal]:
    """The integer index array of a gather item (None for a mask or an unknown dtype)."""
    if isinstance(it, tuple) and it[0] == "array" and len(it) > 1 and isinstance(it[1], ArrayVal) \
            and it[1].dtype is not None and DTYPE_KINDS.get(it[1].dtype) == DTYPE_KINDS["int32"] \
            and not it[1].numpy:
        return it[1]
    return None


def _sharded_index(it: Item) -> None:
    """An index array sharded over any axis: JAX cannot resolve the gather's sharding."""
    ids = _array_index(it)
    if ids is None or ids.dims is None:
        return
    for d, axes in enumerate(ids.dims):
        if axes:
            raise Conflict(ShardedAxisConflict("jax.Array.__getitem__", ids, d, "gather",
                                               index="sharded-index"))


def _gather_leading(x: ArrayVal, ids: ArrayVal) -> ArrayVal:
    """``x[ids]``: ids' shape, then x's other dims with their sharding (ids unsharded)."""
    if x.dims is not None and x.dims[0]:
        raise Conflict(ShardedAxisConflict("jax.Array.__getitem__", x, 0, "gather", index="array"))
    if x.dims is None or ids.dims is None or ids.shape is None or x.shape is None:
        return ArrayVal(None, varying=x.varying, dtype=x.dtype, weak=x.weak)
    return derived(x, shape=tuple(ids.shape) + tuple(x.shape[1:]),
                   dims=((),) * len(ids.shape) + tuple(x.dims[1:]),
                   varying=None if x.varying is None or ids.varying is None
                   else x.varying | ids.varying)


def _sharded_dim(x: ArrayVal, d: int, it: Item, traced: bool, sizes: Sizes) -> Optional[int]:
    """The length an int or slice keeps of sharded dim ``d`` (None: unknown), or raise."""
    kind = "int" if isinstance(it, tuple) and it[0] == "int" else \
        "array" if isinstance(it, tuple) and it[0] == "array" else "slice"
    if not traced or kind == "array":
        raise Conflict(ShardedAxisConflict("jax.Array.__getitem__", x, d, "gather", index=kind))
    size = x.shape[d] if x.shape is not None else None
    kept, n_ax = _slice_length(it, size), axes_size(x.dims[d] if x.dims else (), sizes)
    if kept is None or n_ax is None:
        return None
    if kept % n_ax:
        raise Conflict(ShardedAxisConflict("jax.Array.__getitem__", x, d, "slice", index=kind))
    return kept


def take(op: str, x: ArrayVal, ids: ArrayVal, axis: int) -> ArrayVal:
    """``jnp.take(x, ids, axis=0)``: the gather ``x[ids]`` (JAX 0.10.2 rejects the same
    shardings, eagerly and traced alike: a sharded ``ids``, a sharded dim 0). Other axes
    are left unknown."""
    if axis != 0:
        return unknown_like([x, ids])
    return index(x, [("array", ids)])


def _read_take(c: Call) -> Optional[tuple]:
    x, ids, axis = c.array(0, "a"), c.array(1, "indices"), c.int_arg(2, "axis")
    if x is None or ids is None or axis is None or _array_index(("array", ids)) is None \
            or "out" in c.kw or c.has_out_sharding:
        return None
    return (c.name, x, ids, axis)


OPS: Registry = {}
register(OPS, ["jax.numpy.take"], Op(take, _read_take))
