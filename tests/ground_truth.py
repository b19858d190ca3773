"""Ground truth for inference: run a program under JAX on 8 CPU devices and record
``jax.typeof`` after every assignment (``shardcheck confirm``'s runtime half), keyed by
(line, column, name) of the assigned name."""

from __future__ import annotations

from typing import Dict, Optional, Set, Tuple

from shardcheck.confirm import run_program

Key = Tuple[int, int, str]


def record(path: str, timeout: float = 300) -> Tuple[Dict[Key, Set[str]], Optional[str]]:
    """(types recorded at each (line, column, name), the error the program raised)."""
    run = run_program(path, devices=8, timeout=timeout)
    types = {tuple(k): set(v) for k, v in run["types"]}
    err = run["error"]
    return types, (f"{err['type']}: {err['message']}" if err else None)  # type: ignore[return-value]
