"""The daemon's side of ``shardcheck check --daemon`` (``shardcheck daemon run``): import
the analysis once, then run each request's command line as the CLI would, in the
request's directory and environment, and answer its output and exit status.

See ``shardcheck/integrations/daemon.py`` for the client and the lifecycle.
"""

from __future__ import annotations

import base64
import gc
import io
import os
import socket
import sys
import time
import traceback
from typing import Any, Callable, Dict, List, Optional, Tuple

from shardcheck._version import __version__
from .daemon import ACK, decode, encode, peer_pid, sibling
from .daemon import status as _status_of

_LOCK_WAIT = 10.0  # seconds a new daemon waits for an exiting one to let go of the socket
# seconds between looks, while idle, at shardcheck's files: a daemon whose installation
# was upgraded or deleted (pre-commit's `try-repo` and `gc` delete hook environments)
# exits then, rather than at the end of its idle timeout
_WAKE = 60.0


class _Captured(io.StringIO):
    """A standard stream for one request: written to memory, a terminal iff the
    client's is (for colour)."""

    def __init__(self, tty: bool) -> None:
        super().__init__()
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty


def _code_stamp() -> str:
    """The files of shardcheck this process runs, with their sizes and mtimes, looked at
    afresh: when it changes, this daemon no longer runs the code a fresh process would."""
    from shardcheck.installed_code import stamp
    return stamp(fresh=True)


# What the daemon runs: a command line, answered with its exit status (``cli.run``, which
# the daemon command hands to ``serve``: this module does not import the CLI that starts it)
RunArgv = Callable[[List[str]], int]


def _warm(warm: Callable[[], object]) -> None:
    """Import what a check needs, so that no request pays for it (the first one paid
    about 30 ms for the command line's parser, the configuration's readers and the
    worker pool's modules)."""
    import argparse  # noqa: F401
    import concurrent.futures  # noqa: F401
    import concurrent.futures.process  # noqa: F401
    import importlib
    import multiprocessing.queues  # noqa: F401
    for name in ("multiprocessing.popen_fork", "tomllib", "tomli"):  # where there are
        try:
            importlib.import_module(name)
        except ImportError:
            pass

    from shardcheck.output import terminal  # noqa: F401
    from shardcheck.analyzer import config, engine, logical_config, pyconfig  # noqa: F401
    from shardcheck.check import cache, discovery, fixes, runner, supervisor  # noqa: F401
    from shardcheck.output import findings  # noqa: F401
    from shardcheck.analyzer.interp import model  # noqa: F401
    from shardcheck.analyzer.rules import all_rules
    all_rules()
    warm()  # the command line's parser, built once
    try:
        import rich.console  # noqa: F401  # colour, when the client's terminal shows it
        import rich.text  # noqa: F401
    except ImportError:
        pass


def _run(message: Dict[str, Any], run_argv: RunArgv) -> Dict[str, Any]:
    """Run one command line as ``shardcheck`` would in the client's process."""
    argv: List[str] = [str(a) for a in message["argv"]]
    saved = (os.getcwd(), dict(os.environ), sys.stdout, sys.stderr, sys.stdin, sys.argv)
    out, err = _Captured(bool(message.get("tty"))), _Captured(False)
    try:
        os.chdir(message["cwd"])
        os.environ.clear()
        os.environ.update({str(k): str(v) for k, v in message.get("env", {}).items()})
        sys.stdout, sys.stderr, sys.argv = out, err, ["shardcheck"] + argv
        data = base64.b64decode(message["stdin"]) if "stdin" in message else b""
        sys.stdin = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")
        try:
            rc = run_argv(argv)
        except SystemExit as e:  # argparse's usage errors, --help
            rc = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
            if isinstance(e.code, str):
                print(e.code, file=sys.stderr)
        except Exception:  # what an in-process run would print before dying
            traceback.print_exc()
            rc = 1
    finally:
        cwd, env, sys.stdout, sys.stderr, sys.stdin, sys.argv = saved
        os.environ.clear()
        os.environ.update(env)
        try:
            os.chdir(cwd)
        except OSError:
            os.chdir("/")
    return {"rc": rc, "stdout": out.getvalue(), "stderr": err.getvalue()}


def _lock(path: str) -> Optional[int]:
    """The socket's lock (a descriptor), held for this daemon's life with its pid in
    it (``shardcheck daemon status|stop`` read it): None when another daemon holds it
    (and answers) or it cannot be taken."""
    import fcntl
    fd = os.open(sibling(path, ".lock"), os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
                 | getattr(os, "O_CLOEXEC", 0), 0o600)
    deadline = time.monotonic() + _LOCK_WAIT
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except OSError:
            if _status_of(path) is not None or time.monotonic() > deadline:
                os.close(fd)
                return None
            time.sleep(0.1)
    os.ftruncate(fd, 0)
    os.pwrite(fd, str(os.getpid()).encode(), 0)
    return fd


# What a process forked from the daemon (a check's worker) must not keep: the listening
# socket, the connection being served and the lock. A worker that outlived a killed
# daemon held all three: clients queued on the dead socket, and no new daemon could
# take the lock.
_INHERITED: Dict[str, int] = {}


