"""Writing a checked file back (``check --fix``, ``--add-noqa``) without damaging it.

Both commands write through ``write_back``, so every write keeps what the user had:

- the encoding Python reads the file in (its coding cookie, or its UTF-8 BOM): the new
  text is encoded in it and must read back as exactly that text, else nothing is written;
- a symlink: the file it points to is written and the link stays a link;
- the file itself: a file of one link is replaced atomically (a temporary file beside
  it, given the old one's owner, group, extended attributes and mode, then renamed over
  it); a file of several hard links cannot be renamed over without splitting its links,
  nor can a new file always get those (not as root), so then the file is written in
  place once the new bytes are ready, and its old bytes are written back if that write
  fails;
- the user's refusals: a file without its owner's write bit is left alone even for root,
  and so is a file that changed since it was read.

The temporary files (``.shardcheck-fix-<pid>-<random>.tmp``) are never checked (they
do not end in ``.py``), are removed on every error, and never see SIGINT or SIGTERM
mid-write (``WritePhase`` holds both until the file being written is whole). Only
SIGKILL can leave one; the next writing run removes those whose process is gone (and
the ``*.py`` ones earlier versions named, once an hour old).
"""

from __future__ import annotations

import os
import re
import signal
import stat
import threading
import time
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Optional, Set

from .discovery import OLD_FIX_TEMPORARY
from shardcheck.analyzer.sources import Unreadable, decode_source, read_source, source_encoding

TEMP_PREFIX = ".shardcheck-fix-"
_TEMP = re.compile(r"\.shardcheck-fix-(?P<pid>\d+)-[0-9a-f]+\.tmp\Z")
# a temporary file lives for one file's write (milliseconds): one this old is a dead
# run's, even when its pid has been reused by a live process
STALE_AFTER_S = 3600.0


class WriteRefused(Exception):
    """The file was not written; the message says why, in one line."""


@dataclass(frozen=True)
class Original:
    """A source file as read before rewriting it: its bytes, its text and its encoding."""

    path: str
    data: bytes
    text: str
    encoding: str  # as ``sources.source_encoding`` names it


def read_original(path: str) -> Original:
    """``path`` read for rewriting (``Unreadable`` or ``SourceError`` as a check reads it)."""
    data = read_source(path)
    return Original(path, data, decode_source(data), source_encoding(data))


def encoded(original: Original, text: str) -> bytes:
    """``text`` as bytes in ``original``'s encoding, checked to read back as exactly
    ``text`` (a fix could move the coding cookie out of the first two lines)."""
    try:
        data = text.encode(original.encoding)
    except UnicodeEncodeError as e:
        row = text.count("\n", 0, e.start) + 1
        raise WriteRefused(f"the new text has {text[e.start]!r} on line {row}, which its encoding "
                           f"({original.encoding}) cannot hold; left unchanged") from None
    try:
        same = decode_source(data) == text
    except SyntaxError:
        same = False
    if not same:
        raise WriteRefused(f"the new text would not read back as written in its encoding "
                           f"({original.encoding}: a fix moved its coding cookie?); left unchanged")
    return data


def write_back(original: Original, text: str) -> None:
    """Replace the content of ``original``'s file with ``text``, keeping everything
    else the module docstring lists; ``WriteRefused`` (the file left unchanged, unless
    the message says otherwise) for anything that stops it."""
    data = encoded(original, text)
    target = os.path.realpath(original.path)  # through symlinks: the link stays a link
    try:
        st = os.stat(target)
        if not st.st_mode & stat.S_IWUSR:  # root may write anyway: the mode says not to
            raise WriteRefused(f"it is read-only (mode {stat.S_IMODE(st.st_mode):04o}); "
                               "left unchanged")
        if read_source(target) != original.data:
            raise WriteRefused("it changed since it was read; left unchanged")
        if st.st_nlink > 1 or not _replace(target, data, st):
            _write_in_place(target, data, original.data)
    except OSError as e:
        raise WriteRefused(f"cannot write it ({e.strerror or e}); left unchanged") from None
    except Unreadable as e:
        raise WriteRefused(f"cannot read it again ({e}); left unchanged") from None


