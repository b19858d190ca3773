"""Results cached by file content, so a re-run on an unchanged tree is near-instant.

An entry is keyed by shardcheck's version (and the analyzer's own source files, so an
edited or upgraded checkout never reads stale results), the config's fingerprint, the
path and the file's content hash. It also stores what the result depends on besides
(``Dependencies``): the project files the check read, each with the hash of the content
it read; the modules it only looked names up in, each with the digest of those names'
slice of it (``analyzer.slices``: the statements their values are made by); and the
places the import system looked for a module and found none. An entry answers only
while each of those files hashes the same, each of those modules hashes the same or
gives the names the same slice, and each of those places is still empty: a module that
appears (a ``git checkout`` that adds one) re-checks its importers, as mypy's cache
does, and an edit of a module that leaves what an importer read alone (a new function,
a comment) re-checks none of them. Nothing is stored when a file the check read changed
during the check: its findings may be of neither version.

Writes are atomic, and a write that fails removes its temporary file. At most once a day
a run removes the entries no run has read for 30 days (each hit marks its entry used, at
most once a day) and temporary files an interrupted process left behind.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import time
from typing import Any, Callable, Dict, FrozenSet, List, Optional, Tuple

from shardcheck.analyzer.dependencies import UNLISTED, Dependencies, content_hash, hash_file
from shardcheck.analyzer.ftypes import Finding
from shardcheck.analyzer.notebooks import is_notebook
from shardcheck.analyzer.sources import Unreadable, read_source

UNUSED_FOR = 30 * 86400  # seconds: an entry no run read for this long is removed
_PRUNE_EVERY = 86400  # seconds between two prunings (a stamp file's mtime says when)
_MARK_USED_AFTER = 86400  # a hit marks its entry used when the mark is older than this
_STALE_TEMPORARY = 600  # a temporary file this old is no write in progress

def code_version() -> str:
    """shardcheck's version and the size and mtime of each of its source files: an
    edited or upgraded installation never reads another's entries."""
    from shardcheck.installed_code import stamp
    return stamp()[:16]


def _well_formed(f: Finding, lines: Callable[[str], Optional[int]]) -> bool:
    """A finding read back from JSON has the types ``Finding`` declares, and each of its
    ranges is one a file can hold (``_placed``)."""
    strs = (f.code, f.name, f.message, f.severity, f.filename)
    if not all(isinstance(s, str) for s in strs) or not isinstance(f.in_expected_failure, bool) \
            or not (f.cell is None or _ints(f.cell) and f.cell >= 1):
        return False
    # a notebook's rows count within a cell: only the rows of other files are bounded
    limit = None if is_notebook(f.filename) else lines(f.filename)
    if not _placed(limit, f.row, f.column, f.end_row, f.end_column):
        return False
    x = f.fix
    if x is not None and not (_placed(limit, x.row, x.column, x.end_row, x.end_column)
                              and isinstance(x.message, str) and isinstance(x.content, str)
                              and x.applicability in ("safe", "unsafe")
                              and all(_placed(limit, *m[:4]) and isinstance(m[4], str)
                                      for m in x.more)):
        return False
    return all(isinstance(r.message, str) and isinstance(r.filename, str)
               and _placed(None if is_notebook(r.filename) else lines(r.filename),
                           r.row, r.column, r.end_row, r.end_column)
               for r in f.related)


def _placed(lines: Optional[int], row: Any, column: Any, end_row: Any, end_column: Any) -> bool:
    """Integers at 1 or more, the end not before the start, and the rows within the
    file's ``lines`` where they are known (values read back from JSON: any type)."""
    if not _ints(row, column, end_row, end_column):
        return False
    return min(row, column, end_row, end_column) >= 1 and \
        (end_row, end_column) >= (row, column) and (lines is None or end_row <= lines)


def _ints(*values: object) -> bool:
    return all(isinstance(i, int) and not isinstance(i, bool) for i in values)


def _line_count(data: bytes) -> int:
    """The rows a position in ``data`` can name: its lines, the one after a final line
    break included (Python ends a line at \\n, \\r\\n or \\r)."""
    return max(data.count(b"\n"), data.count(b"\r")) + 1


class CacheError(Exception):
    """A cache directory ``shardcheck clean`` will not remove, and why."""


# what a cache directory holds (``Cache``): nothing else is removed with it
_CACHE_ENTRIES = {"v1", ".gitignore", "CACHEDIR.TAG"}


