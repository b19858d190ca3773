"""Which shardcheck this process runs: a stamp of its installed source files, so that a
result computed by other code (a cache entry, a daemon started before an upgrade or an
edit of a checkout) is never taken for this code's."""

from __future__ import annotations

import hashlib
import os
from typing import Optional

_STAMP: Optional[str] = None


def stamp(fresh: bool = False) -> str:
    """shardcheck's version and the path, size and mtime of every ``.py`` file of
    ``shardcheck`` (the application), ``shardcheck.analyzer`` and ``sharding_types``;
    computed once per process unless ``fresh``."""
    global _STAMP
    if _STAMP is None or fresh:
        from shardcheck._version import __version__
        h = hashlib.sha1(__version__.encode())
        roots = sorted({d for name in ("shardcheck", "shardcheck.analyzer", "sharding_types")
                        for d in _package_dirs(name)})
        for root in roots:
            for top, dirs, files in os.walk(root):
                dirs[:] = sorted(d for d in dirs if d != "__pycache__")
                for name in sorted(files):
                    if name.endswith(".py"):
                        p = os.path.join(top, name)
                        try:
                            st = os.stat(p)
                        except OSError:  # a link of an editable install left dangling
                            continue
                        h.update(f"{p}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
        _STAMP = h.hexdigest()
    return _STAMP


def _package_dirs(name: str) -> list:
    """The directories of package ``name``, found without running it: a run answered
    from the cache imports neither the analysis nor the runtime layer."""
    import importlib.util
    spec = importlib.util.find_spec(name)
    return list(spec.submodule_search_locations or []) if spec is not None else []
