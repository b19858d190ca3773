"""What a file's result depends on besides its own text and the configuration: the
project files its analysis read (each with the hash of the content it read) and the
places the import system looked for a module and found none. The analysis records it
(``Project.dependencies``); a cache of results keeps an entry only while it holds.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from itertools import chain, repeat
from typing import Any, Callable, Dict, FrozenSet, Mapping, Optional

from .sources import Unreadable, read_source

# The hash of a file two reads of one check saw with different contents: it matches no
# file, so no result that read it is stored.
CHANGED = "changed while read"


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def hash_file(path: str) -> Optional[str]:
    """The content hash of the regular file ``path`` now; None if it cannot be read."""
    try:
        return content_hash(read_source(path))
    except Unreadable:
        return None


@dataclass(frozen=True)
class Dependencies:
    """What a file's result depends on besides its own content and the configuration.

    ``files``: each project file the check read, with the content hash of what it read
    (None: it could not be read); ``absent``: each path where the import system looked
    for a module and found none (``name.py`` or ``name/__init__.py`` under a source root
    or a namespace package's directory, or a directory that would make one). The result
    holds while every file hashes the same and every absent path is still absent."""

    files: Mapping[str, Optional[str]] = field(default_factory=dict)
    absent: FrozenSet[str] = frozenset()

    def hold(self, hash_of: Callable[[str], Optional[str]],
             exists: Callable[[str], bool]) -> bool:
        return all(h is not None and hash_of(p) == h for p, h in self.files.items()) and \
            not any(map(exists, self.absent))

    def as_json(self) -> Dict[str, Any]:
        return {"deps": dict(self.files), "absent": sorted(self.absent)}

    @classmethod
    def from_json(cls, entry: Dict[str, Any]) -> Optional["Dependencies"]:
        """What ``as_json`` wrote, or None for anything else."""
        files, absent = entry.get("deps"), entry.get("absent")
        if not isinstance(files, dict) or not isinstance(absent, list) or \
                not all(map(isinstance, chain(files.values(), absent), repeat(str))):
            return None
        return cls(files, frozenset(absent))
