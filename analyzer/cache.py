"""Results cached by file content, so a re-run on an unchanged tree is near-instant.

An entry is keyed by shardcheck's version (and the analyzer's own source files, so an
edited or upgraded checkout never reads stale results), the config's fingerprint, the
path and the file's content hash; it also stores the hashes of the project modules the file imported
names from, and is valid only while those are unchanged. Writes are atomic.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from typing import Dict, List, Optional, Tuple

from .._version import __version__
from .ftypes import Finding
from .sources import Unreadable, read_source


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


_CODE: Optional[str] = None


def code_version() -> str:
    """shardcheck's version plus the size and mtime of each analyzer source file."""
    global _CODE
    if _CODE is None:
        here = os.path.dirname(os.path.abspath(__file__))
        parts = [__version__]
        for root, _, names in sorted(os.walk(here)):
            for n in sorted(names):
                if n.endswith(".py"):
                    st = os.stat(os.path.join(root, n))
                    parts.append(f"{os.path.relpath(os.path.join(root, n), here)}:{st.st_size}:{st.st_mtime_ns}")
        _CODE = hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]
    return _CODE


def _well_formed(f: Finding) -> bool:
    """A finding read back from JSON has the types ``Finding`` declares."""
    ints = (f.row, f.column, f.end_row, f.end_column)
    strs = (f.code, f.name, f.message, f.severity, f.filename)
    if not all(isinstance(i, int) and not isinstance(i, bool) for i in ints) or \
            not all(isinstance(s, str) for s in strs) \
            or not isinstance(f.in_expected_failure, bool):
        return False
    x = f.fix
    if x is not None and not (_ints(x.row, x.column, x.end_row, x.end_column)
                              and isinstance(x.message, str) and isinstance(x.content, str)
                              and x.applicability in ("safe", "unsafe")
                              and all(_ints(*m[:4]) and isinstance(m[4], str) for m in x.more)):
        return False
    return all(_ints(r.row, r.column, r.end_row, r.end_column)
               and isinstance(r.message, str) and isinstance(r.filename, str)
               for r in f.related)


def _ints(*values: object) -> bool:
    return all(isinstance(i, int) and not isinstance(i, bool) for i in values)


def default_dir(config_root: Optional[str], start: str) -> str:
    """Where the cache goes when none is configured: beside the pyproject.toml that
    configured the run, else at the root of the checkout the checked path is in (a
    directory holding .git or .hg), else the user's cache directory; never an unrelated
    working directory."""
    if config_root is not None:
        return os.path.join(config_root, ".shardcheck_cache")
    d = os.path.abspath(start if os.path.isdir(start) else os.path.dirname(start) or ".")
    while True:
        if any(os.path.exists(os.path.join(d, m)) for m in (".git", ".hg")):
            return os.path.join(d, ".shardcheck_cache")
        parent = os.path.dirname(d)
        if parent == d:
            return user_cache_dir()
        d = parent


def user_cache_dir() -> str:
    """The platform's per-user cache directory for shardcheck."""
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or os.path.expanduser("~\\AppData\\Local")
        return os.path.join(base, "shardcheck", "Cache")
    if sys.platform == "darwin":
        return os.path.expanduser("~/Library/Caches/shardcheck")
    return os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
                        "shardcheck")


class Cache:
    def __init__(self, directory: str, fingerprint: str):
        self.dir = os.path.join(directory, "v1")
        self.fingerprint = fingerprint
        self._hashes: Dict[str, Optional[str]] = {}

    def file_hash(self, path: str) -> Optional[str]:
        """The content hash of a regular file; None if it cannot be read (never blocks
        on a FIFO)."""
        path = os.path.abspath(path)
        if path not in self._hashes:
            self.read(path)
        return self._hashes[path]

    def read(self, path: str) -> Tuple[Optional[bytes], Optional[str]]:
        """(the bytes of a regular file, their content hash), remembered for the run's
        look-ups of its dependencies; (None, None) if it cannot be read. A checked file
        that misses the cache is analysed from these bytes, not read again."""
        try:
            data = read_source(path)
        except Unreadable:
            self._hashes[os.path.abspath(path)] = None
            return None, None
        digest = self._hashes[os.path.abspath(path)] = content_hash(data)
        return data, digest

    def _key(self, path: str, digest: str) -> str:
        raw = f"{code_version()}\0{self.fingerprint}\0{os.path.abspath(path)}\0{digest}"
        return hashlib.sha256(raw.encode()).hexdigest()

    def _entry_path(self, key: str) -> str:
        return os.path.join(self.dir, key[:2], key[2:] + ".json")

    def get(self, path: str, digest: str) -> Optional[List[Finding]]:
        """The cached findings, or None: a missing, unreadable, corrupt or wrong-shaped
        entry (valid JSON that is not what ``put`` writes) is a miss, never an error."""
        try:
            entry = json.loads(read_source(self._entry_path(self._key(path, digest))))
        except (Unreadable, ValueError, RecursionError):
            return None
        if not isinstance(entry, dict) or not isinstance(entry.get("deps"), dict) \
                or not isinstance(entry.get("findings"), list):
            return None
        for dep, h in entry["deps"].items():
            if not isinstance(h, str) or self.file_hash(dep) != h:
                return None
        try:
            findings = [Finding.from_json(d) for d in entry["findings"]]
        except (KeyError, TypeError, ValueError, AttributeError, IndexError):
            return None
        return findings if all(_well_formed(f) for f in findings) else None

    def put(self, path: str, digest: str, findings: List[Finding], deps: List[str]) -> None:
        key = self._key(path, digest)
        target = self._entry_path(key)
        entry = {"findings": [dict(f.as_json(), in_expected_failure=f.in_expected_failure)
                              for f in findings],
                 "deps": {d: self.file_hash(d) for d in deps}}
        try:
            if not os.path.isdir(self.dir):
                os.makedirs(self.dir, exist_ok=True)
                ignore = os.path.join(os.path.dirname(self.dir), ".gitignore")
                if not os.path.exists(ignore):
                    with open(ignore, "w") as f:
                        f.write("# created by shardcheck\n*\n")
            os.makedirs(os.path.dirname(target), exist_ok=True)
            import tempfile
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(target), suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(entry, f)
            os.replace(tmp, target)
        except OSError:
            pass  # a cache that cannot be written is only slower
