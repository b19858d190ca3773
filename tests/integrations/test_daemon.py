"""``shardcheck check --daemon``: a warm background process serves the run. What it
reports must be what the same command reports in-process, byte for byte, and every way
the daemon can be missing or unfit must fall back to the in-process run."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import pytest

from shardcheck import cli

pytestmark = pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="no Unix sockets")

SRC = ('import jax\nfrom jax.sharding import NamedSharding, PartitionSpec as P\n'
       'mesh = jax.make_mesh((2, 4), ("data", "model"))\ns = NamedSharding(mesh, P("modle"))\n')
FIXED = SRC.replace('"modle"', '"model"')
LEGACY = ('import jax\nfrom jax.sharding import Mesh\n'
          'def f(devices):\n    with Mesh(devices, ("x",)):\n        pass\n')


def _env(directory, **extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHARDCHECK_DAEMON")}
    env.update(SHARDCHECK_DAEMON_DIR=directory, NO_COLOR="1", **extra)
    return env


def _shardcheck(args, env, cwd=None, stdin=None):
    r = subprocess.run([sys.executable, "-m", "shardcheck", *args], capture_output=True,
                       text=True, env=env, cwd=cwd, input=stdin)
    return r.returncode, r.stdout, r.stderr


def _served(env) -> int:
    code, out, _ = _shardcheck(["daemon", "status"], env)
    assert code == 0, out
    return int(out.split(" run(s) served")[0].rsplit(", ", 1)[1])


@pytest.fixture(scope="module")
def daemon():
    """A daemon of this module's own (a short private path: Unix socket paths are short)."""
    directory = tempfile.mkdtemp(prefix="scd-")
    env = _env(directory)
    code, out, err = _shardcheck(["daemon", "start", "--idle-timeout", "300"], env)
    assert code == 0 and out.startswith("started (pid "), err
    yield env
    _shardcheck(["daemon", "stop"], env)
    shutil.rmtree(directory, ignore_errors=True)


def test_a_served_run_reports_what_an_in_process_run_does(daemon, tmp_path):
    (tmp_path / "bad.py").write_text(SRC)
    (tmp_path / "pyproject.toml").write_text('[tool.shardcheck]\nignore = ["SC110"]\n')
    before = _served(daemon)
    for extra in ([], ["--format", "json"], ["--statistics"], ["-v", "--no-cache"],
                  ["--select", "SC999"], ["--bogus-flag"], ["missing.py"]):
        here = _shardcheck(["check", "--no-daemon", "bad.py", *extra], daemon, tmp_path)
        there = _shardcheck(["check", "--daemon", "bad.py", *extra], daemon, tmp_path)
        if "-v" in extra:  # "checked 1 files in 0.41s": the time differs
            here = here[:2] + (here[2].split(" in ")[0],)
            there = there[:2] + (there[2].split(" in ")[0],)
        assert there == here, extra
    assert here[0] == 2 and "no such file" in here[2]
    assert _served(daemon) == before + 7
    code, out, _ = _shardcheck(["check", "--daemon", "bad.py", "--format", "json"], daemon,
                               tmp_path)
    assert code == 1 and [f["code"] for f in json.loads(out)] == ["SC101"]


def test_a_served_run_on_one_module_gives_the_projects_answer(daemon, tmp_path):
    """model.py named alone: its findings come from train.py, which imports it (issue 37)."""
    import tinylm_project
    tinylm_project.write(tmp_path)
    before = _served(daemon)
    code, out, err = _shardcheck(["check", "--daemon", "--output-format", "concise",
                                  "src/tinylm/model.py"], daemon, tmp_path)
    assert _served(daemon) == before + 1
    assert code == 1, out + err
    finding, note = out.splitlines()[:2]
    assert finding.startswith("src/tinylm/model.py:10:75: SC104 error:")
    assert note == ("src/tinylm/train.py:17:18: note: `init_params` is called here, with the "
                    "values this finding depends on")


def test_a_served_client_imports_no_analysis(daemon, tmp_path):
    (tmp_path / "bad.py").write_text(SRC)
    before = subprocess.run([sys.executable, "-c", "import sys; print(*sys.modules)"],
                            capture_output=True, text=True, env=daemon).stdout.split()
    probe = ("import sys\nfrom shardcheck.cli import main\nrc = main(['check', '--daemon', "
             "'--no-cache', 'bad.py'])\nprint('libcst' in sys.modules, "
             "'shardcheck.analyzer' in sys.modules, rc, file=sys.stderr)\n"
             "print(*sys.modules, file=sys.stderr)\n")
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                       env=daemon, cwd=tmp_path)
    assert r.stderr.splitlines()[-2].split() == ["False", "False", "1"], r.stderr
    # nor the standard library's costlier modules (json, socket, hashlib: about 20 ms)
    new = set(r.stderr.splitlines()[-1].split()) - set(before)
    assert not new & {"json", "socket", "hashlib", "re", "enum"}, sorted(new)
    assert "bad.py:4:" in r.stdout


