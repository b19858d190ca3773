"""What a file's result depends on besides its own text and the configuration: the
project files its analysis read (each with the hash of the content it read), the
modules it only looked names up in (with the digest of what those names reach there:
``slices``), and the places the import system looked for a module and found none. The
analysis records it (``Project.dependencies``); a cache of results keeps an entry only
while it holds.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from itertools import chain, repeat
from typing import Any, Callable, Dict, FrozenSet, Iterable, Mapping, Optional, Tuple

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


# A module the result only looked names up in: (the hash of the content read, the names,
# the digest of their slice of that content, None until the cache computes it)
NamesRead = Tuple[Optional[str], Tuple[str, ...], Optional[str]]
# the digest of the slice of the names in a file as it is now (None: no slice known)
SliceOf = Callable[[str, Tuple[str, ...]], Optional[str]]


@dataclass(frozen=True)
class Dependencies:
    """What a file's result depends on besides its own content and the configuration.

    ``files``: each project file the check read, with the content hash of what it read
    (None: it could not be read); ``names``: each project module the check only looked
    names up in (``NamesRead``); ``absent``: each path where the import system looked
    for a module and found none (``name.py`` or ``name/__init__.py`` under a source root
    or a namespace package's directory, or a directory that would make one). The result
    holds while every file hashes the same, every module of ``names`` hashes the same or
    gives its names the same slice (``slice_of``), and every absent path is still absent."""

    files: Mapping[str, Optional[str]] = field(default_factory=dict)
    absent: FrozenSet[str] = frozenset()
    names: Mapping[str, NamesRead] = field(default_factory=dict)

    @property
    def paths(self) -> Iterable[str]:
        """Every project file the result read."""
        return list(self.files) + [p for p in self.names if p not in self.files]

    def hold(self, hash_of: Callable[[str], Optional[str]],
             exists: Callable[[str], bool], slice_of: Optional[SliceOf] = None) -> bool:
        if not all(h is not None and hash_of(p) == h for p, h in self.files.items()):
            return False
        for p, (h, names, digest) in self.names.items():
            if h is None or hash_of(p) != h and (
                    digest is None or slice_of is None or slice_of(p, names) != digest):
                return False
        return not any(map(exists, self.absent))

    def with_digests(self, slice_of: SliceOf) -> "Dependencies":
        """These dependencies with each module's slice digest computed (by a caller whose
        ``slice_of`` reads the content the check read)."""
        if all(d is not None for _, _, d in self.names.values()):
            return self
        names = {p: (h, ns, d if d is not None else slice_of(p, ns))
                 for p, (h, ns, d) in self.names.items()}
        return Dependencies(self.files, self.absent, names)

    def as_json(self) -> Dict[str, Any]:
        return {"deps": dict(self.files), "absent": sorted(self.absent),
                "names": {p: [h, list(ns), d] for p, (h, ns, d) in self.names.items()}}

    @classmethod
    def from_json(cls, entry: Dict[str, Any]) -> Optional["Dependencies"]:
        """What ``as_json`` wrote, or None for anything else."""
        files, absent, names = entry.get("deps"), entry.get("absent"), entry.get("names", {})
        if not isinstance(files, dict) or not isinstance(absent, list) or \
                not all(map(isinstance, chain(files.values(), absent), repeat(str))) or \
                not isinstance(names, dict):
            return None
        read: Dict[str, NamesRead] = {}
        for p, v in names.items():
            if not (isinstance(v, list) and len(v) == 3 and isinstance(v[0], str)
                    and isinstance(v[1], list) and all(isinstance(n, str) for n in v[1])
                    and (v[2] is None or isinstance(v[2], str))):
                return None
            read[p] = (v[0], tuple(v[1]), v[2])
        return cls(files, frozenset(absent), read)
