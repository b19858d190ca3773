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
import tempfile
from typing import Dict, List, Optional

from sharding_types import __version__

from .ftypes import Finding


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


class Cache:
    def __init__(self, directory: str, fingerprint: str):
        self.dir = os.path.join(directory, "v1")
        self.fingerprint = fingerprint
        self._hashes: Dict[str, Optional[str]] = {}

    def file_hash(self, path: str) -> Optional[str]:
        path = os.path.abspath(path)
        if path not in self._hashes:
            try:
                with open(path, "rb") as f:
                    self._hashes[path] = content_hash(f.read())
            except OSError:
                self._hashes[path] = None
        return self._hashes[path]

    def _key(self, path: str, digest: str) -> str:
        raw = f"{code_version()}\0{self.fingerprint}\0{os.path.abspath(path)}\0{digest}"
        return hashlib.sha256(raw.encode()).hexdigest()

    def _entry_path(self, key: str) -> str:
        return os.path.join(self.dir, key[:2], key[2:] + ".json")

    def get(self, path: str, digest: str) -> Optional[List[Finding]]:
        try:
            with open(self._entry_path(self._key(path, digest)), encoding="utf-8") as f:
                entry = json.load(f)
        except (OSError, ValueError):
            return None
        for dep, h in entry.get("deps", {}).items():
            if self.file_hash(dep) != h:
                return None
        try:
            return [Finding.from_json(d) for d in entry["findings"]]
        except (KeyError, TypeError, ValueError):
            return None

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
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(target), suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(entry, f)
            os.replace(tmp, target)
        except OSError:
            pass  # a cache that cannot be written is only slower
