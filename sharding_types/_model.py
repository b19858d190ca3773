"""The one sharding-type model shared by the runtime layer, the analyzer and the plugin.

Plain frozen values, no JAX import: the static analyzer builds these from source text
and the runtime layer builds them from ``jax.typeof``. ``str()`` prints JAX's syntax.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Optional, Tuple, Union

__all__ = ["AxisType", "Dim", "MeshModel", "ShardingType", "PartitionEntry"]

# One entry of a PartitionSpec as JAX stores it: None (replicated), an axis name, or a
# tuple of axis names (major to minor).
PartitionEntry = Union[None, str, Tuple[str, ...]]


class AxisType(enum.Enum):
    """How a mesh axis is sharded; mirrors ``jax.sharding.AxisType``."""

    Explicit = "Explicit"
    Auto = "Auto"
    Manual = "Manual"

    def __repr__(self) -> str:  # as JAX prints them inside Mesh(...)
        return self.value


@dataclass(frozen=True)
class MeshModel:
    """A mesh's shape without devices: axis names, sizes and types (like ``AbstractMesh``)."""

    axis_names: Tuple[str, ...]
    axis_sizes: Tuple[int, ...]
    axis_types: Tuple[AxisType, ...] = ()

    def __post_init__(self) -> None:
        if len(self.axis_names) != len(self.axis_sizes):
            raise ValueError(
                f"a mesh needs one size per axis name, got names {self.axis_names} "
                f"and sizes {self.axis_sizes}")
        if len(set(self.axis_names)) != len(self.axis_names):
            raise ValueError(f"mesh axis names must be unique, got {self.axis_names}")
        if not self.axis_types:
            object.__setattr__(self, "axis_types", (AxisType.Explicit,) * len(self.axis_names))
        elif len(self.axis_types) != len(self.axis_names):
            raise ValueError(
                f"a mesh needs one axis type per axis name, got names {self.axis_names} "
                f"and types {self.axis_types}")

    @classmethod
    def from_shape(cls, shape: Mapping[str, int],
                   axis_types: Optional[Iterable[AxisType]] = None) -> "MeshModel":
        """``MeshModel.from_shape({"data": 64, "model": 8})``."""
        names = tuple(shape)
        return cls(names, tuple(int(shape[n]) for n in names),
                   tuple(axis_types) if axis_types is not None else ())

    @property
    def shape(self) -> dict:
        return dict(zip(self.axis_names, self.axis_sizes))

    @property
    def size(self) -> int:
        n = 1
        for s in self.axis_sizes:
            n *= s
        return n

    def axis_size(self, axes: Iterable[str]) -> int:
        """The number of shards a dim sharded over ``axes`` is split into."""
        n = 1
        shape = self.shape
        for a in axes:
            n *= shape[a]
        return n

    def axis_type(self, name: str) -> AxisType:
        return dict(zip(self.axis_names, self.axis_types))[name]

    def order(self, axes: Iterable[str]) -> Tuple[str, ...]:
        """``axes`` in mesh order, as JAX orders the ``{V:...}`` sets it prints."""
        s = set(axes)
        return tuple(a for a in self.axis_names if a in s) + tuple(
            sorted(a for a in s if a not in self.axis_names))

    def __contains__(self, axis: object) -> bool:
        return axis in self.axis_names

    def __str__(self) -> str:
        inner = ", ".join(f"'{n}': {s}" for n, s in zip(self.axis_names, self.axis_sizes))
        types = ", ".join(t.value for t in self.axis_types)
        sep = ", " if inner else ""
        return f"Mesh({inner}{sep}axis_types=({types}{',' if len(self.axis_types) == 1 else ''}))"


