"""``shardcheck check --daemon``: one warm process serves every run, as ``dmypy`` does for mypy.

A fresh ``shardcheck check`` pays Python's start-up, libcst's import (about 0.35 s here:
its node classes are built at import) and the analysis modules' imports before it reads
the first file. With ``--daemon`` (or ``SHARDCHECK_DAEMON=1``), the command hands its
arguments, working directory, environment and standard input to a background process
that has imported all of that once, and prints what it answers. The answer is the one
``shardcheck check`` gives in-process: the daemon runs the same command, in the
client's directory and environment, with the same cache.

- The first ``--daemon`` run finds no daemon: it checks in-process as usual and starts
  one in the background for the next run. ``shardcheck daemon start|stop|status`` manage
  it by hand.
- The daemon serves one run at a time (others wait) and exits after ``--idle-timeout``
  seconds with no request (default 30 minutes), on ``shardcheck daemon stop``, or when
  shardcheck's own files change under it (an upgrade, an edit of a checkout, pre-commit
  deleting a hook's environment): a request then gets no answer from it and runs
  in-process, and an idle daemon looks at its files every minute.
- Anything that goes wrong on the way (no Unix sockets on this platform, a socket
  directory another user could write, a daemon that died) falls back to the in-process
  run; ``--daemon`` never changes what is reported.

The socket lives in ``$SHARDCHECK_DAEMON_DIR``, else ``$XDG_RUNTIME_DIR/shardcheck``,
else ``$TMPDIR/shardcheck-UID``: a directory only this user may enter. One daemon
serves each Python executable and shardcheck installation.

The client side (``forward``) imports only modules built into the interpreter
(``_socket``, ``marshal``, ``_sha1``): ``json``, ``socket`` and ``hashlib`` cost a
served run about 20 ms of imports (``re`` and ``enum`` under them) on top of Python's
own start-up of 15 ms. Requests and answers travel as ``marshal`` data (``encode`` and
``decode``): both ends are the same interpreter, and only this user can reach the
socket.
"""

from __future__ import annotations

import marshal
import os
import sys
from stat import S_ISDIR, S_ISSOCK, S_ISVTX

from shardcheck._version import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Sequence

IDLE_TIMEOUT = 1800.0  # seconds without a request before the daemon exits
_CONNECT_TIMEOUT = 2.0  # seconds to connect, and to hand over a request
_SEND_TIMEOUT = 10.0  # seconds to hand over a request (standard input can be large)
# seconds the daemon may take to accept a request (ACK): it serves one run at a time, so a
# busy daemon, or one that stopped answering, sends this client back to an in-process run
ACK_WAIT = 10.0
_POLL = 1.0  # seconds between looks, while a run is served, at whether the daemon lives
ACK = b"\x06"  # the daemon's first byte: it took the request and will answer it
_MAX_SOCKET_PATH = 100  # AF_UNIX paths are limited to 104-108 bytes
_ENV_ON = "SHARDCHECK_DAEMON"
# how requests travel (``encode``, then ACK); part of the socket's name, so a daemon that
# speaks another protocol is never asked
_WIRE = "marshal+ack"


def wanted(argv: List[str], commands: Sequence[str]) -> bool:
    """Whether this command line asks for the daemon: ``check`` with ``--daemon``, or
    ``SHARDCHECK_DAEMON`` set to 1/true/yes (``--no-daemon`` wins over both); ``commands``
    are the CLI's command names (any other first word is a path to check)."""
    if "--no-daemon" in argv:
        return False
    env = os.environ.get(_ENV_ON, "").strip().lower() in ("1", "true", "yes", "on")
    if not ("--daemon" in argv or env):
        return False
    first = next((a for a in argv if not a.startswith("-")), None)
    if first is not None and first in commands and first != "check":
        return False
    return not any(a in ("-h", "--help", "--version") for a in argv)


def socket_dir() -> Optional[str]:
    """The directory of this user's daemon sockets (made, mode 0700), or None when
    there is none safe to use (see ``private_dir``)."""
    if not hasattr(os, "getuid"):
        return None
    base = os.environ.get("SHARDCHECK_DAEMON_DIR")
    if not base:
        runtime = os.environ.get("XDG_RUNTIME_DIR")
        base = (os.path.join(runtime, "shardcheck") if runtime else
                os.path.join(os.environ.get("TMPDIR") or "/tmp", f"shardcheck-{os.getuid()}"))
    return private_dir(base)


