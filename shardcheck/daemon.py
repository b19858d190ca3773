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

from ._version import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional

IDLE_TIMEOUT = 1800.0  # seconds without a request before the daemon exits
_CONNECT_TIMEOUT = 2.0
_MAX_SOCKET_PATH = 100  # AF_UNIX paths are limited to 104-108 bytes
_ENV_ON = "SHARDCHECK_DAEMON"
_WIRE = "marshal"  # how requests travel (``encode``); part of the socket's name


def wanted(argv: List[str]) -> bool:
    """Whether this command line asks for the daemon: ``check`` with ``--daemon``, or
    ``SHARDCHECK_DAEMON`` set to 1/true/yes (``--no-daemon`` wins over both)."""
    if "--no-daemon" in argv:
        return False
    env = os.environ.get(_ENV_ON, "").strip().lower() in ("1", "true", "yes", "on")
    if not ("--daemon" in argv or env):
        return False
    from .cli import COMMANDS
    first = next((a for a in argv if not a.startswith("-")), None)
    if first is not None and first in COMMANDS and first != "check":
        return False
    return not any(a in ("-h", "--help", "--version") for a in argv)


def socket_dir() -> Optional[str]:
    """The directory of this user's daemon sockets (made, mode 0700), or None when
    there is none safe to use."""
    if not hasattr(os, "getuid"):
        return None
    base = os.environ.get("SHARDCHECK_DAEMON_DIR")
    if not base:
        runtime = os.environ.get("XDG_RUNTIME_DIR")
        base = (os.path.join(runtime, "shardcheck") if runtime else
                os.path.join(os.environ.get("TMPDIR") or "/tmp", f"shardcheck-{os.getuid()}"))
    try:
        os.makedirs(base, mode=0o700, exist_ok=True)
        st = os.stat(base)
    except OSError:
        return None
    if st.st_uid != os.getuid() or st.st_mode & 0o077:
        return None  # another user could plant a socket there
    return base


def socket_path() -> Optional[str]:
    """This installation's daemon socket: one per Python executable, shardcheck
    directory and version."""
    import _socket
    if not hasattr(_socket, "AF_UNIX"):
        return None
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


def _request(path: str, message: Dict[str, Any], timeout: Optional[float] = None) -> Optional[dict]:
    """Send ``message`` to the daemon at ``path``; its answer, or None when no daemon
    answers there."""
    import _socket
    s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        s.settimeout(_CONNECT_TIMEOUT)
        s.connect(path)
        s.settimeout(timeout)
        s.sendall(encode(message))
        s.shutdown(_socket.SHUT_WR)
        chunks = []
        while True:
            chunk = s.recv(1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    except OSError:
        return None
    finally:
        s.close()
    return decode(b"".join(chunks))


def forward(argv: List[str]) -> Optional[int]:
    """Run ``shardcheck`` with ``argv`` in the daemon and print its output; its exit
    status, or None when the daemon cannot serve it (the caller runs it in-process; a
    daemon is started in the background for the next run)."""
    path = socket_path()
    if path is None:
        return None
    message: Dict[str, Any] = {"kind": "check", "argv": argv, "cwd": os.getcwd(),
                               "env": dict(os.environ), "tty": _isatty(sys.stdout)}
    if "-" in argv:  # a buffer on standard input, as editors pipe it
        import base64
        message["stdin"] = base64.b64encode(sys.stdin.buffer.read()).decode()
    if not os.path.exists(path):
        start(path, wait=False)
        _fallback(message)
        return None
    answer = _request(path, message)
    if answer is None or "rc" not in answer:
        if answer is None or answer.get("restart"):
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


def start(path: str, wait: bool = True, idle_timeout: float = IDLE_TIMEOUT) -> Optional[int]:
    """Start a daemon on ``path`` in its own session; with ``wait``, its pid once it
    answers (None if it did not within 30 s)."""
    import subprocess
    import time
    try:
        with open(sibling(path, ".log"), "ab") as err:
            proc = subprocess.Popen(
                [sys.executable, "-m", "shardcheck", "daemon", "run", "--socket", path,
                 "--idle-timeout", str(idle_timeout)],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                cwd=os.path.dirname(path), start_new_session=True, close_fds=True)
    except OSError:
        return None
    if not wait:
        return proc.pid
    deadline = time.monotonic() + 30.0
    while time.monotonic() < deadline:
        answer = _request(path, {"kind": "status"}, timeout=5.0)
        if answer is not None:
            return int(answer["pid"])
        if proc.poll() is not None:  # it exited: another daemon took the socket, or failed
            answer = _request(path, {"kind": "status"}, timeout=5.0)
            return int(answer["pid"]) if answer else None
        time.sleep(0.05)
    return None


def status(path: str) -> Optional[dict]:
    return _request(path, {"kind": "status"}, timeout=5.0)


def stop(path: str) -> bool:
    return _request(path, {"kind": "stop"}, timeout=30.0) is not None