def remove_cache(config: Any, start: str) -> Optional[str]:
    """Remove the cache directory of the project at ``start`` (the config's
    ``cache-dir``, else ``default_dir``); the directory removed, or None when there was
    none. A directory holding anything but a cache's entries is left alone
    (``CacheError``): a ``cache-dir`` set to a directory of the project's own files is
    never emptied."""
    import shutil
    directory = config.cache_dir or default_dir(config.root if config.source else None, start)
    if not os.path.isdir(directory):
        return None
    if os.path.islink(directory):
        raise CacheError(f"{directory} is a symbolic link; remove it yourself")
    other = sorted(set(os.listdir(directory)) - _CACHE_ENTRIES)
    if other:
        raise CacheError(f"{directory} holds files that are not shardcheck's cache "
                         f"({', '.join(other[:3])}); nothing was removed")
    shutil.rmtree(directory)
    return directory


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


class _Existence(Dict[str, bool]):
    """Whether each path exists, as a run finds it once. A cached result records where
    the import system looked for a module and found none (tens of thousands of paths in
    a large project, most in a few dozen directories): a path whose name its directory's
    listing lacks is absent, as importlib's own finders decide from their listings, so
    each directory is listed once, and a name a listing holds is confirmed by a stat."""

    def __init__(self) -> None:
        super().__init__()
        self._listings: Dict[str, Optional[FrozenSet[str]]] = {}

    def __missing__(self, path: str) -> bool:
        path = os.path.abspath(path)
        names = self.listing(os.path.dirname(path))
        if names is UNLISTED:
            got = os.path.exists(path)
        else:
            got = names is not None and os.path.basename(path) in names and os.path.exists(path)
        self[path] = got
        return got

    def listing(self, d: str) -> Optional[FrozenSet[str]]:
        """The names in directory ``d``, read once: None where there is no directory (a
        directory whose parent's listing lacks it is not looked at), ``UNLISTED`` where
        one cannot be listed (its paths are looked at one by one)."""
        if d in self._listings:
            return self._listings[d]
        parent = os.path.dirname(d)
        above = self.listing(parent) if parent != d else UNLISTED
        names: Optional[FrozenSet[str]] = None
        if above is UNLISTED or (above is not None and os.path.basename(d) in above):
            try:
                names = frozenset(os.listdir(d))
            except (FileNotFoundError, NotADirectoryError):
                names = None
            except OSError:  # no permission to list: each path is looked at
                names = UNLISTED
        self._listings[d] = names
        return names


_IMPORTS = "imports.json"  # the imports memo, beside the entries
_SLICES = "slices.json"  # the slice memo, beside the entries


class _ImportsMemo(Dict[str, Tuple[int, int, str, Tuple[str, ...]]]):
    """The imports memo: a dict that knows whether a run added to it."""

    changed = False

    def __setitem__(self, key: str, value: Tuple[int, int, str, Tuple[str, ...]]) -> None:
        self.changed = True
        super().__setitem__(key, value)


class _SliceMemo(Dict[str, Tuple[str, Dict[str, str]]]):
    """The slice memo: per project file, the content hash the digests below were taken
    of, and the digest of each slice of it a run asked for (keyed by its names, joined by
    NUL). A file's entry is replaced when its content changes."""

    changed = False

    def digest(self, path: str, content: str, names: Tuple[str, ...]) -> Optional[str]:
        entry = self.get(path)
        if entry is None or entry[0] != content:
            return None
        return entry[1].get("\0".join(names))

    def add(self, path: str, content: str, names: Tuple[str, ...], digest: str) -> None:
        entry = self.get(path)
        if entry is None or entry[0] != content:
            entry = self[path] = (content, {})
        entry[1]["\0".join(names)] = digest
        self.changed = True