def private_dir(path: str) -> Optional[str]:
    """``path`` made if missing and returned when only this user can change what it
    holds, for as long as this process uses it; else None.

    Checked without following links and on the opened directory, not on a name looked
    up twice: the directory itself is no symlink (``O_NOFOLLOW``), is owned by this user
    and closed to everyone else (``fstat`` of that descriptor); and every directory above
    it is owned by root or this user, and writable by others only if sticky (as ``/tmp``
    is), so no other user can rename it away and put one of theirs in its place later.
    That is OpenSSH's test of a key file's path."""
    uid = os.getuid()
    parent = os.path.realpath(os.path.dirname(os.path.abspath(path)))  # /tmp -> /private/tmp
    path = os.path.join(parent, os.path.basename(os.path.abspath(path)))
    if not _ancestors_safe(parent, uid):
        return None
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return None
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) \
        | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)  # a symlink in its place: ELOOP (or ENOTDIR)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
    finally:
        os.close(fd)
    if not S_ISDIR(st.st_mode) or st.st_uid != uid or st.st_mode & 0o077:
        return None  # another user could plant a socket there, or read the log
    return path


def _ancestors_safe(directory: str, uid: int) -> bool:
    """Every directory from ``directory`` up to ``/`` is owned by root or ``uid``, and
    writable by group or others only with the sticky bit (where only an entry's owner
    may rename or remove it)."""
    while True:
        try:
            st = os.lstat(directory)
        except OSError:
            return False
        if not S_ISDIR(st.st_mode) or st.st_uid not in (0, uid):
            return False
        if st.st_mode & 0o022 and not st.st_mode & S_ISVTX:
            return False
        up = os.path.dirname(directory)
        if up == directory:
            return True
        directory = up


def socket_path() -> Optional[str]:
    """This installation's daemon socket: one per Python executable, shardcheck
    directory and version."""
    import _socket
    if not hasattr(_socket, "AF_UNIX") or not hasattr(_socket, "SO_PEERCRED"):
        return None  # no way to tell who listens on a socket: no daemon
    base = socket_dir()
    if base is None:
        return None
    try:
        from _sha1 import sha1  # type: ignore[import-not-found]  # built in; hashlib loads OpenSSL (4 ms)
    except ImportError:  # an interpreter built without it
        from hashlib import sha1
    here = os.path.dirname(os.path.realpath(__file__))  # an editable install links its files
    # _WIRE: a daemon that reads requests another way never hears from this client (it
    # could not decode the request, nor tell that its code changed), so its socket differs
    key = "\0".join((sys.executable, here, __version__, _WIRE))
    path = os.path.join(base, sha1(key.encode()).hexdigest()[:16] + ".sock")
    return path if len(path.encode()) <= _MAX_SOCKET_PATH else None


def sibling(path: str, suffix: str) -> str:
    """The daemon's file beside its socket ``path``: its ``.log``, its ``.lock``."""
    return path[:-len(".sock")] + suffix


_PLAIN = (str, int, float, bool, bytes, type(None))


def encode(message: Dict[str, Any]) -> bytes:
    """A request or an answer as it travels: ``marshal`` data of plain values."""
    return marshal.dumps(message)


def decode(data: bytes) -> Optional[Dict[str, Any]]:
    """What ``encode`` made of a dict, or None for anything else: data that does not
    load, or that holds more than dicts, lists and plain values (a code object)."""
    try:
        value = marshal.loads(data)
    except (ValueError, EOFError, TypeError):
        return None
    todo = [value]
    while todo:
        v = todo.pop()
        if isinstance(v, dict):
            if not all(isinstance(k, str) for k in v):
                return None
            todo.extend(v.values())
        elif isinstance(v, (list, tuple)):
            todo.extend(v)
        elif not isinstance(v, _PLAIN):
            return None
    return value if isinstance(value, dict) else None


