"""``shardcheck check --watch``, run as a user runs it: a report, then another after each
edit of a checked file, of a new file in the directory, of pyproject.toml; Ctrl-C ends it
with status 0."""

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from test_robustness import BAD, run

FIXED = BAD.replace('"batch"', '"data"')
# `shardcheck ARGS` with SIGINT as a terminal gives it: a test run started in the
# background (`pytest ... &` from a script) has it ignored, its children inherit that,
# and Python (so shardcheck) then leaves it ignored, as under nohup
AS_FROM_A_TERMINAL = ("import runpy, signal, sys\n"
                      "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
                      "sys.argv[0] = 'shardcheck'\n"
                      "runpy.run_module('shardcheck', run_name='__main__')\n")


class _Reader:
    """The lines a process writes, read in the background."""

    def __init__(self, stream):
        self.lines = []
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream):
        for line in stream:
            self.lines.append(line)

    def wait_for(self, text, count, timeout=60):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if sum(text in line for line in self.lines) >= count:
                return
            time.sleep(0.05)
        raise AssertionError(f"no {count} x {text!r} in {self.lines}")


@pytest.mark.skipif(os.name == "nt", reason="SIGINT to a child process")
def test_watch_checks_again_on_each_change_and_ctrl_c_ends_it(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.shardcheck]\n")
    (tmp_path / "model.py").write_text(BAD)
    proc = subprocess.Popen([sys.executable, "-c", AS_FROM_A_TERMINAL, "check", "--watch", ".",
                             "--output-format", "concise", "--no-cache"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = _Reader(proc.stdout), _Reader(proc.stderr)
    try:
        err.wait_for("watching for changes", 1)
        assert sum("model.py:5" in line and "SC101" in line for line in out.lines) == 1
        (tmp_path / "model.py").write_text(FIXED)  # an edit: checked again, nothing found
        err.wait_for("watching for changes", 2)
        out.wait_for("All checks passed", 1)
        (tmp_path / "new.py").write_text(BAD)  # a new file in the directory
        err.wait_for("watching for changes", 3)
        out.wait_for("new.py:5", 1)
        (tmp_path / "pyproject.toml").write_text('[tool.shardcheck]\nignore = ["SC101"]\n')
        err.wait_for("watching for changes", 4)
        out.wait_for("All checks passed", 2)
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0
    assert not any("Traceback" in line for line in err.lines), err.lines


@pytest.mark.parametrize("other", ["--fix", "--diff", "--add-noqa", "--show-files"])
def test_watch_does_not_combine_with_what_writes_or_only_shows(tmp_path, other):
    (tmp_path / "model.py").write_text(BAD)
    code, out, err = run(["check", "--watch", other, "model.py"], tmp_path)
    assert code == 2 and "--watch" in err and other in err, err


def test_watch_on_a_missing_path_exits_2_at_once(tmp_path):
    code, _, err = run(["check", "--watch", "nowhere.py"], tmp_path)
    assert code == 2 and "no such file or directory" in err
