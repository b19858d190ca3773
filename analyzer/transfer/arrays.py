"""Abstract arrays as the transfer rules build and take them apart.

Shardings are per-dim tuples of *explicit* mesh axes, exactly what ``jax.typeof`` shows:
Auto axes never appear, and inside ``shard_map`` the manual axes are gone from the dims
and live in ``varying`` instead. ``None`` anywhere means unknown; an unknown operand gives
an unknown result, never a conflict.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Iterable, Optional, Sequence, Tuple

from ..facts import DuplicateResultAxis, Fact
from ..values import ArrayVal, Value, union_varying

Dims = Tuple[Tuple[str, ...], ...]
Sizes = Callable[[str], Optional[int]]  # mesh axis -> size (None when unknown)
Shape = Tuple[Optional[int], ...]


class Conflict(Exception):
    """JAX rejects the operation (at trace time, or silently mis-computes it): ``fact``
    holds the offending values. The caller attaches the source node."""

    def __init__(self, fact: Fact):
        super().__init__(type(fact).__name__)
        self.fact = fact


def no_sizes(axis: str) -> Optional[int]:
    """The mesh sizes of a call with no known mesh."""
    return None


def rank(a: ArrayVal) -> Optional[int]:
    if a.dims is not None:
        return len(a.dims)
    if a.shape is not None:
        return len(a.shape)
    return None


def shape_of(a: ArrayVal, n: int) -> Shape:
    """The shape, with unknown sizes where only the rank is known."""
    return tuple(a.shape) if a.shape is not None else (None,) * n


def array(shape: Optional[Sequence[Optional[int]]], dims: Optional[Dims], dtype: Optional[str],
          weak: Optional[bool] = False, varying: Optional[frozenset] = frozenset(),
          base: Optional[ArrayVal] = None) -> ArrayVal:
    """A fresh result (on ``base``'s mesh when given)."""
    if dims is not None and shape is None:
        shape = (None,) * len(dims)
    return ArrayVal(tuple(shape) if shape is not None else None,
                    base.mesh if base is not None else None, None, None, varying,
                    dtype=dtype, weak=weak, dims=dims)


def one_dim_per_axis(op: str, dims: Sequence[Tuple[str, ...]], broadcast: bool = False) -> None:
    """A result may shard each mesh axis on one dim only: else JAX raises
    ShardingTypeError ("... produces an illegally sharded result"), for a contraction
    (``z @ z.T``) and for a broadcast (``x[:, None] + x[None, :]``) alike."""
    seen: dict = {}
    for i, axes in enumerate(dims):
        for ax in axes:
            if ax in seen:
                raise Conflict(DuplicateResultAxis(op, tuple(dims), ax, (seen[ax], i),
                                                   broadcast=broadcast))
            seen[ax] = i


def derived(x: ArrayVal, **changes: Any) -> ArrayVal:
    """``x`` with ``changes``, as a new value (no source spec, no node of its own)."""
    return replace(x, node=None, spec=None, **changes)


def unknown_like(operands: Iterable[Value]) -> ArrayVal:
    """An array of unknown type that varies over what its operands vary over."""
    return ArrayVal(None, varying=union_varying(list(operands)))


def norm_axis(axis: int, n: int) -> Optional[int]:
    """``axis`` in ``range(n)`` (negative axes count from the end), or None if invalid."""
    if -n <= axis < n:
        return axis % n
    return None


def axes_size(axes: Tuple[str, ...], sizes: Sizes) -> Optional[int]:
    """How many shards ``axes`` cut a dim into (None when a size is unknown)."""
    n = 1
    for a in axes:
        s = sizes(a)
        if s is None:
            return None
        n *= s
    return n or None  # an axis of size 0 (an empty mesh, reported as such): no shard to know


def prod(xs: Iterable[int]) -> int:
    out = 1
    for v in xs:
        out *= v
    return out
