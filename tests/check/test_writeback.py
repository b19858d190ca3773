"""``shardcheck/check/writeback.py``'s temporary files under real signals: a ``check --fix`` run
killed while it writes (SIGKILL, SIGTERM, SIGINT), and the next run's sweep of what a
SIGKILL left, which removes only our own files of dead runs.

The child process holds its write at ``os.replace`` (the temporary file complete, not
yet renamed) and says so on a pipe, so each kill lands mid-write without sleeping."""

import os
import select
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from shardcheck.analyzer.config import Config
from shardcheck.check.discovery import discover
from shardcheck.check.writeback import STALE_AFTER_S, sweep_stale
from shardcheck.cli import main

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and pipes")

USE_MESH = ("import jax\nm = jax.make_mesh((2,), ('data',))\n"
            "with jax.sharding.use_mesh(m):\n    pass\n")
FIXED = USE_MESH.replace("jax.sharding.use_mesh", "jax.set_mesh")

# `shardcheck check --no-cache --fix PATHS` whose first rename of a temporary file waits:
# it writes "held" on the pipe whose fd is argv[1], reads standard input to its end, and
# waits until the write phase has recorded a signal sent meanwhile (the kernel may hand
# it to another thread of the process, which a loaded machine runs later than this one)
HELD = textwrap.dedent("""\
    import os, signal, sys, time
    # SIGINT as a terminal gives it (a background job's children inherit it ignored,
    # and shardcheck then leaves it ignored, as under nohup)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    replace = os.replace
    def held(src, dst):
        if os.path.basename(src).startswith(".shardcheck-fix-") and not held.done:
            held.done = True
            os.write(int(sys.argv[1]), b"held")
            sys.stdin.read()
            phase = getattr(signal.getsignal(signal.SIGINT), "__self__", None)
            deadline = time.monotonic() + 60
            while phase is not None and phase.pending is None and time.monotonic() < deadline:
                time.sleep(0.01)
        return replace(src, dst)
    held.done = False
    os.replace = held
    from shardcheck.cli import main
    sys.exit(main(["check", "--no-cache", "--fix", *sys.argv[2:]]))
    """)


def _held_fix(*paths):
    """The child, started and held mid-write."""
    r, w = os.pipe()
    child = subprocess.Popen([sys.executable, "-c", HELD, str(w), *map(str, paths)],
                             stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, pass_fds=(w,))
    os.close(w)
    try:
        ready, _, _ = select.select([r], [], [], 120)
        assert ready and os.read(r, 4) == b"held", child.communicate()[1]
    finally:
        os.close(r)
    return child


def _temporaries(directory):
    return sorted(n for n in os.listdir(directory) if n.startswith(".shardcheck-fix-"))


def test_after_a_sigkill_mid_write_the_file_is_whole_and_the_next_run_sweeps(tmp_path, capsys):
    p = tmp_path / "m.py"
    p.write_text(USE_MESH)
    child = _held_fix(p)
    child.kill()
    child.communicate()
    assert child.returncode == -signal.SIGKILL
    [left] = _temporaries(tmp_path)  # what only a SIGKILL leaves
    assert left.startswith(f".shardcheck-fix-{child.pid}-") and left.endswith(".tmp")
    assert p.read_text() == USE_MESH  # the old file, whole
    assert main(["check", "--no-cache", "--fix", str(tmp_path)]) == 0
    assert "Fixed 1 finding(s) in 1 file(s); 0 remaining." in capsys.readouterr().err
    assert p.read_text() == FIXED and _temporaries(tmp_path) == []


@pytest.mark.parametrize("sig, status", [(signal.SIGTERM, -signal.SIGTERM), (signal.SIGINT, 130)])
def test_sigterm_or_sigint_mid_write_finishes_that_file_and_writes_no_other(tmp_path, sig, status):
    first, second = tmp_path / "a.py", tmp_path / "b.py"
    first.write_text(USE_MESH)
    second.write_text(USE_MESH)
    child = _held_fix(first, second)
    child.send_signal(sig)  # held while a.py is written: a.py is whole, b.py not begun
    _, err = child.communicate(b"")
    assert child.returncode == status, err
    assert first.read_text() == FIXED and second.read_text() == USE_MESH
    assert _temporaries(tmp_path) == []


def test_the_sweep_removes_only_our_files_of_dead_runs(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()
    names = {
        f".shardcheck-fix-{dead}-0a1b2c3d.tmp": True,  # its run is gone
        f".shardcheck-fix-{os.getpid()}-0a1b2c3d.tmp": False,  # a live run's, mid-write
        ".shardcheck-fix-notes.txt": False,  # a user's file, whatever its name
        ".shardcheck-fix-0a1b2c3d.tmp": False,  # not our pattern (no pid)
        ".shardcheck-fix-k3j_x9a2.py": False,  # what earlier versions named one: fresh
    }
    for name in names:
        (tmp_path / name).write_text("x = 1\n")
    old = {f".shardcheck-fix-{os.getpid()}-99aa.tmp": True,  # live pid, but no write lasts
           ".shardcheck-fix-q0w9e8r7.py": True,  # an earlier version's, an hour old
           ".shardcheck-fix-notes-old.txt": False}
    long_ago = time.time() - STALE_AFTER_S - 60
    for name in old:
        (tmp_path / name).write_text("x = 1\n")
        os.utime(tmp_path / name, (long_ago, long_ago))
    names.update(old)
    removed = sweep_stale([str(tmp_path)])
    assert sorted(os.path.basename(r) for r in removed) == sorted(n for n, go in names.items() if go)
    assert _temporaries(tmp_path) == sorted(n for n, go in names.items() if not go)


def test_discovery_never_checks_a_temporary_file(tmp_path):
    for name in ("m.py", ".shardcheck-fix-k3j_x9a2.py", ".shardcheck-fix-123-0a1b.tmp"):
        (tmp_path / name).write_text("x = 1\n")
    files, _ = discover([str(tmp_path)], Config())
    assert [os.path.basename(f) for f in files] == ["m.py"]
