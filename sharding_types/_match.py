"""Compare an expected sharding type with an actual one. No JAX import.

Checks return reasons (an empty list means they match), so a caller can build a full
report. This is the one comparator: the runtime layer raises from it, the analyzer
compares declared with inferred types (``partial=True``: what it does not know never
mismatches), ``confirm`` says why an inferred type differs from JAX's (``exact=True``),
and the mypy plugin reports it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import (AbstractSet, Dict, List, MutableMapping, Optional, Sequence, Tuple,
                    Union)

from ._model import MeshModel, ShardingType
from ._partial import PartialType
from ._printing import format_entry

__all__ = ["mismatch_reasons", "ANY_SIZE"]

ANY_SIZE = "_"  # a dim name that matches any size and binds nothing


def _sharded(axes: Tuple[str, ...]) -> str:
    return f"sharded over {format_entry(tuple(axes))}" if axes else "replicated"


def _set_str(axes: AbstractSet[str]) -> str:
    return "{" + ", ".join(sorted(axes)) + "}" if axes else "{} (none)"


def _shape_str(shape: Sequence[Optional[int]]) -> str:
    """``(8, 16)``, ``(8,)``; an unknown size is ``?``."""
    parts = ["?" if s is None else str(s) for s in shape]
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


@dataclass(frozen=True)
class _Actual:
    """The actual side, every part possibly unknown (None)."""

    dtype: Optional[str]
    weak: Optional[bool]
    memory_space: Optional[str]
    sizes: Optional[Tuple[Optional[int], ...]]  # None: rank unknown
    axes: Optional[Tuple[Tuple[str, ...], ...]]  # None: the per-dim sharding is unknown
    sets: Tuple[Optional[AbstractSet[str]], ...]  # varying, unreduced, reduced


def _actual(actual: Union[ShardingType, PartialType]) -> _Actual:
    if isinstance(actual, ShardingType):
        return _Actual(actual.dtype, actual.weak_type, actual.memory_space,
                       tuple(d.size for d in actual.dims), tuple(d.axes for d in actual.dims),
                       (set(actual.varying), set(actual.unreduced), set(actual.reduced)))
    rank = actual.rank
    sizes = None
    if rank is not None:
        sizes = actual.shape if actual.shape is not None and len(actual.shape) == rank \
            else (None,) * rank
    return _Actual(actual.dtype, actual.weak, actual.memory_space, sizes, actual.dims,
                   (actual.varying, actual.unreduced, actual.reduced))


def mismatch_reasons(expected: ShardingType, actual: Union[ShardingType, PartialType],
                     bindings: Optional[MutableMapping[str, int]] = None,
                     mesh: Optional[MeshModel] = None,
                     bound_by: Optional[Dict[str, str]] = None, *,
                     partial: bool = False, exact: bool = False,
                     words: Tuple[str, str] = ("expected", "got")) -> List[str]:
    """Every way ``actual`` differs from ``expected``; binds ``expected``'s named dims.

    ``bindings`` maps dim names to sizes and is updated in place: a name seen for the
    first time binds to the actual size, and must agree afterwards. ``bound_by`` records
    where each name was bound, for messages. Weak typing is checked only when
    ``expected`` asks for it with ``~`` (both ways with ``exact``). Varying/unreduced/
    reduced compare as sets. ``mesh`` (else ``actual.mesh``): axes it lacks are reasons.

    ``partial``: ``actual`` may be a ``PartialType`` (or a type with named dims), and an
    unknown part of it (a None, a named dim's size) never mismatches. ``words`` name the
    two sides in the reasons: ``("declared", "inferred")`` reads "dtype: declared
    float32, inferred bfloat16".
    """
    if bindings is None:
        bindings = {}
    if bound_by is None:
        bound_by = {}
    if isinstance(actual, PartialType) and not partial:
        raise TypeError("comparing with a PartialType needs partial=True")
    a = _actual(actual)
    want, got = words
    reasons: List[str] = []
    if a.dtype is not None and expected.dtype != a.dtype:
        reasons.append(f"dtype: {want} {expected.dtype}, {got} {a.dtype}")
    if expected.weak_type and a.weak is False or (not partial and expected.weak_type and not a.weak):
        reasons.append(f"weak type: {want} a weakly typed value (~), {got} a strongly typed one")
    elif exact and not expected.weak_type and a.weak:
        reasons.append(f"weak type: {want} a strongly typed value, {got} a weakly typed one (~)")
    if a.memory_space is not None and expected.memory_space != a.memory_space:
        reasons.append(f"memory space: {want} {expected.memory_space}, {got} {a.memory_space}")
    if mesh is None and isinstance(actual, ShardingType):
        mesh = actual.mesh
    if mesh is not None and mesh.axis_names:
        named = set(expected.sharded_axes) | set(expected.varying) | set(
            expected.unreduced) | set(expected.reduced)
        for axis in sorted(named - set(mesh.axis_names)):
            reasons.append(f"axis {axis!r} is not an axis of the mesh "
                           f"(axes: {', '.join(mesh.axis_names)})")
    if a.sizes is not None and expected.rank != len(a.sizes):
        reasons.append(f"rank: {want} {expected.rank} dims, {got} {len(a.sizes)} "
                       f"(shape {_shape_str(a.sizes)})")
    elif a.sizes is not None:
        reasons += _dim_reasons(expected, a, bindings, bound_by, partial, words)
    for label, e_axes, a_axes in zip(("varying", "unreduced", "reduced"),
                                     (expected.varying, expected.unreduced, expected.reduced),
                                     a.sets):
        if a_axes is not None and set(e_axes) != set(a_axes):
            reasons.append(f"{label} axes: {want} {_set_str(set(e_axes))}, "
                           f"{got} {_set_str(set(a_axes))}")
    return reasons


def _dim_reasons(expected: ShardingType, a: _Actual, bindings: MutableMapping[str, int],
                 bound_by: Dict[str, str], partial: bool, words: Tuple[str, str]) -> List[str]:
    want, got = words
    reasons: List[str] = []
    sizes = a.sizes or ()
    for i, e in enumerate(expected.dims):
        size = sizes[i]
        if size is None and partial:
            pass  # unknown: neither a mismatch nor a binding
        elif e.name is not None and e.name != ANY_SIZE:
            if e.name in bindings:
                if size != bindings[e.name]:
                    src = f" (bound by {bound_by[e.name]})" if e.name in bound_by else ""
                    reasons.append(f"dim {i}: {want} {e.name}={bindings[e.name]}{src}, "
                                   f"{got} size {size}")
            elif size is not None:
                bindings[e.name] = size
        elif e.size is not None and e.size != size:
            reasons.append(f"dim {i}: {want} size {e.size}, {got} {size}")
        if a.axes is not None and tuple(e.axes) != tuple(a.axes[i]):
            reasons.append(f"dim {i}: {want} {_sharded(e.axes)}, {got} {_sharded(a.axes[i])}")
    return reasons
