"""What a file's result depends on besides its own text and the configuration: the
project files its analysis read (each with the hash of the content it read), the
modules it only looked names up in (with the digest of what those names reach there:
``slices``), and the places the import system looked for a module and found none. The
analysis records it (``Project.dependencies``); a cache of results keeps an entry only
while it holds.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from itertools import repeat
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
    gives its names the same slice (``slice_of``), and every absent path is still absent.
    ``absent_tree``: absent paths as a cache entry keeps them (a large project's result
    records thousands), a tree of their path components (``absent_tree``): a missing
    directory prunes all the paths below it."""

    files: Mapping[str, Optional[str]] = field(default_factory=dict)
    absent: FrozenSet[str] = frozenset()
    names: Mapping[str, NamesRead] = field(default_factory=dict)
    absent_tree: Mapping[str, Any] = field(default_factory=dict)

    @property
    def paths(self) -> Iterable[str]:
        """Every project file the result read."""
        return list(self.files) + [p for p in self.names if p not in self.files]

    def hold(self, hash_of: Callable[[str], Optional[str]],
             exists: Callable[[str], bool], slice_of: Optional[SliceOf] = None,
             listing: Optional[Callable[[str], Optional[FrozenSet[str]]]] = None) -> bool:
        """Whether the result still holds. ``listing(directory)``: the names in a
        directory (None: no directory there; ``UNLISTED``: one that cannot be listed),
        which prunes the absent paths a cache entry keeps (``absent_tree``) at their
        first missing directory; without it, each is looked at with ``exists``."""
        if not all(h is not None and hash_of(p) == h for p, h in self.files.items()):
            return False
        for p, (h, names, digest) in self.names.items():
            if h is None or hash_of(p) != h and (
                    digest is None or slice_of is None or slice_of(p, names) != digest):
                return False
        if any(map(exists, self.absent)):
            return False
        return not _any_present("", self.absent_tree, exists, listing)

    def with_digests(self, slice_of: SliceOf) -> "Dependencies":
        """These dependencies with each module's slice digest computed (by a caller whose
        ``slice_of`` reads the content the check read)."""
        if all(d is not None for _, _, d in self.names.values()):
            return self
        names = {p: (h, ns, d if d is not None else slice_of(p, ns))
                 for p, (h, ns, d) in self.names.items()}
        return Dependencies(self.files, self.absent, names, self.absent_tree)

    def collapsed(self, listing: Callable[[str], Optional[FrozenSet[str]]]) -> "Dependencies":
        """These dependencies with each absent path under a directory that is missing
        (``listing``: None) kept as that directory: it stays absent while the directory
        does, and creating the directory makes the result a miss, never a wrong answer."""
        tree = absent_tree(self.absent, self.absent_tree)
        return Dependencies(self.files, frozenset(), self.names, _pruned("", tree, listing))

    def as_json(self) -> Dict[str, Any]:
        tree = absent_tree(self.absent, self.absent_tree)
        return {"deps": dict(self.files), "absent": tree,
                "names": {p: [h, list(ns), d] for p, (h, ns, d) in self.names.items()}}

    @classmethod
    def from_json(cls, entry: Dict[str, Any]) -> Optional["Dependencies"]:
        """What ``as_json`` wrote, or None for anything else."""
        files, absent, names = entry.get("deps"), entry.get("absent"), entry.get("names", {})
        if not isinstance(files, dict) or not isinstance(absent, dict) or \
                not all(map(isinstance, files.values(), repeat(str))) or \
                not isinstance(names, dict):
            return None
        read: Dict[str, NamesRead] = {}
        for p, v in names.items():
            if not (isinstance(v, list) and len(v) == 3 and isinstance(v[0], str)
                    and isinstance(v[1], list) and all(isinstance(n, str) for n in v[1])
                    and (v[2] is None or isinstance(v[2], str))):
                return None
            read[p] = (v[0], tuple(v[1]), v[2])
        return cls(files, frozenset(), read, absent)


# A directory that exists, or may, and cannot be listed: each path in it is looked at
UNLISTED: FrozenSet[str] = frozenset({"\0unlisted"})
_LEAF = 1  # an absent path's last component, in an absent tree


def absent_tree(paths: Iterable[str], tree: Mapping[str, Any] = {}) -> Dict[str, Any]:
    """``paths`` (absolute) as a tree of their components, merged into a copy of
    ``tree``: {component: subtree, or ``_LEAF`` where a path ends}. A path that ends
    where another goes on keeps the leaf: its absence implies theirs."""
    out: Dict[str, Any] = _copy_tree(tree)
    for path in paths:
        parts = os.path.abspath(path).split(os.sep)
        node = out
        for part in parts[:-1]:
            child = node.get(part)
            if child == _LEAF:
                break
            if child is None:
                child = node[part] = {}
            node = child
        else:
            node[parts[-1]] = _LEAF
    return out


def _pruned(directory: str, tree: Dict[str, Any],
            listing: Callable[[str], Optional[FrozenSet[str]]]) -> Dict[str, Any]:
    """``tree`` below ``directory`` with each subtree of a missing directory a leaf (a
    directory is missing where its parent's listing lacks it)."""
    names = listing(directory) if directory else UNLISTED
    out: Dict[str, Any] = {}
    for part, sub in tree.items():
        if sub == _LEAF or names is not UNLISTED and names is not None and part not in names:
            out[part] = _LEAF
            continue
        path = os.path.join(directory, part) if directory else part + os.sep
        if listing(path) is not None:
            out[part] = _pruned(path, sub, listing)
        else:  # a file (or a path that cannot be listed): what is below it, one level
            out[part] = {k: _LEAF for k in sub}
    return out


def _copy_tree(tree: Mapping[str, Any]) -> Dict[str, Any]:
    return {k: v if v == _LEAF else _copy_tree(v) for k, v in tree.items()}


def _any_present(directory: str, tree: Mapping[str, Any], exists: Callable[[str], bool],
                 listing: Optional[Callable[[str], Optional[FrozenSet[str]]]]) -> bool:
    """Whether a path of ``tree`` (its components below ``directory``) exists: a
    component its directory's listing lacks is not looked at further. A tree of another
    shape (a corrupt cache entry) has one: the result it belongs to does not hold."""
    names = listing(directory) if listing is not None and directory else UNLISTED
    if names is None:
        return False
    for part, sub in tree.items():
        if names is not UNLISTED and part not in names:
            continue
        path = os.path.join(directory, part) if directory else part + os.sep
        if sub == _LEAF:
            if exists(path):
                return True
        elif not isinstance(sub, dict) or _any_present(path, sub, exists, listing):
            return True
    return False
