"""The shardcheck command: --version, --help and parse, through the installed script."""

import shutil
import subprocess
import sys

import sharding_types


def run(*args):
    exe = shutil.which("shardcheck")
    cmd = [exe, *args] if exe else [sys.executable, "-m", "shardcheck", *args]
    return subprocess.run(cmd, capture_output=True, text=True)


def test_version():
    r = run("--version")
    assert r.returncode == 0 and r.stdout.strip() == f"shardcheck {sharding_types.__version__}"


def test_help_shows_the_grammar():
    r = run("--help")
    assert r.returncode == 0
    assert "usage: shardcheck" in r.stdout and "grammar:" in r.stdout


def test_no_command_prints_help_and_exits_2():
    r = run()
    assert r.returncode == 2 and "usage: shardcheck" in r.stdout


def test_parse_prints_canonical_types():
    r = run("parse", "float32[ 8@data , 16@(x) ]", "~int32[]")
    assert r.returncode == 0
    assert r.stdout.splitlines() == ["float32[8@data,16@x]", "~int32[]"]


def test_parse_reports_errors_without_a_traceback():
    r = run("parse", "float32[8@,4]")
    assert r.returncode == 1
    assert "expected a mesh axis name after '@'" in r.stderr
    assert "Traceback" not in r.stderr


def test_unknown_option_is_a_usage_error():
    r = run("--frobnicate")
    assert r.returncode == 2 and "Traceback" not in r.stderr
