"""Ground truth for inference: run a program under JAX on 8 CPU devices and record
``jax.typeof`` after every assignment (``shardcheck confirm``'s runtime half, its own
driver, run by tests/jax_snippets.py's server), keyed by (line, column, name) of the
assigned name (the driver's keys start with the file: the program's own are kept)."""

from __future__ import annotations

import os
from typing import Dict, List, Optional, Sequence, Set, Tuple

from jax_snippets import record_programs

Key = Tuple[int, int, str]
Recording = Tuple[Dict[Key, Set[str]], Optional[str]]


def record_all(paths: Sequence[str], timeout: float = 300) -> List[Recording]:
    """Per program: (types recorded at each (line, column, name), the error it raised)."""
    out = []
    for path, run in zip(paths, record_programs(paths, devices=8, timeout=timeout)):
        program = os.path.realpath(path)
        types = {tuple(k[1:]): set(v) for k, v in run["types"] if k[0] == program}
        err = run["error"]
        out.append((types, f"{err['type']}: {err['message']}" if err else None))
    return out  # type: ignore[return-value]


def record(path: str, timeout: float = 300) -> Recording:
    """(types recorded at each (line, column, name), the error the program raised)."""
    return record_all([path], timeout)[0]