def _drop_inherited() -> None:
    for fd in list(_INHERITED.values()):
        try:
            os.close(fd)
        except OSError:
            pass
    _INHERITED.clear()


_FORK_HOOK: List[bool] = []


class _Terminated(BaseException):
    """SIGTERM (``shardcheck daemon stop`` of a daemon that did not answer): out through
    serve's cleanup, which removes the socket; not a ``SystemExit``, which a run's
    argparse handling would take for its own."""


def _on_sigterm(signum, frame) -> None:
    raise _Terminated()


def serve(path: str, idle_timeout: float, run_argv: RunArgv,
          warm: Callable[[], object] = lambda: None) -> int:
    """Serve requests on the Unix socket ``path`` until idle for ``idle_timeout``
    seconds, stopped, or shardcheck's files change."""
    lock = _lock(path)
    if lock is None:
        return 0  # a daemon serves this socket already
    if not _FORK_HOOK:
        os.register_at_fork(after_in_child=_drop_inherited)
        _FORK_HOOK.append(True)
    _INHERITED["lock"] = lock
    try:
        import signal
        signal.signal(signal.SIGTERM, _on_sigterm)
    except ValueError:  # not the main thread (a test serving in a thread)
        pass
    _warm(warm)
    gc.freeze()  # what was imported stays: no collection need look at it again
    stamp = _code_stamp()
    if os.path.lexists(path):
        os.unlink(path)  # left by a daemon that died: nobody holds the lock
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    _INHERITED["listening"] = srv.fileno()
    try:
        srv.bind(path)
        os.chmod(path, 0o600)
        srv.listen(64)
        srv.settimeout(min(idle_timeout, _WAKE) if idle_timeout > 0 else _WAKE)
        _serve_loop(srv, stamp, idle_timeout, run_argv)
    except _Terminated:
        pass
    finally:
        _INHERITED.clear()
        srv.close()
        try:
            os.unlink(path)
        except OSError:
            pass
        os.close(lock)
    return 0


def _serve_loop(srv: socket.socket, stamp: str, idle_timeout: float, run_argv: RunArgv) -> None:
    started, served = time.time(), 0
    idle_since = time.monotonic()
    while True:
        try:
            conn, _ = srv.accept()
        except socket.timeout:
            if idle_timeout > 0 and time.monotonic() - idle_since >= idle_timeout:
                return
            if _code_stamp() != stamp:  # no request will run this code again
                return
            continue
        if peer_pid(conn) is None:  # another user's process: not a word to it
            conn.close()
            continue
        _INHERITED["connection"] = conn.fileno()
        try:
            done, served = _handle(conn, stamp, started, served, run_argv)
        finally:
            _INHERITED.pop("connection", None)
        if done:
            return
        idle_since = time.monotonic()


_READ_TIMEOUT = 10.0  # seconds for a client to hand over its request
_SEND_TIMEOUT = 30.0  # seconds for a client to take its answer: one that stops reading
#                       would otherwise keep every other client waiting


def _handle(conn: socket.socket, stamp: str, started: float, served: int,
            run_argv: RunArgv) -> Tuple[bool, int]:
    """Answer one connection; (whether to exit, requests served)."""
    with conn:
        conn.settimeout(_READ_TIMEOUT)
        try:
            message = decode(_read_all(conn))
        except OSError:
            return False, served
        if message is None:  # not a request of ours: no answer
            return False, served
        try:
            conn.sendall(ACK)  # taken: the client waits for the answer from now on
        except OSError:
            return False, served  # it gave up waiting (or went away): nothing to run
        kind = message.get("kind")
        done = False
        if kind == "status":
            answer: Dict[str, Any] = {"pid": os.getpid(), "version": __version__,
                                      "python": sys.executable, "started": started,
                                      "served": served}
        elif kind == "stop":
            answer, done = {"stopped": os.getpid()}, True
        elif kind == "check" and _code_stamp() != stamp:
            answer, done = {"restart": "shardcheck's files changed since the daemon started"}, True
        elif kind == "check":
            try:
                answer, served = _run(message, run_argv), served + 1
            except Exception as e:  # a directory gone, a malformed request: run it in-process
                answer = {"error": f"{type(e).__name__}: {e}"}
        else:
            answer = {"error": f"unknown request {kind!r}"}
        try:
            conn.settimeout(_SEND_TIMEOUT)
            conn.sendall(encode(answer))
        except OSError:
            pass  # the client went away (^C) or stopped reading: nothing to tell it
    if kind == "check":
        gc.unfreeze()  # with what a run in this process froze (supervisor.collected_per_file)
        gc.collect()  # this run's analysis, freed while no one waits
        gc.freeze()  # what stays (the warm imports): no collection need look at it again
    return done, served


def _read_all(conn: socket.socket) -> bytes:
    """Everything the client sends, within ``_READ_TIMEOUT`` in all (``socket.timeout``,
    an ``OSError``, past it)."""
    chunks: List[bytes] = []
    deadline = time.monotonic() + _READ_TIMEOUT
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise socket.timeout("the request took too long to arrive")
        conn.settimeout(left)
        chunk = conn.recv(1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
