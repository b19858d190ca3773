"""Baseline files (``--write-baseline``, ``--baseline``, ``baseline =``): adopting
shardcheck on a codebase with findings, then holding new code to the rules."""

import json
import os
import subprocess
import sys

BAD = ("import jax\nfrom jax import P\nmesh = jax.make_mesh((8,), ('data',))\n"
       "s = jax.NamedSharding(mesh, P('dta'))\n")
TYPO2 = "t = jax.NamedSharding(mesh, P('daata'))\n"


def _run(args, cwd, stdin=None):
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR",)}
    r = subprocess.run([sys.executable, "-m", "shardcheck", *args], cwd=cwd, env=env,
                       capture_output=True, text=True, timeout=120, input=stdin)
    return r.returncode, r.stdout, r.stderr


def test_write_then_only_new_findings_fail(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text(BAD)
    code, _, err = _run(["check", "pkg", "--no-cache", "--write-baseline", "base.json"], tmp_path)
    assert code == 0 and "Wrote 1 finding(s)" in err
    doc = json.loads((tmp_path / "base.json").read_text())
    assert doc["shardcheck-baseline"] == 1
    (entry,) = doc["findings"]
    assert (entry["filename"], entry["code"], entry["line"]) == \
        ("pkg/a.py", "SC101", "s = jax.NamedSharding(mesh, P('dta'))")

    code, out, err = _run(["check", "pkg", "--no-cache", "--baseline", "base.json"], tmp_path)
    assert code == 0 and "All checks passed" in out and "1 finding(s) hidden" in err

    # code moved down two lines: still hidden; a new mistake is reported
    (tmp_path / "pkg" / "a.py").write_text("# moved\n\n" + BAD + TYPO2)
    code, out, _ = _run(["check", "pkg", "--no-cache", "--baseline", "base.json",
                         "--format", "json"], tmp_path)
    (new,) = json.loads(out)
    assert code == 1 and new["location"]["row"] == 7 and "'daata'" in new["message"]

    # a second copy of the baselined line is a new finding too
    (tmp_path / "pkg" / "a.py").write_text(BAD + BAD.splitlines()[-1] + "\n")
    code, out, _ = _run(["check", "pkg", "--no-cache", "--baseline", "base.json",
                         "--output-format", "concise", "-q"], tmp_path)
    assert code == 1 and out.count("SC101") == 1 and out.startswith("pkg/a.py:5:")

    # fixed: the stale entry is said, with how to drop it
    (tmp_path / "pkg" / "a.py").write_text(BAD.replace("'dta'", "'data'"))
    code, out, err = _run(["check", "pkg", "--no-cache", "--baseline", "base.json"], tmp_path)
    assert code == 0 and "1 of its entries match nothing now" in err


def test_config_key_and_stdin_use_the_baseline_relative_to_the_config(tmp_path):
    (tmp_path / "a.py").write_text(BAD)
    (tmp_path / "pyproject.toml").write_text('[tool.shardcheck]\nbaseline = "ci/base.json"\n')
    (tmp_path / "ci").mkdir()
    assert _run(["check", "a.py", "--no-cache", "--write-baseline", "ci/base.json"], tmp_path)[0] == 0
    sub = tmp_path / "ci"
    code, out, _ = _run(["check", "../a.py", "--no-cache"], sub)  # found from the config
    assert code == 0 and "All checks passed" in out
    code, out, _ = _run(["check", "-", "--stdin-filename", "a.py"], tmp_path, stdin=BAD)
    assert code == 0 and "All checks passed" in out
    code, _, err = _run(["check", "-", "--write-baseline", "x.json"], tmp_path, stdin=BAD)
    assert code == 2 and "standard input" in err


def test_a_bad_baseline_is_a_clear_error(tmp_path):
    (tmp_path / "a.py").write_text(BAD)
    for content, said in [("{", "is not JSON"), ('{"findings": []}', "is not a shardcheck baseline"),
                          ('{"shardcheck-baseline": 1, "findings": [3]}', "an entry is not")]:
        (tmp_path / "b.json").write_text(content)
        code, out, err = _run(["check", "a.py", "--no-cache", "--baseline", "b.json"], tmp_path)
        assert code == 2 and said in err and "Traceback" not in err, err
    code, _, err = _run(["check", "a.py", "--no-cache", "--baseline", "missing.json"], tmp_path)
    assert code == 2 and "cannot read missing.json" in err


def test_writing_a_baseline_never_opens_a_fifo(tmp_path):
    """A FIFO named like a module is one skipped-file finding; recording it must not
    block on reading its line (the report's FIFO-safe line reader is shared)."""
    (tmp_path / "a.py").write_text(BAD)
    os.mkfifo(tmp_path / "pipe.py")
    code, _, err = _run(["check", ".", "--no-cache", "--write-baseline", "base.json"], tmp_path)
    assert code == 0 and "Wrote 2 finding(s)" in err
    codes = {e["code"] for e in json.loads((tmp_path / "base.json").read_text())["findings"]}
    assert codes == {"SC101", "SC003"}
