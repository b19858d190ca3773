"""A script directory's Python config (``configs/default.py``'s ``get_config()``), for
``shardcheck specs``.

Flax's examples and many training scripts keep their hyperparameters in an
ml_collections config module: ``def get_config(): config = ml_collections.ConfigDict();
config.mesh_axes = [...]; config.logical_axis_rules = [...]; return config``, passed to
``train_and_evaluate(config: ml_collections.ConfigDict, ...)`` by an ``absl`` flag no
analysis can follow. The map reads that config as the defaults the run would use, and
says so (``assumes``); ``check`` never does, since a command line may override any field.

The config used for a file is the nearest one: in the file's directory, then each parent
up to the project root (at most four levels), the first of ``configs/default.py``,
``configs/base.py``, ``configs/config.py``, ``config/default.py``, ``config.py``,
``configs.py``, ``default_config.py`` that is a regular file defining ``get_config``.
"""

from __future__ import annotations

import ast
import os
import stat
from typing import Any, Dict, Optional, Tuple

CANDIDATES = ("configs/default.py", "configs/base.py", "configs/config.py", "config/default.py",
              "config.py", "configs.py", "default_config.py")
_MAX_BYTES = 1 << 20
_MAX_LEVELS = 4

_found: Dict[str, Optional[str]] = {}  # directory -> its nearest config file
_literals: Dict[Tuple[str, float], Dict[str, Any]] = {}  # (path, mtime) -> literal fields


def owner(shown: str) -> str:
    """How a site's ``assumes`` names the config (``configs/default.py:get_config()``)."""
    return f"{shown}:get_config()"


def find_for(path: str, root: Optional[str] = None) -> Optional[str]:
    """The Python config file that applies to the source file ``path`` (absolute), or None."""
    d = os.path.dirname(os.path.abspath(path))
    top = os.path.abspath(root) if root else None
    for _ in range(_MAX_LEVELS):
        if d not in _found:
            _found[d] = _in_dir(d)
        if _found[d] is not None:
            return _found[d]
        parent = os.path.dirname(d)
        if d == top or parent == d or (top is not None and not parent.startswith(top)):
            return None
        d = parent
    return None


def _in_dir(d: str) -> Optional[str]:
    for rel in CANDIDATES:
        p = os.path.join(d, rel)
        text = read(p)
        if text is not None and "def get_config" in text:
            return p
    return None


def read(path: str) -> Optional[str]:
    """The text of a regular UTF-8 file of at most 1 MiB, else None: a FIFO named like a
    config never blocks (also how ``logical_config`` reads the YAML it discovers)."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size > _MAX_BYTES:
            return None
        with open(path, encoding="utf-8") as f:
            return f.read(_MAX_BYTES)
    except (OSError, UnicodeDecodeError, ValueError):
        return None


def literal_fields(path: str) -> Dict[str, Any]:
    """The fields ``get_config`` sets to literals (``config.name = <literal>``), read with
    ``ast`` (a field set twice keeps its last value; a non-literal one is left out)."""
    try:
        key = (path, os.stat(path).st_mtime)
    except OSError:
        return {}
    got = _literals.get(key)
    if got is None:
        got = _literals[key] = _read_literals(path)
    return got


def _read_literals(path: str) -> Dict[str, Any]:
    text = read(path)
    if text is None:
        return {}
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return {}
    fn = next((s for s in tree.body if isinstance(s, ast.FunctionDef) and s.name == "get_config"),
              None)
    if fn is None:
        return {}
    out: Dict[str, Any] = {}
    for s in fn.body:
        if not isinstance(s, (ast.Assign, ast.AnnAssign)) or s.value is None:
            continue
        targets = s.targets if isinstance(s, ast.Assign) else [s.target]
        for t in targets:
            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name):
                try:
                    out[t.attr] = ast.literal_eval(s.value)
                except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                    out.pop(t.attr, None)
    return out
