"""The project mesh index kept between runs (``project_axes.index_meshes``): the state of
the project's files it was read from (each file's size, modification time and inode, or
an editor's unsaved content), and the index as JSON in the cache directory.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any, Callable, Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from .project_names import buffer_of


def read_memo(memo_file: str, digest: str, make: Callable[..., Any]) -> Any:
    """The index kept in ``memo_file`` for the state ``digest`` (``make``: MeshIndex); None
    when the memo is for another state, missing or corrupt."""
    try:
        with open(memo_file, encoding="utf-8") as f:
            data = json.load(f)
        if data.get("state") != digest:
            return None
        opened = data["opened_by"]
        return make({a: [tuple(w) for w in ws] for a, ws in data["axes"].items()},
                    [tuple(w) for w in data["meshes"]], tuple(opened) if opened else None,
                    [tuple(w) for w in data["openers"]],
                    list(data.get("opened_unless_defined") or ()), list(data["fixed"]),
                    [(w, list(names)) for w, names in data["variants"]],
                    None if data["bound"] is None else list(data["bound"]))
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return None  # a missing or corrupt memo: the index is read again


class Opened(NamedTuple):
    """What opened the index a memo keeps: the file (``path``), where and why
    (``opened_by``), the names that must stay undefined in the project for it to hold,
    and the state of each file the index was read from (empty if not recorded)."""

    path: str
    opened_by: Tuple[str, int, str]
    unless_defined: List[str]
    files: Dict[str, tuple]


def read_opener(memo_file: str) -> Optional[Opened]:
    """What opened the index kept in ``memo_file``, whatever state it was read in (None:
    nothing did, or no memo): that file alone may show the index open still."""
    try:
        with open(memo_file, encoding="utf-8") as f:
            data = json.load(f)
        opened = data["opened_by"]
        if not opened or not isinstance(opened[0], str):
            return None
        files = {str(s[0]): tuple(s) for s in data.get("files") or ()}
        return Opened(opened[0], (opened[0], int(opened[1]), str(opened[2])),
                      [str(n) for n in data.get("opened_unless_defined") or ()], files)
    except (OSError, ValueError, KeyError, TypeError, IndexError, RecursionError):
        return None


def write_memo(memo_file: str, digest: str, index: Any, files: Sequence[tuple] = ()) -> None:
    """Written atomically; a memo that cannot be written is only slower."""
    import tempfile
    try:
        os.makedirs(os.path.dirname(memo_file) or ".", exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(memo_file) or ".", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump({"state": digest, "axes": index.axes, "meshes": index.meshes,
                       "opened_by": index.opened_by, "openers": index.openers[:20],
                       "fixed": index.fixed, "variants": index.variants,
                       "bound": index.bound,
                       "opened_unless_defined": index.opened_unless_defined,
                       # each file's state, for an open index: what changed since
                       "files": list(files) if index.opened_by is not None else []}, f)
        os.replace(tmp, memo_file)
    except OSError:
        try:
            os.unlink(tmp)
        except (OSError, UnboundLocalError):
            pass


def state_of(paths: Sequence[str], overlay: Optional[Mapping[str, bytes]],
             config_values: Optional[Dict[str, Any]]) -> tuple:
    """What the index read: each file's unsaved content's hash, or its size, modification
    time and inode; and the configs' values."""
    state: List[tuple] = []
    for p in paths:
        data = buffer_of(p, overlay)
        if data is not None:
            state.append((p, hashlib.sha256(data).hexdigest()))
            continue
        try:
            st = os.stat(p)
        except OSError:
            state.append((p, None))
            continue
        state.append((p, st.st_mtime_ns, st.st_size, st.st_ino))
    return (tuple(state), json.dumps(config_values or {}, sort_keys=True))
