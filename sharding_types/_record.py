"""Recording sharding types as a program runs (the confirm loop's runtime half).

    rec = st.Recorder()
    with rec:
        st.record("h", h)           # inside jitted code too: it runs at trace time
    rec.types                       # {"h": {"float32[16@data,256@model]"}}

``record`` returns its value, so it can wrap an expression. Outside a ``with
Recorder()`` block it does nothing. Values that are not JAX arrays are skipped.
"""

from __future__ import annotations

from typing import Any, Dict, Hashable, List, Set

_ACTIVE: List["Recorder"] = []


class Recorder:
    """Collects ``str(jax.typeof(value))`` per key; a key seen with several types
    (a loop, a function traced for several shapes) keeps them all."""

    def __init__(self) -> None:
        self.types: Dict[Hashable, Set[str]] = {}

    def __call__(self, key: Hashable, value: Any) -> Any:
        t = _type_string(value)
        if t is not None:
            self.types.setdefault(key, set()).add(t)
        return value

    def __enter__(self) -> "Recorder":
        _ACTIVE.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        _ACTIVE.remove(self)


def record(key: Hashable, value: Any) -> Any:
    """Record ``value``'s sharding type under ``key`` in every active Recorder."""
    for rec in _ACTIVE:
        rec(key, value)
    return value


def _type_string(value: Any) -> "str | None":
    import jax
    if isinstance(value, (jax.Array, jax.core.Tracer)):
        return str(jax.typeof(value))
    return None
