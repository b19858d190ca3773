"""The printer: sharding types, partial types and ``PartitionSpec`` entries written
exactly as JAX writes them. It needs none of the model's classes (it reads their fields),
so the model's ``__str__`` and the parser can both use it without importing each other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Sequence

if TYPE_CHECKING:
    from ._model import ShardingType
    from ._partial import PartialType


def _set_str(prefix: str, axes: Sequence[str]) -> str:
    inner = ",".join(axes)
    return f"{prefix}:{inner if len(axes) == 1 else '(' + inner + ')'}"


def _sets_str(varying: Sequence[str], unreduced: Sequence[str], reduced: Sequence[str]) -> str:
    sets = [_set_str(p, axes) for p, axes in
            (("V", varying), ("U", unreduced), ("R", reduced)) if axes]
    return "{" + ", ".join(sets) + "}" if sets else ""


def format_type(t: ShardingType) -> str:
    """Print ``t`` exactly as JAX 0.10.2's ``str(jax.typeof(x))`` does."""
    mem = "" if t.memory_space == "device" else f"<{t.memory_space}>"
    dims = ",".join(str(d) for d in t.dims)
    tail = _sets_str(t.varying, t.unreduced, t.reduced)
    return f"{'~' if t.weak_type else ''}{t.dtype}{mem}[{dims}]{tail}"


def format_partial(t: "PartialType", axis_order: Sequence[str] = ()) -> str:
    """A partial type in JAX's syntax, ``?`` for what is unknown: ``float32[8@x,?]``,
    ``~?[4]``, ``int32[?]`` (dims unknown). A known, non-empty axis set prints as JAX
    prints it, in ``axis_order``; an unknown weak flag, memory space or axis set prints
    nothing. A complete type prints as ``format_type`` does."""
    mem = "" if t.memory_space in (None, "device") else f"<{t.memory_space}>"
    head = f"{'~' if t.weak else ''}{t.dtype or '?'}{mem}"
    if t.dims is None:
        return f"{head}[?]"
    shape = t.shape if t.shape is not None else (None,) * len(t.dims)
    dims = []
    for size, axes in zip(shape, t.dims):
        dims.append(("?" if size is None else str(size)) + (_axes_suffix(axes) if axes else ""))
    order = {a: i for i, a in enumerate(axis_order)}

    def ordered(axes: Any) -> Sequence[str]:
        return sorted(axes or (), key=lambda a: (order.get(a, len(order)), a))
    tail = _sets_str(ordered(t.varying), ordered(t.unreduced), ordered(t.reduced))
    return f"{head}[{','.join(dims)}]{tail}"


def _axes_suffix(axes: Sequence[str]) -> str:
    return "@" + (axes[0] if len(axes) == 1 else "(" + ",".join(axes) + ")")


def format_entry(entry: Any) -> str:
    """One ``PartitionSpec`` entry as JAX's repr writes it: ``None``, ``'x'``,
    ``('x', 'y')``. A 1-tuple prints bare and an empty tuple as ``None`` (both mean the
    same to JAX); ``?`` stands for an unknown entry, or an unknown name (None) in a tuple."""
    if entry is None:
        return "None"
    if isinstance(entry, str):
        return repr(entry)
    if isinstance(entry, tuple):
        names = [repr(a) if isinstance(a, str) else "?" for a in entry]
        if not names:
            return "None"
        return names[0] if len(names) == 1 else "(" + ", ".join(names) + ")"
    return "?"


def format_spec(entries: Iterable[Any], unreduced: Iterable[Any] = (),
                reduced: Iterable[Any] = ()) -> str:
    """A ``PartitionSpec`` as written in source and as JAX's repr shows it:
    ``P('data', None)``, ``P(('x', 'y'), unreduced={'z'})`` (JAX's repr adds a trailing
    comma after a single entry; we print the spec as the user writes it)."""
    parts = [format_entry(e) for e in entries]
    for label, axes in (("unreduced", unreduced), ("reduced", reduced)):
        names = [repr(a) if isinstance(a, str) else "?" for a in axes]
        if names:
            parts.append(f"{label}={{{', '.join(sorted(names))}}}")
    return "P(" + ", ".join(parts) + ")"