def test_edits_between_runs_are_seen(daemon, tmp_path):
    f = tmp_path / "m.py"
    f.write_text(SRC)
    assert _shardcheck(["check", "--daemon", "m.py"], daemon, tmp_path)[0] == 1
    f.write_text(FIXED)
    assert _shardcheck(["check", "--daemon", "m.py"], daemon, tmp_path)[0] == 0
    f.write_text(SRC)
    assert _shardcheck(["check", "--daemon", "--no-cache", "m.py"], daemon, tmp_path)[0] == 1


def test_standard_input_fixes_and_colour_go_through_the_daemon(daemon, tmp_path):
    args = ["check", "-", "--stdin-filename", "pkg/m.py"]
    assert (_shardcheck(args + ["--daemon"], daemon, tmp_path, SRC)
            == _shardcheck(args + ["--no-daemon"], daemon, tmp_path, SRC))
    code, out, _ = _shardcheck(args + ["--daemon"], daemon, tmp_path, SRC)
    assert code == 1 and out.startswith("pkg/m.py:4:")
    # --fix writes the client's file, in the client's directory
    (tmp_path / "legacy.py").write_text(LEGACY)
    code, _, err = _shardcheck(["check", "--daemon", "--fix", "legacy.py"], daemon, tmp_path)
    assert "Fixed 1 finding(s)" in err and "jax.set_mesh" in (tmp_path / "legacy.py").read_text()
    # the client's environment is the run's: FORCE_COLOR colours the report
    (tmp_path / "bad.py").write_text(SRC)
    env = dict(daemon, FORCE_COLOR="1")
    del env["NO_COLOR"]
    here = _shardcheck(["check", "--no-daemon", "bad.py"], env, tmp_path)
    there = _shardcheck(["check", "--daemon", "bad.py"], env, tmp_path)
    assert there == here and "\x1b[" in there[1]


def test_the_first_run_checks_in_process_and_starts_a_daemon(tmp_path):
    directory = tempfile.mkdtemp(prefix="scd-")
    env = _env(directory, SHARDCHECK_DAEMON="1")
    (tmp_path / "bad.py").write_text(SRC)
    try:
        # answered in-process, with the standard input read for the daemon that is not there
        code, out, _ = _shardcheck(["check", "-", "--stdin-filename", "m.py"], env, tmp_path,
                                   SRC)
        assert code == 1 and out.startswith("m.py:4:")
        code, out, _ = _shardcheck(["check", "bad.py"], env, tmp_path)
        assert code == 1 and "bad.py:4:" in out
        deadline = time.monotonic() + 60
        while _shardcheck(["daemon", "status"], env)[0] != 0:
            assert time.monotonic() < deadline, "no daemon was started"
            time.sleep(0.2)
        before = _served(env)
        assert _shardcheck(["check", "bad.py"], env, tmp_path)[:2] == (code, out)
        assert _served(env) == before + 1
        assert _shardcheck(["check", "--no-daemon", "bad.py"], env, tmp_path)[:2] == (code, out)
        assert _served(env) == before + 1  # --no-daemon wins over SHARDCHECK_DAEMON
    finally:
        assert _shardcheck(["daemon", "stop"], env)[1] == "stopped\n"
        shutil.rmtree(directory, ignore_errors=True)
    assert _shardcheck(["daemon", "status"], env)[:2] == (3, "not running\n")


def test_an_unsafe_directory_or_a_dead_socket_falls_back(tmp_path):
    from shardcheck.integrations import daemon
    (tmp_path / "bad.py").write_text(SRC)
    shared = tempfile.mkdtemp(prefix="scd-")
    try:
        os.chmod(shared, 0o777)  # another user could plant a socket here
        env = _env(shared)
        code, out, _ = _shardcheck(["check", "--daemon", "bad.py"], env, tmp_path)
        assert code == 1 and "bad.py:4:" in out and os.listdir(shared) == []
        code, _, err = _shardcheck(["daemon", "start"], env)
        assert code == 2 and "SHARDCHECK_DAEMON_DIR" in err
        # a socket left by a daemon that died: nothing listens there
        os.chmod(shared, 0o700)
        old = os.environ.get("SHARDCHECK_DAEMON_DIR")
        os.environ["SHARDCHECK_DAEMON_DIR"] = shared
        try:
            path = daemon.socket_path()
        finally:
            if old is None:
                del os.environ["SHARDCHECK_DAEMON_DIR"]
            else:
                os.environ["SHARDCHECK_DAEMON_DIR"] = old
        dead = socket.socket(socket.AF_UNIX)
        dead.bind(path)
        dead.close()
        start = time.monotonic()
        code, out, _ = _shardcheck(["check", "--daemon", "bad.py"], env, tmp_path)
        assert code == 1 and "bad.py:4:" in out and time.monotonic() - start < 30
        # that run started a daemon in the background, in the dead one's place
        deadline = time.monotonic() + 60
        while _shardcheck(["daemon", "status"], env)[0] != 0:
            assert time.monotonic() < deadline, "no daemon was started"
            time.sleep(0.2)
    finally:
        _shardcheck(["daemon", "stop"], _env(shared))
        shutil.rmtree(shared, ignore_errors=True)


