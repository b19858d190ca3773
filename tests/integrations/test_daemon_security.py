"""The daemon under attack and faults (issue 36): who may reach it, what it runs, and
what becomes of its clients when it dies, stops or is slow. Each test reproduces what
an outside review did to the daemon before it held.

Tests that need a second local user run as root (as CI does) and act as uid
``OTHER``, an account that need not exist; they are skipped elsewhere."""

from __future__ import annotations

import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import pytest

from shardcheck import cli
from test_daemon import SRC, _env, _shardcheck

pytestmark = pytest.mark.skipif(not hasattr(socket, "SO_PEERCRED"),
                                reason="the daemon needs Unix sockets with SO_PEERCRED")

OTHER = 12345  # the other local user
as_root = pytest.mark.skipif(os.getuid() != 0, reason="acts as another user, which needs root")


def _other_python():
    """A Python the other user may run (ours may live under /root), or a skip."""
    for p in ("/usr/bin/python3", "/usr/local/bin/python3", sys.executable):
        try:
            r = subprocess.run([p, "-c", "pass"], user=OTHER, group=OTHER, timeout=30)
        except OSError:
            continue
        if r.returncode == 0:
            return p
    pytest.skip("no Python here that another user may run")


@pytest.fixture
def private(tmp_path):
    """A short private directory for sockets (AF_UNIX paths are short)."""
    directory = tempfile.mkdtemp(prefix="scs-")
    yield directory
    _shardcheck(["daemon", "stop"], _env(directory))
    shutil.rmtree(directory, ignore_errors=True)


# -- the socket directory -----------------------------------------------------------

def test_a_symlink_in_place_of_the_socket_directory_is_refused(tmp_path):
    from shardcheck.integrations.daemon import private_dir
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(real)
    assert private_dir(str(tmp_path / "link")) is None
    assert private_dir(str(real)) == str(real)


def test_a_socket_directory_others_could_swap_is_refused(tmp_path):
    from shardcheck.integrations.daemon import private_dir
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)  # anyone may rename our directory away and put theirs there
    assert private_dir(str(shared / "sc")) is None
    os.chmod(shared, 0o1777)  # sticky, as /tmp: only an entry's owner may rename it
    assert private_dir(str(shared / "sc")) == str(shared / "sc")
    os.chmod(shared / "sc", 0o755)  # ours, but others may read the log and reach the socket
    assert private_dir(str(shared / "sc")) is None


@as_root
def test_a_socket_directory_of_another_user_is_refused(tmp_path):
    from shardcheck.integrations.daemon import private_dir
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o700)
    os.chown(theirs, OTHER, OTHER)
    assert private_dir(str(theirs)) is None
    os.chown(tmp_path, OTHER, OTHER)  # a parent of another user's: they could swap ours
    (tmp_path / "ours").mkdir(mode=0o700)
    assert private_dir(str(tmp_path / "ours")) is None


@as_root
def test_another_user_swapping_the_socket_directory_runs_nothing_as_you(tmp_path):
    """The attack of the review: a symlink at $TMPDIR/shardcheck-UID swapped between a
    directory of the victim's and one of the attacker's holding a ``shardcheck``
    package; 3 of 10 runs executed it as the victim."""
    shared = pathlib.Path(tempfile.mkdtemp(prefix="scs-"))  # short: AF_UNIX paths are
    os.chmod(shared, 0o1777)
    victims = tmp_path / "victims"
    victims.mkdir(mode=0o700)
    attackers = tmp_path / "attackers"
    (attackers / "shardcheck").mkdir(parents=True)
    marker = attackers / "ran-as-victim"
    planted = f"open({str(marker)!r}, 'w').write('pwned')\n"
    for name in ("__init__.py", "__main__.py", "cli.py"):
        (attackers / "shardcheck" / name).write_text(planted)
    for p in (attackers, attackers / "shardcheck"):
        os.chown(p, OTHER, OTHER)
    os.chmod(attackers, 0o777)
    link = shared / f"shardcheck-{os.getuid()}"
    swapper = subprocess.Popen(
        ["/bin/sh", "-c", f"while :; do ln -sfn {victims} {link}; ln -sfn {attackers} {link}; done"],
        user=OTHER, group=OTHER)
    project = tmp_path / "project"
    project.mkdir()
    (project / "bad.py").write_text(SRC)
    env = {k: v for k, v in _env(str(victims)).items()
           if k not in ("SHARDCHECK_DAEMON_DIR", "XDG_RUNTIME_DIR")}
    env["TMPDIR"] = str(shared)
    try:
        for _ in range(10):
            code, out, _ = _shardcheck(["check", "--daemon", "bad.py"], env, project)
            assert code == 1 and "bad.py:4:" in out and "SC101" in out
    finally:
        swapper.kill()
        swapper.wait()
        _shardcheck(["daemon", "stop"], env)  # one started in a real directory, if any
        shutil.rmtree(shared, ignore_errors=True)
    assert not marker.exists()
    assert os.listdir(victims) == []  # no daemon started through the link either


