"""Layout ops: transpose, swapaxes, expand_dims, squeeze and reshape
(``lax._reshape_sharding_rule``)."""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple, Union

from ..facts import ReshapeConflict
from ..values import ArrayVal, Const, TupleVal, const_int, int_tuple
from .arrays import (Conflict, Dims, Sizes, axes_size, derived, norm_axis, prod, rank, shape_of,
                     unknown_like)
from .call import Call, Op, OutSpec, Registry, register

NewShape = Optional[Tuple[Optional[int], ...]]  # -1 (or None) for the one inferred size


def transpose(x: ArrayVal, perm: Optional[Sequence[int]]) -> ArrayVal:
    """Dims (and their shardings) in the order ``perm``; None reverses them."""
    n = rank(x)
    if n is None:
        return unknown_like([x])
    if perm is None:
        perm = tuple(reversed(range(n)))
    norm = _normalized(perm, n)
    if norm is None or sorted(norm) != list(range(n)):
        return unknown_like([x])
    shape = shape_of(x, n)
    return derived(x, shape=tuple(shape[p] for p in norm),
                   dims=None if x.dims is None else tuple(x.dims[p] for p in norm))


def _normalized(axes: Sequence[int], n: int) -> Optional[List[int]]:
    """``axes`` in ``range(n)``, or None if one is out of range."""
    norm = [a for a in (norm_axis(a, n) for a in axes) if a is not None]
    return norm if len(norm) == len(axes) else None


def swapaxes(x: ArrayVal, a: int, b: int) -> ArrayVal:
    n = rank(x)
    if n is None or norm_axis(a, n) is None or norm_axis(b, n) is None:
        return unknown_like([x])
    perm = list(range(n))
    i, j = a % n, b % n
    perm[i], perm[j] = perm[j], perm[i]
    return transpose(x, perm)


def expand_dims(x: ArrayVal, axes: Sequence[int]) -> ArrayVal:
    """New unsharded size-1 dims at ``axes`` (positions in the result)."""
    n = rank(x)
    if n is None:
        return unknown_like([x])
    out_rank = n + len(axes)
    norm = _normalized(axes, out_rank)
    if norm is None or len(set(norm)) != len(norm):
        return unknown_like([x])
    shape: List[Optional[int]] = list(shape_of(x, n))
    dims = list(x.dims) if x.dims is not None else None
    for i in sorted(norm):
        shape.insert(i, 1)
        if dims is not None:
            dims.insert(i, ())
    return derived(x, shape=tuple(shape), dims=None if dims is None else tuple(dims))