def _replace(target: str, data: bytes, st: os.stat_result) -> bool:
    """Write ``data`` to a temporary file beside ``target`` and rename it over
    ``target``; False (nothing changed) when the new file cannot have ``target``'s owner,
    group and attributes, or the directory takes no new file: then only writing in place
    keeps them."""
    tmp = os.path.join(os.path.dirname(target),
                       f"{TEMP_PREFIX}{os.getpid()}-{os.urandom(4).hex()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
                     | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except PermissionError:  # not as root: a directory it cannot write, a file it can
        return False
    try:
        try:
            _write_all(fd, data)
            if not _same_owner(fd, st) or not _same_attributes(fd, target):
                _remove(tmp)
                return False
            _set_mode(fd, tmp, stat.S_IMODE(st.st_mode))  # after chown, which drops set-id bits
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except BaseException:
        _remove(tmp)
        raise
    return True


def _set_mode(fd: int, path: str, mode: int) -> None:
    if hasattr(os, "fchmod"):  # the open file: a name in a shared directory can be swapped
        os.fchmod(fd, mode)
    else:  # Windows before Python 3.13
        os.chmod(path, mode)


def _same_owner(fd: int, st: os.stat_result) -> bool:
    if not hasattr(os, "fchown"):  # Windows: no owners to keep
        return True
    have = os.fstat(fd)
    if (have.st_uid, have.st_gid) == (st.st_uid, st.st_gid):
        return True
    try:
        os.fchown(fd, st.st_uid, st.st_gid)
    except PermissionError:  # not root, and not its owner (or not in its group)
        return False
    return True


def _same_attributes(fd: int, target: str) -> bool:
    """The new file given ``target``'s extended attributes (a POSIX ACL, an SELinux
    label, ``user.*``); after chown, which drops ``security.capability``."""
    if not hasattr(os, "listxattr"):  # not Linux
        return True
    try:
        names = os.listxattr(target)
    except OSError:  # a filesystem that keeps none
        return True
    try:
        for name in names:
            os.setxattr(fd, name, os.getxattr(target, name))
    except OSError:  # not root: a label or a trusted.* it may not set
        return False
    return True


def _write_in_place(target: str, data: bytes, old: bytes) -> None:
    """Overwrite ``target``'s bytes (every hard link sees them), putting ``old`` back if
    that fails. The bytes are written over the old ones before the file is cut to size,
    so the old bytes' blocks stay allocated for a restore that needs no new space."""
    fd = os.open(target, os.O_WRONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        try:
            _write_all(fd, data)
            os.ftruncate(fd, len(data))
            os.fsync(fd)
        except BaseException as e:
            try:
                _write_all(fd, old)
                os.ftruncate(fd, len(old))
                os.fsync(fd)
            except OSError as again:
                why = e.strerror if isinstance(e, OSError) else type(e).__name__
                raise WriteRefused(f"cannot write it ({why}), and putting its old content "
                                   f"back failed too ({again.strerror or again}): check it") from None
            raise
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    """``data`` written from the file's start (``os.write`` may write less than asked)."""
    os.lseek(fd, 0, os.SEEK_SET)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def directories_of(paths: Iterable[str]) -> Set[str]:
    """Where writing ``paths`` puts temporary files: their directories, and those of
    the files their symlinks point to."""
    out: Set[str] = set()
    for p in paths:
        out.add(os.path.dirname(os.path.abspath(p)))
        if os.path.islink(p):
            out.add(os.path.dirname(os.path.realpath(p)))
    return out


def sweep_stale(directories: Iterable[str]) -> List[str]:
    """Remove from ``directories`` the temporary files runs killed mid-write left (ours
    only: our name, and a process that is gone or an age no write takes); the removed."""
    removed: List[str] = []
    now = time.time()
    for directory in sorted(set(directories)):
        try:
            names = [n for n in os.listdir(directory) if n.startswith(TEMP_PREFIX)]
        except OSError:
            continue
        for name in names:
            path = os.path.join(directory, name)
            if _stale(name, path, now):
                try:
                    os.unlink(path)
                except OSError:
                    continue
                removed.append(path)
    return removed


def _stale(name: str, path: str, now: float) -> bool:
    ours = _TEMP.match(name)
    if ours is None and OLD_FIX_TEMPORARY.match(name) is None:  # an earlier version's: by age
        return False
    try:
        st = os.lstat(path)
    except OSError:
        return False
    if not stat.S_ISREG(st.st_mode):
        return False
    if now - st.st_mtime > STALE_AFTER_S:
        return True
    return ours is not None and not _alive(int(ours["pid"]))


def _alive(pid: int) -> bool:
    if pid <= 0:
        return True  # no process of ours has it: not ours to judge
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OSError, OverflowError):  # another user's process (EPERM), or no such pid
        return True
    return True


class WritePhase:
    """The files of one run being written. Entering removes the temporary files that
    killed runs left in ``directories``; inside, SIGINT and SIGTERM (in the main thread,
    where Python handles signals) are held: ``stopped`` tells the writer to write no
    further file, and on leaving, the signal takes effect as it would have."""

    def __init__(self, directories: Iterable[str] = ()) -> None:
        self.directories = list(directories)
        self.pending: Optional[int] = None
        self._saved: Dict[int, Any] = {}

    def __enter__(self) -> "WritePhase":
        sweep_stale(self.directories)
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                if signal.getsignal(sig) is not signal.SIG_IGN:  # `nohup`, a background job
                    self._saved[sig] = signal.signal(sig, self._hold)
        return self

    def _hold(self, signum: int, frame: Any) -> None:
        if self.pending is None:
            self.pending = signum

    @property
    def stopped(self) -> bool:
        return self.pending is not None

    def __exit__(self, kind: Any, value: Any, traceback: Any) -> None:
        for sig, handler in self._saved.items():
            signal.signal(sig, signal.SIG_DFL if handler is None else handler)
        self._saved.clear()
        if self.pending is not None:  # as it would have, had it not been held
            signal.raise_signal(self.pending)
