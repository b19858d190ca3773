"""The project mesh index kept between runs (``project_axes.index_meshes``): the state of
the project's files it was read from (each file's size, modification time and inode, or
an editor's unsaved content), and the index as JSON in the cache directory.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

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
                    [tuple(w) for w in data["openers"]], list(data["fixed"]),
                    [(w, list(names)) for w, names in data["variants"]],
                    None if data["bound"] is None else list(data["bound"]))
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return None  # a missing or corrupt memo: the index is read again


def read_opener(memo_file: str) -> Optional[str]:
    """The file that opened the index kept in ``memo_file``, whatever state it was read
    in (None: none did, or no memo): that file alone may show the index open still."""
    try:
        with open(memo_file, encoding="utf-8") as f:
            opened = json.load(f)["opened_by"]
        return opened[0] if opened and isinstance(opened[0], str) else None
    except (OSError, ValueError, KeyError, TypeError, IndexError, RecursionError):
        return None


def write_memo(memo_file: str, digest: str, index: Any) -> None:
    """Written atomically; a memo that cannot be written is only slower."""
    import tempfile
    try:
        os.makedirs(os.path.dirname(memo_file) or ".", exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(memo_file) or ".", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump({"state": digest, "axes": index.axes, "meshes": index.meshes,
                       "opened_by": index.opened_by, "openers": index.openers[:20],
                       "fixed": index.fixed, "variants": index.variants,
                       "bound": index.bound}, f)
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
