"""``shardcheck check -``: a buffer on standard input (as editors and formatters pipe
it), named by ``--stdin-filename``; and ``--output-file``. Run as a user runs them."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

SRC = ('import jax\nfrom jax.sharding import NamedSharding, PartitionSpec as P\n'
       'mesh = jax.make_mesh((2, 4), ("data", "model"))\ns = NamedSharding(mesh, P("modle"))\n')


def _run(args, stdin="", cwd=None):
    r = subprocess.run([sys.executable, "-m", "shardcheck", "check", *args], input=stdin,
                       capture_output=True, text=True, cwd=cwd)
    return r.returncode, r.stdout, r.stderr


def test_a_buffer_is_checked_as_the_file_it_names(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.shardcheck]\nper-file-ignores = { "gen/**" = ["SC101"] }\n')
    (tmp_path / "pkg").mkdir()
    code, out, err = _run(["-", "--stdin-filename", "pkg/mod.py", "--format", "json"], SRC,
                          tmp_path)
    assert code == 1, err
    [f] = json.loads(out)
    assert (f["filename"], f["code"], f["location"]["row"]) == ("pkg/mod.py", "SC101", 4)
    # the same buffer named as a file the config exempts: per-file-ignores apply
    code, out, _ = _run(["-", "--stdin-filename", "gen/mod.py", "--format", "json"], SRC,
                        tmp_path)
    assert code == 0 and json.loads(out) == []


def test_a_buffer_with_no_name_and_bad_input(tmp_path):
    code, out, _ = _run(["-"], "x = (\n", tmp_path)
    assert code == 1 and out.startswith("-:1:") and "SC001" in out
    # a buffer's findings have no code frame: the file on disk is not the buffer
    (tmp_path / "mod.py").write_text("# an older version on disk\n" * 5)
    code, out, _ = _run(["-", "--stdin-filename", "mod.py"], SRC, tmp_path)
    assert code == 1 and len(out.splitlines()) == 2 and " | " not in out
    code, _, err = _run(["-", "a.py"], "", tmp_path)
    assert code == 2 and "cannot be mixed" in err and "Traceback" not in err
    code, _, err = _run(["-", "--fix"], SRC, tmp_path)
    assert code == 2 and "do not apply to standard input" in err


def test_force_exclude_skips_an_excluded_buffer(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.shardcheck]\nexclude = ["vendor/"]\n')
    code, out, _ = _run(["-", "--stdin-filename", "vendor/x.py", "--force-exclude"], SRC,
                        tmp_path)
    assert code == 0 and "SC101" not in out


def test_output_file(tmp_path):
    (tmp_path / "m.py").write_text(SRC)
    report = tmp_path / "report.sarif"
    code, out, _ = _run(["m.py", "--no-cache", "--format", "sarif", "--output-file",
                         str(report)], cwd=tmp_path)
    assert code == 1 and out == ""
    sarif = json.loads(report.read_text())
    assert sarif["runs"][0]["results"][0]["ruleId"] == "SC101"
    code, _, err = _run(["m.py", "--no-cache", "--output-file", str(tmp_path / "no" / "x")],
                        cwd=tmp_path)
    assert code == 2 and "cannot write --output-file" in err and "Traceback" not in err


def test_statistics_quiet_and_verbose(tmp_path):
    (tmp_path / "m.py").write_text(SRC + 's2 = NamedSharding(mesh, P("data", "data"))\n'
                                   's3 = NamedSharding(mesh, P("modle", None))\n')
    code, out, err = _run(["m.py", "--no-cache", "--statistics"], cwd=tmp_path)
    assert code == 1 and err == ""
    assert out.splitlines() == ["2  SC101      unknown-mesh-axis",
                                "1  SC102      duplicate-mesh-axis"]
    code, out, _ = _run(["m.py", "--no-cache", "--statistics", "--format", "json"], cwd=tmp_path)
    assert json.loads(out)[0] == {"code": "SC101", "name": "unknown-mesh-axis", "count": 2,
                                  "fixable": 0}
    code, out, _ = _run(["m.py", "--no-cache", "-q", "--output-format", "concise"],
                        cwd=tmp_path)
    assert code == 1 and len(out.splitlines()) == 3 and "Found" not in out
    code, out, _ = _run(["m.py", "--no-cache", "-q"], cwd=tmp_path)  # full: with frames
    lines = out.splitlines()
    assert len(lines) == 12 and lines[1:4] == [
        "  |", '4 | s = NamedSharding(mesh, P("modle"))', "  |                         ^^^^^^^^^^"]
    code, out, err = _run(["m.py", "--no-cache", "-v"], cwd=tmp_path)
    assert "Found 3 errors" in out and "checked 1 files (0 from cache)" in err


def test_show_settings_and_files(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.shardcheck]\nignore = ["SC107"]\nexclude = ["vendor/"]\n'
        '[tool.shardcheck.meshes.prod]\ndata = 64\nmodel = 8\n')
    (tmp_path / "cfg").mkdir()
    (tmp_path / "cfg" / "base.yml").write_text("logical_axis_rules: [['batch', 'data']]\n")
    (tmp_path / "vendor").mkdir()
    (tmp_path / "vendor" / "v.py").write_text("x = 1\n")
    (tmp_path / "a.py").write_text("x = 1\n")
    code, out, _ = _run([".", "--show-settings", "--no-cache"], cwd=tmp_path)
    settings = dict(line.split(" = ", 1) for line in out.splitlines())
    assert code == 0
    assert settings["config"].endswith("pyproject.toml")
    assert "SC107" not in settings["rules enabled"] and "SC101" in settings["rules enabled"]
    assert settings["meshes"] == "prod (data=64, model=8)"
    assert settings["logical axis rules"] == "1 from cfg/base.yml (discovered)"
    assert settings["cache-dir"] == "none (--no-cache)"
    code, out, _ = _run([".", "--show-files"], cwd=tmp_path)
    assert code == 0 and out.split() == ["a.py"]  # vendor/ is excluded


UNUSED = '''import jax
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ("data", "model"))
a = NamedSharding(mesh, P("modle"))  # shardcheck: ignore[SC101]
b = NamedSharding(mesh, P("data"))  # shardcheck: ignore[SC101]
c = NamedSharding(mesh, P("data"))  # noqa: SC102, E501
d = NamedSharding(mesh, P("data"))  # noqa
e = NamedSharding(mesh, P("modle"))  # shardcheck: ignore[unknown-mesh-axis, SC102]
f = 1  # shardcheck: ignore
g = NamedSharding(mesh, P("data"))  # noqa: SC107
'''


def test_warn_unused_ignores(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.shardcheck]\nignore = ["SC107"]\n')
    (tmp_path / "m.py").write_text(UNUSED)
    code, out, _ = _run(["m.py", "--format", "json"], cwd=tmp_path)
    assert code == 0 and json.loads(out) == []  # off by default
    code, out, _ = _run(["m.py", "--format", "json", "--warn-unused-ignores"], cwd=tmp_path)
    found = [(f["location"]["row"], f["code"], f["severity"]) for f in json.loads(out)]
    # used ones (rows 4, 8's name), bare/foreign noqa (7, 6's E501) and a code the config
    # does not enable (10) are left alone; the cache keys on the flag (the first run cached)
    assert found == [(5, "SC005", "warning"), (6, "SC005", "warning"), (8, "SC005", "warning"),
                     (9, "SC005", "warning")]
    assert code == 0
    (tmp_path / "pyproject.toml").write_text(
        '[tool.shardcheck]\nignore = ["SC107"]\nwarn-unused-ignores = "yes"\n')
    code, _, err = _run(["m.py"], cwd=tmp_path)
    assert code == 2 and "warn-unused-ignores must be true or false" in err


def test_add_noqa_adopts_a_codebase_at_zero_findings(tmp_path):
    import shutil
    from pathlib import Path
    broken = Path(__file__).resolve().parents[2] / "examples" / "broken"
    for f in broken.glob("*.py"):
        shutil.copy(f, tmp_path / f.name)
    code, out, _ = _run([".", "--no-cache", "--statistics", "--format", "json"], cwd=tmp_path)
    before = sum(r["count"] for r in json.loads(out))
    assert code == 1 and before >= 20
    code, out, err = _run([".", "--no-cache", "--add-noqa"], cwd=tmp_path)
    assert code == 0 and "All checks passed" in out, (out, err)
    assert "finding(s) remain" in err
    typo = (tmp_path / "unknown_axis_typo.py").read_text()
    assert "# shardcheck: ignore[SC101]" in typo
    for f in tmp_path.glob("*.py"):  # every file still compiles
        compile(f.read_text(), str(f), "exec")
    snapshot = {f.name: f.read_text() for f in tmp_path.glob("*.py")}
    code, _, err = _run([".", "--no-cache", "--add-noqa"], cwd=tmp_path)
    assert code == 0 and "Added 0 suppression" in err  # nothing left to add: unchanged
    assert snapshot == {f.name: f.read_text() for f in tmp_path.glob("*.py")}


def test_add_noqa_merges_and_never_writes_inside_a_string():
    from shardcheck.check.add_noqa import comment_lines
    from shardcheck.analyzer.ftypes import Finding
    text = ('a = f(1)  # shardcheck: ignore[SC101]\n'
            'b = g("""one\n'
            'two""")\n'
            'c = h(2)\n')

    def at(row, code):
        return Finding(code, "n", "m", "error", "x.py", row, 1, row, 2)

    new, n = comment_lines(text, [at(1, "SC102"), at(2, "SC101"), at(4, "SC103")])
    assert n == 2
    assert new.splitlines() == ['a = f(1)  # shardcheck: ignore[SC101, SC102]', 'b = g("""one',
                                'two""")', 'c = h(2)  # shardcheck: ignore[SC103]']