def _resolve(old: Tuple[int, ...], new: NewShape) -> Optional[Tuple[int, ...]]:
    """``new`` with its one -1 (or unknown) entry computed, when it is valid for ``old``."""
    if new is None:
        return None
    spec = tuple(None if s == -1 else s for s in new)
    sizes = [s for s in spec if s is not None]
    if len(sizes) == len(spec) - 1 and prod(sizes) and prod(old) % prod(sizes) == 0:
        spec = tuple(prod(old) // prod(sizes) if s is None else s for s in spec)
    out = tuple(s for s in spec if s is not None)
    if len(out) != len(spec) or any(s < 0 for s in out) or prod(out) != prod(old):
        return None
    return out


def reshape(op: str, x: ArrayVal, new: NewShape, sizes: Sizes) -> ArrayVal:
    """``lax._reshape_sharding_rule``: only moves of size-1 dims, one split or one merge.

    A split keeps the sharding on the first new dim if that dim divides by the axes'
    size; a merge keeps it if the sharded merged dims come first (a prefix). Anything
    else on a sharded operand is a ShardingTypeError asking for ``out_sharding``."""
    old = tuple(s for s in x.shape or () if s is not None)
    if new is None or x.shape is None or len(old) != len(x.shape):
        return unknown_like([x])
    new_t = _resolve(old, new)
    if new_t is None:
        return unknown_like([x])
    if x.dims is None:
        return derived(x, shape=new_t, dims=None)
    dims = x.dims
    if all(not d for d in dims):
        return derived(x, shape=new_t, dims=((),) * len(new_t))
    old_n1 = [(s, d) for s, d in zip(old, dims) if s != 1]
    if [s for s, _ in old_n1] == [s for s in new_t if s != 1]:  # only size-1 dims come or go
        it = iter(d for _, d in old_n1)
        return derived(x, shape=new_t, dims=tuple(next(it) if s != 1 else () for s in new_t))
    out = _split(old, new_t, dims, sizes)
    if out is None:
        out = _merge(old, new_t, dims)
    if out == "unknown":
        return unknown_like([x])
    if out is None:
        raise Conflict(ReshapeConflict(op, x, new_t))
    return derived(x, shape=new_t, dims=out)


Split = Union[Dims, None, str]  # the new dims, no legal split/merge, or "unknown"


def _split(old: Tuple[int, ...], new: Tuple[int, ...], dims: Dims, sizes: Sizes) -> Split:
    """One split: old dim i -> new dims j..k, the rest identical. The dims, None when this
    is no legal split, "unknown" when the axes' size is unknown."""
    for i in range(len(old)):
        pre, post = old[:i], old[i + 1:]
        if new[:len(pre)] == pre and (not post or new[len(new) - len(post):] == post):
            mid = new[len(pre):len(new) - len(post)]
            if len(mid) >= 2 and prod(mid) == old[i]:
                axes = dims[i]
                out_dims: List[Tuple[str, ...]] = list(dims[:i])
                if axes:
                    n_ax = axes_size(axes, sizes)
                    if n_ax is None:
                        return "unknown"
                    if mid[0] % n_ax:
                        return None
                    out_dims += [axes] + [()] * (len(mid) - 1)
                else:
                    out_dims += [()] * len(mid)
                return tuple(out_dims + list(dims[i + 1:]))
    return None


def _merge(old: Tuple[int, ...], new: Tuple[int, ...], dims: Dims) -> Optional[Dims]:
    """One merge: old dims i..k -> new dim j, the rest identical; the sharded merged dims
    must come first. The dims, or None."""
    for j in range(len(new)):
        pre, post = new[:j], new[j + 1:]
        if old[:len(pre)] == pre and (not post or old[len(old) - len(post):] == post):
            mid_idx = range(len(pre), len(old) - len(post))
            if len(mid_idx) >= 2 and prod(old[k] for k in mid_idx) == new[j]:
                merged: Tuple[str, ...] = ()
                seen_unsharded = False
                for g in (dims[k] for k in mid_idx):
                    if g and seen_unsharded:
                        return None
                    seen_unsharded = seen_unsharded or not g
                    merged += g
                return tuple(dims[:len(pre)]) + (merged,) + tuple(dims[len(old) - len(post):])
    return None


def reshape_out(x: ArrayVal, new: NewShape, out: Optional[OutSpec]) -> ArrayVal:
    """A reshape given ``out_sharding=``: JAX takes the result's sharding from it."""
    res = reshape("reshape", derived(x, dims=None), new, lambda a: None)
    if out is None or res.shape is None:
        return derived(res, dims=None)
    return derived(res, dims=out[0], unreduced=out[1])


def squeeze(op: str, x: ArrayVal, axes: Optional[Sequence[int]],
            sizes: Sizes) -> Optional[ArrayVal]:
    """Drop size-1 dims (``axes``, or all of them): a reshape that only moves size-1 dims."""
    if x.shape is None:
        return None
    n = len(x.shape)
    if axes is None:
        if None in x.shape:
            return None
        axes = tuple(i for i, s in enumerate(x.shape) if s == 1)
    norm = [norm_axis(a, n) for a in axes]
    if None in norm:
        return unknown_like([x])
    return reshape(op, x, tuple(s for i, s in enumerate(x.shape) if i not in norm), sizes)


def split(op: str, x: ArrayVal, sections: int, axis: int, sizes: Sizes) -> Optional[TupleVal]:
    """``jnp.split(x, n, axis)``: a list of ``n`` equal static slices of dim ``axis``. A
    sharded dim stays sharded when each piece's length divides by the axes' size (JAX
    0.10.2: ``float32[8@data,6,16@model]`` in 2 along -1 gives two ``[8@data,6,8@model]``);
    otherwise unknown here."""
    n = rank(x)
    a = norm_axis(axis, n) if n is not None else None
    size = x.shape[a] if a is not None and x.shape is not None else None
    if a is None or x.shape is None or size is None or sections <= 0 or size % sections:
        return None
    piece = size // sections
    if x.dims is not None and x.dims[a]:
        n_ax = axes_size(x.dims[a], sizes)
        if n_ax is None or piece % n_ax:
            return None
    shape = tuple(piece if i == a else s for i, s in enumerate(x.shape))
    return TupleVal(tuple(derived(x, shape=shape) for _ in range(sections)), is_list=True)


def repeat(op: str, x: ArrayVal, repeats: int, axis: int, has_out: bool,
           out: Optional[OutSpec]) -> Optional[ArrayVal]:
    """``jnp.repeat(x, r, axis)`` with a static ``r``: dim ``axis`` grows ``r`` times. JAX
    0.10.2 keeps the other dims' sharding; along a sharded dim it raises ValueError
    ("Please pass sharding to `jnp.repeat` via `out_sharding`"), left unknown here; with
    ``out_sharding=`` the result is sharded as asked."""
    n = rank(x)
    a = norm_axis(axis, n) if n is not None else None
    if a is None or x.shape is None:
        return None
    shape = tuple(s * repeats if i == a and s is not None else s for i, s in enumerate(x.shape))
    if has_out:
        return derived(x, shape=shape, dims=out[0], unreduced=out[1]) if out is not None else None
    if x.dims is None or x.dims[a]:
        return None
    return derived(x, shape=shape)


def broadcast_to(op: str, x: ArrayVal, shape: Tuple[int, ...], has_out: bool,
                 out: Optional[OutSpec]) -> Optional[ArrayVal]:
    """``jnp.broadcast_to(x, shape)``: new leading dims and grown size-1 dims are
    unsharded, the others keep their sharding (JAX 0.10.2: ``float32[8@x,1]`` to
    ``(3, 8, 16)`` is ``float32[3,8@x,16]``); ``out_sharding=`` gives the result's."""
    n = rank(x)
    if n is None or x.shape is None or len(shape) < n:
        return None
    lead = len(shape) - n
    for have, want in zip(x.shape, shape[lead:]):
        if have is None or (have != want and have != 1):
            return None  # does not broadcast (JAX raises), or a size unknown
    if has_out:
        return derived(x, shape=shape, dims=out[0], unreduced=out[1]) if out is not None else None
    if x.dims is None:
        return derived(x, shape=shape, dims=None)
    dims = ((),) * lead + tuple(d if have == want else ()
                                for d, have, want in zip(x.dims, x.shape, shape[lead:]))
    return derived(x, shape=shape, dims=dims)


# -- how calls read their arguments ---------------------------------------------------------
def _read_transpose(c: Call) -> Optional[tuple]:
    x = c.array(0, "a")
    if x is None:
        return None
    p = c.arg(1, "permutation" if c.name == "jax.lax.transpose" else "axes")
    if p is None or (isinstance(p, Const) and p.value is None):
        return (x, None)
    perm = int_tuple(p)
    return None if perm is None or None in perm else (x, perm)


def _read_method_transpose(c: Call) -> Optional[tuple]:
    x, args = c.pos[0], c.pos[1:]
    if not isinstance(x, ArrayVal):
        return None
    if not args:
        return (x, None)
    perm = int_tuple(args[0]) if len(args) == 1 and not isinstance(args[0], Const) else \
        tuple(const_int(p) for p in args)
    return None if perm is None or None in perm else (x, perm)


def _read_swapaxes(c: Call) -> Optional[tuple]:
    x, a, b = c.array(0, "a"), c.int_arg(1, "axis1"), c.int_arg(2, "axis2")
    return (x, a, b) if x is not None and isinstance(a, int) and isinstance(b, int) else None


def _read_matrix_transpose(c: Call) -> Optional[tuple]:
    x = c.array(0, "x")
    return (x, -1, -2) if x is not None and rank(x) else None


def _read_expand_dims(c: Call) -> Optional[tuple]:
    x = c.array(0, "a")
    axes = c.int_tuple_arg(1, "dimensions" if c.name == "jax.lax.expand_dims" else "axis")
    return (x, axes) if x is not None and axes is not None else None


def _read_squeeze(c: Call) -> Optional[tuple]:
    x = c.array(0, "a")
    known, axes = c.axes_arg(1, "dimensions" if c.name == "jax.lax.squeeze" else "axis")
    return (c.name, x, axes, c.sizes) if x is not None and known else None


def _read_reshape(c: Call) -> Optional[tuple]:
    x = c.array(0, "a")
    if x is None:
        return None
    if c.name == "jax.lax.reshape":
        dims = c.arg(2, "dimensions")
        if dims is not None and not (isinstance(dims, Const) and dims.value is None):
            return None  # a transpose first: not modelled
    v = c.arg(1, "new_sizes" if c.name == "jax.lax.reshape" else "shape")
    return _reshape_params(c, x, int_tuple(v) if v is not None else None)


def _read_method_reshape(c: Call) -> Optional[tuple]:
    x, args = c.pos[0], c.pos[1:]
    if not isinstance(x, ArrayVal):
        return None
    if not args:
        return None
    shape = int_tuple(args[0]) if len(args) == 1 else tuple(const_int(p) for p in args)
    return _reshape_params(c, x, shape)


def _reshape_params(c: Call, x: ArrayVal, shape: NewShape) -> tuple:
    out = c.out(len(shape) if shape is not None else None)
    return (c.name, x, shape, c.sizes, c.has_out_sharding, out)


def reshape_to(op: str, x: ArrayVal, new: NewShape, sizes: Sizes, has_out: bool = False,
               out: Optional[OutSpec] = None) -> ArrayVal:
    """A reshape call: with ``out_sharding=`` (``has_out``) JAX takes the result's
    sharding from it; without, its reshape rule decides."""
    return reshape_out(x, new, out) if has_out else reshape(op, x, new, sizes)


def _read_split(c: Call) -> Optional[tuple]:
    x, sections, axis = c.array(0, "ary"), c.arg(1, "indices_or_sections"), c.int_arg(2, "axis", 0)
    n = const_int(sections) if isinstance(sections, Const) else None
    return (c.name, x, n, axis, c.sizes) if x is not None and n is not None and axis is not None \
        else None


def _read_repeat(c: Call) -> Optional[tuple]:
    x, repeats, axis = c.array(0, "a"), c.arg(1, "repeats"), c.int_arg(2, "axis")
    r = const_int(repeats) if isinstance(repeats, Const) else None
    if x is None or r is None or axis is None or "total_repeat_length" in c.kw:
        return None
    return (c.name, x, r, axis, c.has_out_sharding, c.out(rank(x)))


def _read_broadcast_to(c: Call) -> Optional[tuple]:
    x, v = c.array(0, "array"), c.arg(1, "shape")
    shape = int_tuple(v) if v is not None else None
    if x is None or shape is None or None in shape:
        return None
    return (c.name, x, shape, c.has_out_sharding, c.out(len(shape)))


def _read_ravel(c: Call) -> Optional[tuple]:
    x = c.array(0, "a")
    return (c.name, x, (-1,), c.sizes) if x is not None else None


OPS: Registry = {}
register(OPS, ["jax.numpy.transpose", "jax.lax.transpose"], Op(transpose, _read_transpose))
register(OPS, ["jax.Array.transpose"], Op(transpose, _read_method_transpose))
register(OPS, ["jax.numpy.swapaxes", "jax.Array.swapaxes"], Op(swapaxes, _read_swapaxes))
register(OPS, ["jax.numpy.matrix_transpose"], Op(swapaxes, _read_matrix_transpose))
register(OPS, ["jax.numpy.expand_dims", "jax.lax.expand_dims"], Op(expand_dims, _read_expand_dims))
register(OPS, ["jax.numpy.squeeze", "jax.lax.squeeze", "jax.Array.squeeze"],
         Op(squeeze, _read_squeeze))
register(OPS, ["jax.numpy.reshape", "jax.lax.reshape"], Op(reshape_to, _read_reshape))
register(OPS, ["jax.Array.reshape"], Op(reshape_to, _read_method_reshape))
register(OPS, ["jax.numpy.ravel", "jax.Array.ravel", "jax.Array.flatten"], Op(reshape, _read_ravel))
register(OPS, ["jax.numpy.split"], Op(split, _read_split))
register(OPS, ["jax.numpy.broadcast_to"], Op(broadcast_to, _read_broadcast_to))
register(OPS, ["jax.numpy.repeat", "jax.Array.repeat"], Op(repeat, _read_repeat))