def _request(path: str, message: Dict[str, Any], ack_wait: Optional[float] = None,
             answer_wait: Optional[float] = None) -> Optional[dict]:
    """Send ``message`` to the daemon at ``path``; its answer, or None when no daemon
    of this user's answers there in time.

    Nothing is sent unless the socket and the process listening on it belong to this
    user (``SO_PEERCRED``). The daemon must take the request within ``ack_wait``
    seconds; after that the answer may take as long as the run does (or at most
    ``answer_wait`` seconds), but the client looks every second whether the daemon is
    still alive and running, and gives up when it is not (killed, stopped, a zombie)."""
    import _socket
    import time
    if not _owned_socket(path):
        return None
    s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        s.settimeout(_CONNECT_TIMEOUT)
        s.connect(path)
        pid = peer_pid(s)
        if pid is None:
            return None
        s.settimeout(_SEND_TIMEOUT)
        s.sendall(encode(message))
        s.shutdown(_socket.SHUT_WR)
        return _answer(s, pid, time.monotonic(), ACK_WAIT if ack_wait is None else ack_wait,
                       answer_wait)
    except OSError:
        return None
    finally:
        s.close()


def _answer(s, pid: int, since: float, ack_wait: float,
            answer_wait: Optional[float]) -> Optional[dict]:
    import time
    s.settimeout(_POLL)
    chunks: List[bytes] = []
    acked = False
    while True:
        try:
            chunk = s.recv(1 << 16)
        except TimeoutError:
            waited = time.monotonic() - since
            if (not acked and waited > ack_wait) or (answer_wait is not None and
                                                     waited > answer_wait):
                return None
            if not running(pid):
                return None
            continue
        if not chunk:
            break
        if not acked:
            if chunk[:1] != ACK:
                return None
            acked, chunk = True, chunk[1:]
        chunks.append(chunk)
    return decode(b"".join(chunks)) if acked else None


def _owned_socket(path: str) -> bool:
    """``path`` is a Unix socket of this user's (not a file or link put there)."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return S_ISSOCK(st.st_mode) and st.st_uid == os.getuid()


def peer_pid(s) -> Optional[int]:
    """The pid of the process at the other end of the Unix socket ``s``, when it runs
    as this user; None for another user's, or where the kernel does not say."""
    import _socket
    try:
        cred = s.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)
    except (AttributeError, OSError):
        return None
    pid, uid = (int.from_bytes(cred[i:i + 4], sys.byteorder) for i in (0, 4))
    return pid if uid == os.getuid() else None