# Sums of 1,500 terms reading PartitionSpec (a file that reads no sharding API is never
# analysed): about 0.6 s each, so ten run far past a 0.5 s budget (one sum of 3,000 terms
# is deeper than CPython 3.12 compiles: a syntax error there, not a budget)
SLOW = "from jax.sharding import PartitionSpec\n" + "".join(
    f"y{i} = PartitionSpec + " + " + ".join(["a"] * 1500) + "\n" for i in range(10))
BIG = "from jax.sharding import PartitionSpec\n" + "".join(f"x{i} = {i}\n" for i in range(150_000))
GENERATED = "# Generated by the protocol buffer compiler.  DO NOT EDIT!\n" + SRC + "X = 1\n" * 300


@pytest.mark.slow  # six runs that wait on their budgets (6 s): CI's -m slow leg
def test_a_buffer_is_checked_under_the_budgets_of_check_file(tmp_path):
    """Each budget overrun (time, memory, the generated-file size limit) gives the
    skipped-file finding and exit status that `check FILE` gives for the same text."""
    (tmp_path / "pyproject.toml").write_text("[tool.shardcheck]\ngenerated-size-limit = '1KiB'\n")
    budgets = ["--timeout-per-file", "0.5", "--memory-per-file", "150MiB"]
    files = {"slow.py": (SLOW, budgets), "big.py": (BIG, ["--timeout-per-file", "0",
                                                         "--memory-per-file", "150MiB"]),
             "big_pb2.py": (GENERATED, budgets)}
    runs = {}
    for name, (text, flags) in files.items():  # at once: each waits on its budget
        (tmp_path / name).write_text(text)
        for how, where in (("stdin", ["-", "--stdin-filename", name]), ("file", [name])):
            runs[name, how] = subprocess.Popen(
                [sys.executable, "-m", "shardcheck", "check", "--no-cache", "--format", "json",
                 *flags, *where], cwd=tmp_path, text=True, stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    done = {}
    for (name, how), run in runs.items():
        out, err = run.communicate(files[name][0] if how == "stdin" else "", timeout=120)
        done[name, how] = (run.returncode, json.loads(out), "Traceback" in err)
    for name in files:
        assert done[name, "stdin"] == done[name, "file"], name
        code, [f], _ = done[name, "stdin"]
        assert (code, f["code"], f["filename"]) == (0, "SC003", name)
    assert "timeout-per-file (0.5 s)" in done["slow.py", "stdin"][1][0]["message"]
    assert "memory-per-file" in done["big.py", "stdin"][1][0]["message"]
    assert "generated-size-limit" in done["big_pb2.py", "stdin"][1][0]["message"]
