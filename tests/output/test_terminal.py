"""Colour and progress on a terminal (``shardcheck/output/terminal.py``): colour follows
NO_COLOR / FORCE_COLOR and the terminal; progress shows on a terminal's stderr for long
runs, never in CI or when piped; neither changes what the report says."""

import io
import os
import pty
import re
import subprocess
import sys

from shardcheck.check import runner
from shardcheck.analyzer.config import Config
from shardcheck.output.terminal import PROGRESS_FROM, progress, wants_colour

ANSI = re.compile(r"\x1b\[[0-9;]*m")
BAD = ("import jax\nfrom jax import P\nmesh = jax.make_mesh((8,), ('data',))\n"
       "s = jax.NamedSharding(mesh, P('dta'))\n")


def _check(args, cwd, env_extra, **kw):
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "CI")}
    env.update(env_extra)
    return subprocess.run([sys.executable, "-m", "shardcheck", "check", "--no-cache", *args],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=120, **kw)


def test_colour_is_forced_or_refused_and_never_changes_the_words(tmp_path):
    (tmp_path / "a.py").write_text(BAD)
    plain = _check(["a.py"], tmp_path, {})  # piped: no colour
    forced = _check(["a.py"], tmp_path, {"FORCE_COLOR": "1"})
    refused = _check(["a.py"], tmp_path, {"FORCE_COLOR": "1", "NO_COLOR": "1"})
    assert "\x1b[" not in plain.stdout and "\x1b[" not in refused.stdout
    assert "\x1b[1;31mSC101\x1b[0m" in forced.stdout  # an error's code in bold red
    assert ANSI.sub("", forced.stdout) == plain.stdout == refused.stdout
    assert plain.stdout.startswith("a.py:4:29: SC101 error: ")
    # only text reports are coloured
    as_json = _check(["a.py", "--format", "json"], tmp_path, {"FORCE_COLOR": "1"})
    assert "\x1b[" not in as_json.stdout


def test_the_color_flag_overrides_the_terminal_and_the_environment(tmp_path):
    (tmp_path / "a.py").write_text(BAD)
    always = _check(["a.py", "--color", "always"], tmp_path, {"NO_COLOR": "1"})  # piped too
    never = _check(["a.py", "--color", "never"], tmp_path, {"FORCE_COLOR": "1"})
    auto = _check(["a.py", "--color", "auto"], tmp_path, {"FORCE_COLOR": "1"})
    assert "\x1b[1;31mSC101\x1b[0m" in always.stdout and "\x1b[" in auto.stdout
    assert "\x1b[" not in never.stdout and ANSI.sub("", always.stdout) == never.stdout
    bad = _check(["a.py", "--color", "sometimes"], tmp_path, {})
    assert bad.returncode == 2 and "invalid choice: 'sometimes'" in bad.stderr


def test_wants_colour():
    class Tty(io.StringIO):
        def isatty(self):
            return True
    assert wants_colour(Tty(), {}) and not wants_colour(io.StringIO(), {})
    assert not wants_colour(Tty(), {"NO_COLOR": "1"}) and not wants_colour(Tty(), {"TERM": "dumb"})
    assert wants_colour(io.StringIO(), {"FORCE_COLOR": "1"})


def test_runner_reports_progress_to_the_total(tmp_path):
    files = []
    for i in range(5):
        (tmp_path / f"m{i}.py").write_text("x = 1\n")
        files.append(str(tmp_path / f"m{i}.py"))
    seen = []
    runner.run(files, Config(), jobs=1, progress=lambda done, total: seen.append((done, total)))
    assert seen[0] == (0, 5) and seen[-1] == (5, 5)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_progress_only_on_a_terminal_outside_ci_for_long_runs():
    class Tty(io.StringIO):
        def isatty(self):
            return True
    shown = Tty()
    with progress(PROGRESS_FROM, shown, {}) as update:
        update(PROGRESS_FROM, PROGRESS_FROM)
    assert f"{PROGRESS_FROM}/{PROGRESS_FROM}" in ANSI.sub("", shown.getvalue())
    for stream, env, total in [(Tty(), {"CI": "true"}, 100), (io.StringIO(), {}, 100),
                               (Tty(), {}, PROGRESS_FROM - 1)]:
        with progress(total, stream, env) as update:
            update(total, total)
        assert stream.getvalue() == ""


def test_check_shows_progress_on_a_terminal_stderr_only(tmp_path):
    for i in range(PROGRESS_FROM):
        (tmp_path / f"m{i}.py").write_text("import jax\nx = jax.numpy.ones((8,))\n")
    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "NO_COLOR", "FORCE_COLOR")}
    env["TERM"] = "xterm"
    r = subprocess.run([sys.executable, "-m", "shardcheck", "check", "--no-cache", "."],
                       cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=slave, timeout=120)
    os.close(slave)
    shown = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    os.close(master)
    assert r.returncode == 0
    assert f"/{PROGRESS_FROM} files".encode() in ANSI.sub("", shown.decode(errors="replace")).encode()
    assert r.stdout.decode().strip() == f"All checks passed ({PROGRESS_FROM} files)."
