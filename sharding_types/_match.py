"""Compare an expected sharding type with an actual one. No JAX import.

Checks return reasons (an empty list means they match), so a caller can build a full
report; the runtime layer raises from them and the mypy plugin reports them.
"""

from __future__ import annotations

from typing import Dict, List, MutableMapping, Optional, Tuple

from ._model import MeshModel, ShardingType

__all__ = ["mismatch_reasons", "ANY_SIZE"]

ANY_SIZE = "_"  # a dim name that matches any size and binds nothing


def _axes_str(axes: Tuple[str, ...]) -> str:
    return repr(axes[0]) if len(axes) == 1 else "(" + ", ".join(repr(a) for a in axes) + ")"


def _set_str(axes) -> str:
    return "{" + ", ".join(sorted(axes)) + "}" if axes else "{} (none)"


def mismatch_reasons(expected: ShardingType, actual: ShardingType,
                     bindings: Optional[MutableMapping[str, int]] = None,
                     mesh: Optional[MeshModel] = None,
                     bound_by: Optional[Dict[str, str]] = None) -> List[str]:
    """Every way ``actual`` differs from ``expected``; binds ``expected``'s named dims.

    ``bindings`` maps dim names to sizes and is updated in place: a name seen for the
    first time binds to the actual size, and must agree afterwards. ``bound_by`` records
    where each name was bound, for messages. Weak typing is checked only when
    ``expected`` asks for it with ``~``. Varying/unreduced/reduced compare as sets.
    """
    if bindings is None:
        bindings = {}
    if bound_by is None:
        bound_by = {}
    reasons: List[str] = []
    if expected.dtype != actual.dtype:
        reasons.append(f"dtype: expected {expected.dtype}, got {actual.dtype}")
    if expected.weak_type and not actual.weak_type:
        reasons.append("weak type: expected a weakly typed value (~), got a strongly typed one")
    if expected.memory_space != actual.memory_space:
        reasons.append(f"memory space: expected {expected.memory_space}, "
                       f"got {actual.memory_space}")
    mesh = mesh or actual.mesh
    if mesh is not None and mesh.axis_names:
        wanted = set(expected.sharded_axes) | set(expected.varying) | set(
            expected.unreduced) | set(expected.reduced)
        for axis in sorted(wanted - set(mesh.axis_names)):
            reasons.append(f"axis {axis!r} is not an axis of the mesh "
                           f"(axes: {', '.join(mesh.axis_names)})")
    if expected.rank != actual.rank:
        reasons.append(f"rank: expected {expected.rank} dims, got {actual.rank} "
                       f"(shape {tuple(actual.shape)})")
    else:
        for i, (e, a) in enumerate(zip(expected.dims, actual.dims)):
            if e.name is not None and e.name != ANY_SIZE:
                if e.name in bindings:
                    if a.size != bindings[e.name]:
                        src = f" by {bound_by[e.name]}" if e.name in bound_by else ""
                        reasons.append(f"dim {i}: expected {e.name}={bindings[e.name]} "
                                       f"(bound{src}), got size {a.size}")
                elif a.size is not None:
                    bindings[e.name] = a.size
            elif e.size is not None and e.size != a.size:
                reasons.append(f"dim {i}: expected size {e.size}, got {a.size}")
            if e.axes != a.axes:
                if not e.axes:
                    got = f"sharded over {_axes_str(a.axes)}"
                    reasons.append(f"dim {i}: expected replicated, got {got}")
                elif not a.axes:
                    reasons.append(f"dim {i}: expected sharded over {_axes_str(e.axes)}, "
                                   "got replicated")
                else:
                    reasons.append(f"dim {i}: expected sharded over {_axes_str(e.axes)}, "
                                   f"got sharded over {_axes_str(a.axes)}")
    for label, e_axes, a_axes in (("varying", expected.varying, actual.varying),
                                  ("unreduced", expected.unreduced, actual.unreduced),
                                  ("reduced", expected.reduced, actual.reduced)):
        if set(e_axes) != set(a_axes):
            reasons.append(f"{label} axes: expected {_set_str(e_axes)}, got {_set_str(a_axes)}")
    return reasons
