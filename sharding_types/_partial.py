"""Partial sharding types and meshes: the model with every part known or unknown. No JAX.

The static analyzer infers these: a value whose dtype is known but whose sharding is
not, a mesh whose axis names are known but whose sizes come from a function argument.
``None`` is unknown throughout. A partial type prints in JAX's syntax with ``?`` for an
unknown dtype, size or dim list (``float32[8@x,?]``, ``?[?]``), becomes a full
``ShardingType`` once every part is known (``complete()``), and compares against a
declared type with ``mismatch_reasons(..., partial=True)``, where unknown parts never
mismatch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import FrozenSet, Optional, Sequence, Tuple

from ._model import AxisType, Dim, MeshModel, ShardingType

__all__ = ["PartialMesh", "PartialType"]

Shape = Tuple[Optional[int], ...]
DimAxes = Tuple[Tuple[str, ...], ...]


def _same(a, b):
    return a if a == b else None


@dataclass(frozen=True, kw_only=True)
class PartialType:
    """A sharding type whose parts may each be unknown (``None``).

    ``shape``: the dim sizes (a size may be None), None when even the rank is unknown.
    ``dims``: per dim, the mesh axes it is sharded over (``()`` = replicated, as
    ``jax.typeof`` shows after ``@``), None when unknown. ``varying``/``unreduced``/
    ``reduced``: axis sets. ``memory_space``: ``device``, ``host`` or ``any``.
    """

    dtype: Optional[str] = None
    weak: Optional[bool] = None
    shape: Optional[Shape] = None
    dims: Optional[DimAxes] = None
    varying: Optional[FrozenSet[str]] = None
    unreduced: Optional[FrozenSet[str]] = None
    reduced: Optional[FrozenSet[str]] = None
    memory_space: Optional[str] = None

    @classmethod
    def from_type(cls, t: ShardingType) -> "PartialType":
        """Everything ``t`` states; a named dim (``B``) is a dim of unknown size."""
        return cls(dtype=t.dtype, weak=t.weak_type, shape=tuple(d.size for d in t.dims),
                   dims=tuple(d.axes for d in t.dims), varying=frozenset(t.varying),
                   unreduced=frozenset(t.unreduced), reduced=frozenset(t.reduced),
                   memory_space=t.memory_space)

    @property
    def rank(self) -> Optional[int]:
        if self.dims is not None:
            return len(self.dims)
        if self.shape is not None:
            return len(self.shape)
        return None

    def complete(self, axis_order: Sequence[str] = ()) -> Optional[ShardingType]:
        """The full type when every part is known (and JAX could produce it), else None.

        ``axis_order``: the mesh's axis names, the order JAX prints ``{V:...}`` sets in
        (axes not in it follow, sorted)."""
        shape, dims = self.shape, self.dims
        if (self.dtype is None or self.weak is None or shape is None or dims is None
                or None in shape or len(shape) != len(dims) or self.varying is None
                or self.unreduced is None or self.reduced is None or self.memory_space is None):
            return None
        order = {a: i for i, a in enumerate(axis_order)}

        def ordered(axes: FrozenSet[str]) -> Tuple[str, ...]:
            return tuple(sorted(axes, key=lambda a: (order.get(a, len(order)), a)))
        try:
            return ShardingType(self.dtype, tuple(Dim(s, axes=a) for s, a in zip(shape, dims)),
                                varying=ordered(self.varying), unreduced=ordered(self.unreduced),
                                reduced=ordered(self.reduced), weak_type=self.weak,
                                memory_space=self.memory_space)
        except (ValueError, TypeError):
            return None

    def join(self, other: "PartialType") -> "PartialType":
        """What ``self`` and ``other`` have in common: a part on which they differ is
        unknown (a size, or the whole shape when the ranks differ)."""
        shape = None
        if self.shape is not None and other.shape is not None and len(self.shape) == len(other.shape):
            shape = tuple(_same(a, b) for a, b in zip(self.shape, other.shape))
        return PartialType(dtype=_same(self.dtype, other.dtype), weak=_same(self.weak, other.weak),
                           shape=shape, dims=_same(self.dims, other.dims),
                           varying=_same(self.varying, other.varying),
                           unreduced=_same(self.unreduced, other.unreduced),
                           reduced=_same(self.reduced, other.reduced),
                           memory_space=_same(self.memory_space, other.memory_space))

    def format(self, axis_order: Sequence[str] = ()) -> str:
        """JAX's syntax with ``?`` for unknown parts; sets in ``axis_order``."""
        from ._printing import format_partial
        return format_partial(self, axis_order)

    def __str__(self) -> str:
        return self.format()


@dataclass(frozen=True)
class PartialMesh:
    """A mesh whose axis names, sizes (each size, or all) or types may be unknown."""

    names: Optional[Tuple[str, ...]] = None
    sizes: Optional[Tuple[Optional[int], ...]] = None
    types: Optional[Tuple[AxisType, ...]] = None

    @classmethod
    def from_model(cls, mesh: MeshModel) -> "PartialMesh":
        return cls(mesh.axis_names, mesh.axis_sizes, mesh.axis_types)

    def model(self) -> Optional[MeshModel]:
        """The full mesh when names and every size are known (unknown types: Explicit)."""
        if self.names is None or self.sizes is None or any(s is None for s in self.sizes):
            return None
        return MeshModel(self.names, tuple(int(s) for s in self.sizes if s is not None),
                         self.types or ())

    def size_of(self, axis: str) -> Optional[int]:
        if self.names is None or self.sizes is None or axis not in self.names:
            return None
        return self.sizes[self.names.index(axis)]

    def type_of(self, axis: str) -> Optional[AxisType]:
        if self.names is None or self.types is None or axis not in self.names:
            return None
        return self.types[self.names.index(axis)]

    def same_shape(self, other: "PartialMesh") -> Optional[bool]:
        """True/False when both are known well enough to tell, else None."""
        if self.names is None or other.names is None:
            return None
        if self.names != other.names:
            return False
        if self.sizes is None or other.sizes is None or None in self.sizes or None in other.sizes:
            return None
        return self.sizes == other.sizes

    def describe(self) -> str:
        """``Mesh('data': 2, 'model': ?)``, for messages."""
        if self.names is None:
            return "a mesh with unknown axes"
        sizes = self.sizes or (None,) * len(self.names)
        inner = ", ".join(f"'{n}': {'?' if s is None else s}" for n, s in zip(self.names, sizes))
        return f"Mesh({inner})"