def running(pid: int) -> bool:
    """Process ``pid`` exists and can run: not gone, not a zombie, not stopped."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process took the pid: not ours
        return False
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True  # no /proc to ask: it exists
    return state not in (b"Z", b"X", b"T", b"t")


def forward(argv: List[str]) -> Optional[int]:
    """Run ``shardcheck`` with ``argv`` in the daemon and print its output; its exit
    status, or None when the daemon cannot serve it (the caller runs it in-process; a
    daemon is started in the background for the next run, unless one is busy)."""
    path = socket_path()
    if path is None:
        return None
    message: Dict[str, Any] = {"kind": "check", "argv": argv, "cwd": os.getcwd(),
                               "env": dict(os.environ), "tty": _isatty(sys.stdout)}
    if "-" in argv:  # a buffer on standard input, as editors pipe it
        import base64
        message["stdin"] = base64.b64encode(sys.stdin.buffer.read()).decode()
    answer = _request(path, message) if os.path.exists(path) else None
    if answer is None or "rc" not in answer:
        if (answer is None and holder(path) is None) or (answer or {}).get("restart"):
            start(path, wait=False)
        _fallback(message)
        return None
    sys.stdout.write(answer.get("stdout", ""))
    sys.stderr.write(answer.get("stderr", ""))
    sys.stdout.flush()
    return int(answer["rc"])


def _fallback(message: Dict[str, Any]) -> None:
    """Standard input already read for the daemon is handed to the in-process run."""
    if "stdin" in message:
        import base64
        import io
        sys.stdin = io.TextIOWrapper(io.BytesIO(base64.b64decode(message["stdin"])))
    return None


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


# The daemon's interpreter: isolated (``-I``: no working directory, user site or
# PYTHON* variables on its path), started in ``/``, importing from the path the client
# imports from. Its working directory held the socket once, so a ``shardcheck`` package
# planted there ran as the user.
_BOOT = ("import sys\n"
         "i = sys.argv.index('--')\n"
         "sys.path[:] = sys.argv[1:i]\n"
         "from shardcheck.cli import main\n"
         "sys.exit(main(sys.argv[i + 1:]))\n")


def _import_path() -> List[str]:
    """The client's ``sys.path`` as absolute directories, without its working
    directory (``python -m`` puts it first: it is the user's project, not shardcheck's
    code) unless shardcheck itself was imported from there."""
    cwd = os.getcwd()
    home = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out: List[str] = []
    for p in sys.path:
        p = os.path.abspath(p) if p else cwd
        if (p != cwd or p == home) and p not in out:
            out.append(p)
    return out


def start(path: str, wait: bool = True, idle_timeout: float = IDLE_TIMEOUT) -> Optional[int]:
    """Start a daemon on ``path`` in its own session; with ``wait``, its pid once it
    answers (None if it did not within 30 s)."""
    import subprocess
    import time
    flags = ["-I"] + (["-B"] if sys.dont_write_bytecode else [])
    command = [sys.executable, *flags, "-c", _BOOT, *_import_path(), "--", "daemon", "run",
               "--socket", path, "--idle-timeout", str(idle_timeout)]
    try:
        fd = os.open(sibling(path, ".log"), os.O_WRONLY | os.O_APPEND | os.O_CREAT
                     | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0), 0o600)
        with os.fdopen(fd, "ab") as err:
            proc = subprocess.Popen(command, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.DEVNULL, stderr=err, cwd="/",
                                    start_new_session=True, close_fds=True)
    except OSError:
        return None
    if not wait:
        return proc.pid
    deadline = time.monotonic() + 30.0
    while time.monotonic() < deadline:
        answer = status(path)
        if answer is not None:
            return int(answer["pid"])
        if proc.poll() is not None:  # it exited: another daemon took the socket, or failed
            answer = status(path)
            return int(answer["pid"]) if answer else None
        time.sleep(0.05)
    return None


def status(path: str) -> Optional[dict]:
    return _request(path, {"kind": "status"}, ack_wait=5.0, answer_wait=5.0)


def holder(path: str) -> Optional[int]:
    """The pid of the daemon that holds ``path``'s lock (a daemon holds it for life,
    answering or not); None when no process holds it."""
    import fcntl
    try:
        fd = os.open(sibling(path, ".lock"), os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
                     | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # held
            try:
                return int(os.pread(fd, 32, 0).decode().strip() or 0) or -1
            except (OSError, ValueError):
                return -1  # held, by a daemon that has not written its pid yet
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def stop(path: str, wait: float = 10.0) -> Optional[str]:
    """Stop the daemon of ``path``: asked, and if it does not answer within a few
    seconds (busy, stopped or wedged), its process group ended (TERM, then KILL).
    How it went (``"stopped"``, ``"killed"``), or None when none was running."""
    import signal
    import time
    if os.path.exists(path) and _request(path, {"kind": "stop"}, ack_wait=5.0,
                                         answer_wait=5.0) is not None:
        deadline = time.monotonic() + wait
        while holder(path) is not None and time.monotonic() < deadline:
            time.sleep(0.05)
        return "stopped"
    pid = holder(path)
    if pid is None:
        return None
    if pid <= 0 or not _is_daemon(pid, path):
        return None
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pid, sig)  # its workers too: the daemon leads its own session
        except OSError:
            pass
        deadline = time.monotonic() + wait / 2
        while holder(path) is not None and time.monotonic() < deadline:
            time.sleep(0.05)
        if holder(path) is None:
            return "killed"
    return "killed" if holder(path) is None else None


def _is_daemon(pid: int, path: str) -> bool:
    """Process ``pid`` is this user's daemon of ``path`` (its command line says so), so a
    pid the lock file names but another process now has is never signalled."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            args = f.read().split(b"\0")
        return os.stat(f"/proc/{pid}").st_uid == os.getuid() and path.encode() in args
    except OSError:
        return False