@dataclass(frozen=True)
class Dim:
    """One array dimension: a size or a dim name, and the mesh axes it is sharded over.

    ``Dim(8, axes=("x",))`` prints ``8@x``; ``Dim(name="B", axes=("data",))`` prints
    ``B@data``; ``Dim(name="_")`` matches any size. ``axes`` is major to minor, as in
    ``PartitionSpec``; an empty tuple means replicated along this dim.
    """

    size: Optional[int] = None
    name: Optional[str] = None
    axes: Tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if (self.size is None) == (self.name is None):
            raise ValueError("a Dim has exactly one of a size or a name")
        if isinstance(self.axes, str):
            object.__setattr__(self, "axes", (self.axes,))
        else:
            object.__setattr__(self, "axes", tuple(self.axes))

    @property
    def is_sharded(self) -> bool:
        return bool(self.axes)

    @property
    def partition(self) -> PartitionEntry:
        """This dim's ``PartitionSpec`` entry."""
        if not self.axes:
            return None
        return self.axes[0] if len(self.axes) == 1 else self.axes

    def __str__(self) -> str:
        base = str(self.size) if self.name is None else self.name
        if not self.axes:
            return base
        if len(self.axes) == 1:
            return f"{base}@{self.axes[0]}"
        return f"{base}@({','.join(self.axes)})"


@dataclass(frozen=True)
class ShardingType:
    """A sharded array type, printed exactly as ``str(jax.typeof(x))``.

    ``varying``, ``unreduced`` and ``reduced`` keep the order they were given (JAX prints
    them in mesh order). ``mesh`` is context for messages and local shapes; it takes no
    part in equality, since the printed type does not show it.
    """

    dtype: str
    dims: Tuple[Dim, ...] = ()
    varying: Tuple[str, ...] = ()
    unreduced: Tuple[str, ...] = ()
    reduced: Tuple[str, ...] = ()
    weak_type: bool = False
    memory_space: str = "device"
    mesh: Optional[MeshModel] = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        for name in ("dims", "varying", "unreduced", "reduced"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        problem = self.validity_problem()
        if problem:
            raise ValueError(problem)

    # -- JAX's invariants -------------------------------------------------------------
    def validity_problem(self) -> str:
        """Why JAX could never produce this type ("" when it could)."""
        seen: dict = {}
        for i, d in enumerate(self.dims):
            for a in d.axes:
                if a in seen:
                    return (f"mesh axis '{a}' shards both dim {seen[a]} and dim {i}; "
                            "a mesh axis can shard at most one dimension")
                seen[a] = i
        for label, axes in (("varying", self.varying), ("unreduced", self.unreduced),
                            ("reduced", self.reduced)):
            if len(set(axes)) != len(axes):
                return f"the {label} set lists an axis twice: {axes}"
        if set(self.unreduced) & set(self.reduced):
            return (f"an axis cannot be both unreduced and reduced: "
                    f"{sorted(set(self.unreduced) & set(self.reduced))}")
        for label, axes in (("unreduced", self.unreduced), ("reduced", self.reduced)):
            both = sorted(set(axes) & set(seen))
            if both:
                return f"axis {both[0]!r} both shards a dim and is {label}"
            both = sorted(set(axes) & set(self.varying))
            if both:
                return f"axis {both[0]!r} cannot be both varying and {label}"
        return ""

    # -- views ------------------------------------------------------------------------
    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def shape(self) -> Tuple[Optional[int], ...]:
        """Dim sizes; ``None`` for a named dim."""
        return tuple(d.size for d in self.dims)

    @property
    def spec(self) -> Tuple[PartitionEntry, ...]:
        """The ``PartitionSpec`` entries, one per dim."""
        return tuple(d.partition for d in self.dims)

    @property
    def sharded_axes(self) -> Tuple[str, ...]:
        return tuple(a for d in self.dims for a in d.axes)

    @property
    def is_symbolic(self) -> bool:
        """True when some dim is named rather than sized."""
        return any(d.name is not None for d in self.dims)

    def local_shape(self, mesh: Optional[MeshModel] = None) -> Tuple[Optional[int], ...]:
        """Per-device shape: each dim's size divided by its axes' sizes."""
        mesh = mesh or self.mesh
        if mesh is None:
            raise ValueError(f"the local shape of {self} needs a mesh")
        out = []
        for d in self.dims:
            out.append(None if d.size is None else d.size // mesh.axis_size(d.axes))
        return tuple(out)

    def __str__(self) -> str:
        from ._printing import format_type
        return format_type(self)