class Cache:
    def __init__(self, directory: str, fingerprint: str):
        self.dir = os.path.join(directory, "v1")
        self.fingerprint = fingerprint
        # what this run's look-ups read, by absolute path: one read, hash and stat each
        self._hashes: Dict[str, Optional[str]] = {}
        self._exists = _Existence()
        self._lines: Dict[str, Optional[int]] = {}  # of the files cached findings are in
        self._imports: Optional[_ImportsMemo] = None
        self._slices: Optional[Any] = None  # slices.SliceDigests, made at first use
        self._slice_memo: Optional[_SliceMemo] = None  # read at the first slice asked for

    @property
    def project_axes_file(self) -> str:
        """Where the project's mesh index (``analyzer.project_axes``) is kept between runs."""
        return os.path.join(self.dir, "project_axes.index")  # JSON, not a findings entry

    def imports_memo(self) -> "_ImportsMemo":
        """What each project file's imports name, as the last run read it
        (``workspace.ImportsMemo``): finding a checked file's importers reads no file
        that is unchanged since. A missing or corrupt memo is an empty one."""
        if self._imports is None:
            self._imports = _ImportsMemo()
            try:
                data = json.loads(read_source(os.path.join(self.dir, _IMPORTS)))
            except (Unreadable, ValueError, RecursionError):
                data = None
            if isinstance(data, dict):
                for path, entry in data.items():
                    if isinstance(entry, list) and len(entry) == 4 and _ints(entry[0], entry[1]) \
                            and isinstance(entry[2], str) and isinstance(entry[3], list) \
                            and all(isinstance(n, str) for n in entry[3]):
                        dict.__setitem__(self._imports, path, (entry[0], entry[1], entry[2],
                                                               tuple(entry[3])))
        return self._imports

    def save_memos(self) -> None:
        """Write the imports and slice memos back where this run added to them
        (atomically; a cache that cannot be written is only slower)."""
        for name, memo in ((_IMPORTS, self._imports), (_SLICES, self._slice_memo)):
            if memo is None or not memo.changed:
                continue
            try:
                os.makedirs(self.dir, exist_ok=True)
                _write_atomically(os.path.join(self.dir, name),
                                  json.dumps({p: list(e) for p, e in memo.items()
                                              if os.path.exists(p)}))  # not deleted files
            except OSError:
                pass

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
        key = os.path.abspath(path)
        try:
            data = read_source(path)
        except Unreadable:
            self._hashes[key] = None
            return None, None
        digest = self._hashes[key] = content_hash(data)
        return data, digest

    def slice_digest(self, path: str, names: Tuple[str, ...]) -> Optional[str]:
        """The digest of the slice of ``names`` in the file ``path`` as it is now
        (``slices``); None where it cannot be read or parsed. A digest an earlier run took
        of the same content and names is read from the slice memo, not computed again
        (computing one parses the module)."""
        from shardcheck.analyzer.slices import SliceDigests
        try:
            data = read_source(path)
        except Unreadable:
            return None
        memo = self._read_slice_memo()
        key, content = os.path.abspath(path), content_hash(data)
        known = memo.digest(key, content, names)
        if known is not None:
            return known
        if self._slices is None:
            self._slices = SliceDigests()
        digest = self._slices.digest_of(data, names)
        if digest is not None:
            memo.add(key, content, names, digest)
        return digest

    def _read_slice_memo(self) -> _SliceMemo:
        """The slice memo the last runs left (a missing or corrupt one is empty)."""
        if self._slice_memo is None:
            self._slice_memo = _SliceMemo()
            try:
                data = json.loads(read_source(os.path.join(self.dir, _SLICES)))
            except (Unreadable, ValueError, RecursionError):
                data = None
            if isinstance(data, dict):
                for path, entry in data.items():
                    if isinstance(entry, list) and len(entry) == 2 and \
                            isinstance(entry[0], str) and isinstance(entry[1], dict) and \
                            all(isinstance(v, str) for v in entry[1].values()):
                        dict.__setitem__(self._slice_memo, path, (entry[0], dict(entry[1])))
        return self._slice_memo

    def _lines_of(self, path: str) -> Optional[int]:
        """The line count of a file a cached finding is in (None if it cannot be read),
        counted when first asked: most files have no finding to place."""
        key = os.path.abspath(path)
        if key not in self._lines:
            try:
                self._lines[key] = _line_count(read_source(key))
            except Unreadable:
                self._lines[key] = None
        return self._lines[key]

    def _key(self, path: str, digest: str) -> str:
        raw = f"{code_version()}\0{self.fingerprint}\0{os.path.abspath(path)}\0{digest}"
        return hashlib.sha256(raw.encode()).hexdigest()

    def _entry_path(self, key: str) -> str:
        return os.path.join(self.dir, key[:2], key[2:] + ".json")

    def get(self, path: str, digest: str) -> Optional[List[Finding]]:
        """The cached findings, or None: a missing, unreadable, corrupt or wrong-shaped
        entry (valid JSON that is not what ``put`` writes, a position no file holds) is a
        miss, never an error; so is one whose dependencies changed."""
        entry_path = self._entry_path(self._key(path, digest))
        try:
            entry = json.loads(read_source(entry_path))
        except (Unreadable, ValueError, RecursionError):
            return None
        if not isinstance(entry, dict) or not isinstance(entry.get("findings"), list):
            return None
        deps = Dependencies.from_json(entry)
        if deps is None or not deps.hold(self.file_hash, self._exists.__getitem__,
                                         self.slice_digest, self._exists.listing):
            return None
        try:
            findings = [Finding.from_json(d) for d in entry["findings"]]
        except (KeyError, TypeError, ValueError, AttributeError, IndexError):
            return None
        if not all(_well_formed(f, self._lines_of) for f in findings):
            return None
        _mark_used(entry_path)
        return findings

    def put(self, path: str, digest: str, findings: List[Finding], deps: Dependencies) -> None:
        """Store ``findings`` for the content ``digest`` of ``path``, unless that file or
        one it depends on changed since the check read it (compared afresh, not with the
        hashes this run's look-ups remembered)."""
        if hash_file(path) != digest or not deps.hold(hash_file, os.path.exists):
            return
        # each module the result looked names up in read as the check read it (it hashes
        # the same): the digest of their slice is taken from it now
        deps = deps.with_digests(self.slice_digest)
        # thousands of absent paths, most under a few missing directories: those are kept
        deps = deps.collapsed(self._exists.listing)
        key = self._key(path, digest)
        target = self._entry_path(key)
        entry = {"findings": [dict(f.as_json(), in_expected_failure=f.in_expected_failure)
                              for f in findings], **deps.as_json()}
        try:
            if not os.path.isdir(self.dir):
                os.makedirs(self.dir, exist_ok=True)
                ignore = os.path.join(os.path.dirname(self.dir), ".gitignore")
                if not os.path.exists(ignore):
                    with open(ignore, "w") as f:
                        f.write("# created by shardcheck\n*\n")
            os.makedirs(os.path.dirname(target), exist_ok=True)
            _write_atomically(target, json.dumps(entry))
        except OSError:
            pass  # a cache that cannot be written is only slower

    def prune(self) -> None:
        """Remove the entries no run has read for ``UNUSED_FOR`` seconds and the temporary
        files of writes a killed process left, at most once a day: a run pays one stat of
        the stamp file that says when the last pruning began."""
        now = time.time()
        stamp = os.path.join(self.dir, "pruned")
        try:
            if now - os.stat(stamp).st_mtime < _PRUNE_EVERY:
                return
        except FileNotFoundError:
            pass  # never pruned (a new cache, or one an older shardcheck wrote)
        except OSError:
            return
        try:
            with open(stamp, "a"):  # claimed before the walk: a concurrent run skips it
                pass
            os.utime(stamp, (now, now))
        except OSError:
            return  # no cache here yet, or none that can be written
        for sub in _entries(self.dir):
            if sub.is_dir(follow_symlinks=False):
                for e in _entries(sub.path):
                    _remove_if_old(e, now)
            elif sub.name.endswith(".tmp"):  # an imports memo's interrupted write
                _remove_if_old(sub, now)