def test_the_wire_carries_plain_data_only():
    from shardcheck.integrations import daemon as wire
    message = {"kind": "check", "argv": ["a.py", "-"], "env": {"A": "é"}, "tty": False,
               "stdin": "AAE=", "rc": 1}
    assert wire.decode(wire.encode(message)) == message
    code = compile("x = 1", "<m>", "exec")
    import marshal
    for bad in (b"", b"not marshal", marshal.dumps([1, 2]), marshal.dumps({"a": code}),
                marshal.dumps({1: "a"}), marshal.dumps({"a": {"b": [code]}})):
        assert wire.decode(bad) is None


def _acknowledged(data: bytes) -> dict:
    """The answer after the daemon's ACK byte (it took the request)."""
    from shardcheck.integrations import daemon as wire
    assert data[:1] == wire.ACK
    return wire.decode(data[1:])


def test_a_daemon_whose_code_changed_asks_for_a_restart():
    from shardcheck.integrations import daemon as wire
    from shardcheck.integrations import daemon_serve
    ours, theirs = socket.socketpair()
    with theirs:
        theirs.sendall(wire.encode({"kind": "check", "argv": ["x.py"], "cwd": "/"}))
        theirs.shutdown(socket.SHUT_WR)
        done, served = daemon_serve._handle(ours, "a stamp of other files", 0.0, 4, cli.run)
        answer = _acknowledged(theirs.recv(1 << 16))
    assert done and served == 4 and "changed" in answer["restart"]
    assert daemon_serve._code_stamp() == daemon_serve._code_stamp()


def test_a_request_the_daemon_cannot_run_leaves_it_as_it_was(tmp_path):
    from shardcheck.integrations import daemon as wire
    from shardcheck.integrations import daemon_serve
    cwd, env = os.getcwd(), dict(os.environ)
    ours, theirs = socket.socketpair()
    with theirs:
        theirs.sendall(wire.encode({"kind": "check", "argv": ["x.py"], "env": {"A": "1"},
                                      "cwd": str(tmp_path / "gone")}))
        theirs.shutdown(socket.SHUT_WR)
        done, served = daemon_serve._handle(ours, daemon_serve._code_stamp(), 0.0, 0, cli.run)
        answer = _acknowledged(theirs.recv(1 << 16))
    assert not done and served == 0 and "FileNotFoundError" in answer["error"]
    assert (os.getcwd(), dict(os.environ)) == (cwd, env)


def _idle_serve(monkeypatch, stamps, idle_timeout, alive_at=None):
    """Run ``serve`` in a thread, waking every 0.1 s, whose ``_code_stamp`` answers from
    ``stamps`` (the last one from then on); (seconds until it returned, whether it was
    still serving ``alive_at`` seconds in, whether its socket is gone)."""
    import gc
    import threading

    from shardcheck.integrations import daemon_serve
    answers = iter(stamps[:-1])
    monkeypatch.setattr(daemon_serve, "_code_stamp", lambda: next(answers, stamps[-1]))
    monkeypatch.setattr(daemon_serve, "_warm", lambda warm: None)
    monkeypatch.setattr(daemon_serve, "_WAKE", 0.1)
    directory = tempfile.mkdtemp(prefix="scd-")
    path = os.path.join(directory, "d.sock")
    try:
        served = threading.Thread(target=daemon_serve.serve, args=(path, idle_timeout, cli.run),
                                  daemon=True)
        start = time.monotonic()
        served.start()
        alive = None
        if alive_at is not None:
            time.sleep(alive_at)
            alive = served.is_alive()
        served.join(30)
        assert not served.is_alive()
        return time.monotonic() - start, alive, not os.path.exists(path)
    finally:
        gc.unfreeze()  # serve froze this process's objects
        shutil.rmtree(directory, ignore_errors=True)


def test_an_idle_daemon_exits_once_its_files_change(monkeypatch):
    """pre-commit deletes a hook's environment (``try-repo`` when it returns, ``gc``
    after an upgrade): the daemon running that code looks at its files while idle and
    exits, instead of waiting out its idle timeout."""
    took, _, gone = _idle_serve(monkeypatch, ["the files at start", "changed files"], 300.0)
    assert took < 10 and gone


def test_an_idle_daemon_whose_files_stay_exits_after_its_idle_timeout(monkeypatch):
    # woke several times in the first 0.5 s, files unchanged: still serving then
    took, alive, gone = _idle_serve(monkeypatch, ["the same files"], 1.0, alive_at=0.5)
    assert alive and 1.0 <= took < 10 and gone