def test_the_daemon_imports_nothing_from_its_socket_directory(private, tmp_path):
    """The daemon ran with the socket directory as its working directory, on its
    import path: a ``shardcheck`` package there ran. It now runs isolated, in ``/``."""
    marker = tmp_path / "planted-ran"
    pkg = os.path.join(private, "shardcheck")
    os.mkdir(pkg)
    for name in ("__init__.py", "__main__.py", "cli.py"):
        with open(os.path.join(pkg, name), "w") as f:
            f.write(f"open({str(marker)!r}, 'a').write('pwned')\n")
    (tmp_path / "bad.py").write_text(SRC)
    env = _env(private)
    assert _shardcheck(["daemon", "start"], env, tmp_path)[0] == 0
    code, out, _ = _shardcheck(["check", "--daemon", "bad.py"], env, tmp_path)
    assert code == 1 and "bad.py:4:" in out
    assert _shardcheck(["daemon", "status"], env)[0] == 0
    assert not marker.exists()


def test_the_daemon_imports_from_the_clients_path_without_its_directory(tmp_path, monkeypatch):
    """``python -m shardcheck`` puts the working directory (the user's project) first on
    the path; the daemon leaves it out, and keeps the rest in the client's order."""
    from shardcheck.integrations import daemon
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", ["", str(tmp_path), "/somewhere/lib", "/somewhere/site"])
    assert daemon._import_path() == ["/somewhere/lib", "/somewhere/site"]


# -- who is at the other end of the socket -------------------------------------------

_LISTENER = """
import os, socket, sys
s = socket.socket(fileno=int(sys.argv[1]))
s.listen(8)
print('listening', flush=True)
conn, _ = s.accept()
conn.settimeout(5)
got = b''
try:
    while True:
        chunk = conn.recv(65536)
        if not chunk:
            break
        got += chunk
except OSError:
    pass
print(len(got), flush=True)
conn.sendall(b'\\x06' + __import__('marshal').dumps({'rc': 0, 'stdout': 'All checks passed!\\n'}))
"""


@as_root
def test_a_socket_another_user_listens_on_gets_no_request(tmp_path):
    """A socket of ours (the file) with another user's process listening on it: the
    review planted one and got the victim's environment (a GH_TOKEN) and a forged "All
    checks passed". The client checks who listens (SO_PEERCRED) before it sends."""
    from shardcheck.integrations import daemon
    python = _other_python()
    directory = tempfile.mkdtemp(prefix="scs-")
    path = os.path.join(directory, "d.sock")
    os.chmod(directory, 0o755)
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(path)  # the file is root's, as our own daemon's would be
    os.chmod(path, 0o666)
    listener = subprocess.Popen([python, "-c", _LISTENER, str(srv.fileno())], user=OTHER,
                                group=OTHER, pass_fds=[srv.fileno()], stdout=subprocess.PIPE,
                                text=True)
    try:
        assert listener.stdout.readline() == "listening\n"
        answer = daemon._request(path, {"kind": "check", "env": {"GH_TOKEN": "secret"}})
        assert answer is None
        assert listener.stdout.readline() == "0\n"  # not a byte of the request
    finally:
        listener.kill()
        listener.wait()
        srv.close()
        shutil.rmtree(directory, ignore_errors=True)