def _write_atomically(target: str, text: str) -> None:
    """``text`` into ``target`` through a temporary file renamed over it: a reader sees
    the old entry or the new one, never part of one. A failed write (a full disk) removes
    its temporary file and raises."""
    import tempfile
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(target), suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _mark_used(entry_path: str) -> None:
    """Set an entry's mtime to now when it is older than a day: pruning reads the mtime
    as the entry's last use, and a hit writes to the disk at most once a day."""
    try:
        if time.time() - os.stat(entry_path).st_mtime > _MARK_USED_AFTER:
            os.utime(entry_path)
    except OSError:
        pass  # a read-only cache answers all the same


def _entries(directory: str) -> List[os.DirEntry]:
    try:
        with os.scandir(directory) as it:
            return list(it)
    except OSError:
        return []


def _remove_if_old(e: os.DirEntry, now: float) -> None:
    """Remove an entry unused for ``UNUSED_FOR``, or a stale temporary file."""
    if e.name.endswith(".json"):
        age = UNUSED_FOR
    elif e.name.endswith(".tmp"):
        age = _STALE_TEMPORARY
    else:
        return
    try:
        if now - e.stat(follow_symlinks=False).st_mtime > age:
            os.unlink(e.path)
    except OSError:
        pass  # removed by a concurrent run, or not ours to remove