@as_root
def test_the_daemon_answers_no_other_user(private, tmp_path):
    from shardcheck.integrations import daemon
    python = _other_python()
    env = _env(private)
    assert _shardcheck(["daemon", "start"], env)[0] == 0
    path = _socket_of(env)
    os.chmod(private, 0o755)  # let the other user reach the socket, as a bad directory would
    os.chmod(path, 0o666)
    probe = ("import socket, sys\ns = socket.socket(socket.AF_UNIX)\ns.settimeout(10)\n"
             "s.connect(sys.argv[1])\ntry:\n    s.sendall(bytes.fromhex(sys.argv[2]))\n"
             "    s.shutdown(socket.SHUT_WR)\n    print(len(s.recv(65536)))\n"
             "except (ConnectionResetError, BrokenPipeError):  # closed before we were done\n"
             "    print(0)\n")
    request = daemon.encode({"kind": "status"}).hex()
    r = subprocess.run([python, "-c", probe, path, request], user=OTHER, group=OTHER,
                       capture_output=True, text=True, timeout=60)
    assert r.stdout == "0\n", r.stderr  # closed without a byte
    os.chmod(private, 0o700)
    assert daemon.status(path) is not None  # and it still serves its own user


# -- a daemon that dies, stops or is slow --------------------------------------------

SLOW = ("import jax\nfrom jax.sharding import PartitionSpec\n" +
        "".join(f"y{i} = PartitionSpec + " + " + ".join(["a"] * 1500) + "\n" for i in range(4)))


def _socket_of(env) -> str:
    code, out, _ = _shardcheck(["daemon", "status"], env)
    assert code == 0, out
    return out.rsplit("socket ", 1)[1].strip()


def _pid_of(env) -> int:
    code, out, _ = _shardcheck(["daemon", "status"], env)
    assert code == 0, out
    return int(out.split("pid ", 1)[1].split(",")[0])


def _children(pid: int) -> list:
    out = []
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/children") as f:
                out += [int(c) for c in f.read().split()]
        except OSError:
            pass
    return out


@pytest.mark.slow  # end to end, about 8 s on 2 cores: CI's `-m slow` leg
def test_a_daemon_killed_mid_run_leaves_no_client_waiting(private, tmp_path):
    """As the OOM killer would: the daemon's forked workers held the listening socket,
    the client's connection and the lock; the client waited 14 minutes, every later
    client hung, ``daemon status`` said "not running" and ``start`` failed."""
    env = _env(private)
    assert _shardcheck(["daemon", "start"], env)[0] == 0
    pid = _pid_of(env)
    (tmp_path / "slow.py").write_text(SLOW)
    (tmp_path / "bad.py").write_text(SRC)
    client = subprocess.Popen([sys.executable, "-m", "shardcheck", "check", "--daemon",
                               "--no-cache", "slow.py", "bad.py"], env=env, cwd=tmp_path,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not _children(pid):  # the run's workers are up
        assert time.monotonic() < deadline and client.poll() is None
        time.sleep(0.02)
    workers = _children(pid)
    os.kill(pid, signal.SIGKILL)
    out, _ = client.communicate(timeout=120)
    assert client.returncode == 1 and "bad.py:4:" in out  # answered in-process instead
    for w in workers:  # the workers die with the daemon, taking nothing with them
        deadline = time.monotonic() + 10
        while os.path.exists(f"/proc/{w}") and _state(w) != "Z":
            assert time.monotonic() < deadline, f"worker {w} outlived its daemon"
            time.sleep(0.05)
    start = time.monotonic()
    code, out, _ = _shardcheck(["check", "--daemon", "bad.py"], env, tmp_path)
    assert code == 1 and "bad.py:4:" in out and time.monotonic() - start < 30
    deadline = time.monotonic() + 60
    while _shardcheck(["daemon", "status"], env)[0] != 0:  # that run started a new one
        assert time.monotonic() < deadline, "no new daemon could start"
        time.sleep(0.2)


def _state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return ""


@pytest.mark.slow  # end to end, about 12 s on 2 cores: CI's `-m slow` leg
def test_a_stopped_daemon_is_reported_and_worked_around(private, tmp_path):
    """A daemon that stops answering (SIGSTOP here): clients run in-process within
    seconds, ``status`` and ``start`` say so, and ``stop`` ends it."""
    env = _env(private)
    assert _shardcheck(["daemon", "start"], env)[0] == 0
    pid = _pid_of(env)
    (tmp_path / "bad.py").write_text(SRC)
    os.kill(pid, signal.SIGSTOP)
    try:
        start = time.monotonic()
        code, out, _ = _shardcheck(["check", "--daemon", "bad.py"], env, tmp_path)
        assert code == 1 and "bad.py:4:" in out and time.monotonic() - start < 15
        code, out, _ = _shardcheck(["daemon", "status"], env)
        assert code == 1 and f"not answering: the daemon (pid {pid})" in out
        code, _, err = _shardcheck(["daemon", "start"], env)
        assert code == 2 and "`shardcheck daemon stop` ends it" in err
        code, out, _ = _shardcheck(["daemon", "stop"], env)
        assert code == 0 and out.startswith("stopped (it did not answer")
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert _shardcheck(["daemon", "status"], env)[:2] == (3, "not running\n")


def test_a_client_that_stops_reading_does_not_hold_the_daemon(monkeypatch):
    """A client that stops reading a large answer blocked the daemon in ``sendall``, and
    every other client waited: the answer now has a time limit."""
    from shardcheck.integrations import daemon as wire
    from shardcheck.integrations import daemon_serve
    monkeypatch.setattr(daemon_serve, "_SEND_TIMEOUT", 0.5)
    monkeypatch.setattr(daemon_serve, "_run",
                        lambda message, run_argv: {"rc": 0, "stdout": "x" * (8 << 20)})
    ours, theirs = socket.socketpair()
    with theirs:
        theirs.sendall(wire.encode({"kind": "check", "argv": ["x.py"], "cwd": "/"}))
        theirs.shutdown(socket.SHUT_WR)
        start = time.monotonic()
        done, served = daemon_serve._handle(ours, daemon_serve._code_stamp(), 0.0, 0, cli.run)
        assert time.monotonic() - start < 5 and not done and served == 1


def test_a_request_that_never_arrives_does_not_hold_the_daemon(monkeypatch):
    from shardcheck.integrations import daemon_serve
    monkeypatch.setattr(daemon_serve, "_READ_TIMEOUT", 0.5)
    ours, theirs = socket.socketpair()
    with theirs:
        theirs.sendall(b"\xfb")  # a first byte, then silence
        start = time.monotonic()
        assert daemon_serve._handle(ours, "stamp", 0.0, 0, cli.run) == (False, 0)
        assert time.monotonic() - start < 5


def test_a_busy_daemon_sends_its_clients_in_process(monkeypatch, tmp_path):
    """A daemon serves one run at a time: a client it does not take within ACK_WAIT
    seconds runs in-process rather than wait behind a long run."""
    from shardcheck.integrations import daemon
    monkeypatch.setattr(daemon, "ACK_WAIT", 0.5)
    directory = tempfile.mkdtemp(prefix="scs-")
    path = os.path.join(directory, "d.sock")
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(path)
    srv.listen(4)  # ours, alive, and never accepting
    try:
        start = time.monotonic()
        assert daemon._request(path, {"kind": "status"}) is None
        assert time.monotonic() - start < 5
    finally:
        srv.close()
        shutil.rmtree(directory, ignore_errors=True)


def test_a_slow_buffer_on_standard_input_does_not_hold_the_daemon(private, tmp_path):
    """`check --daemon -` analysed the buffer in the daemon with no budget: a slow one
    kept it busy, and every other client waiting, long after its client was gone."""
    env = _env(private)
    assert _shardcheck(["daemon", "start"], env)[0] == 0
    (tmp_path / "bad.py").write_text(SRC)
    start = time.monotonic()
    code, out, _ = _shardcheck(["check", "--daemon", "-", "--stdin-filename", "slow.py",
                                "--timeout-per-file", "0.5"], env, tmp_path, SLOW)
    assert time.monotonic() - start < 30
    assert code == 0 and "slow.py:1:1: SC003 warning: this file was not analysed: its " \
        "analysis ran past timeout-per-file (0.5 s)" in out
    served = int(_shardcheck(["daemon", "status"], env)[1].split(" run(s) served")[0]
                 .rsplit(", ", 1)[1])
    assert served == 1  # it was the daemon's run, not an in-process fallback
    code, out, _ = _shardcheck(["check", "--daemon", "bad.py"], env, tmp_path)
    assert code == 1 and "bad.py:4:" in out
