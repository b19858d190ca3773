"""`shardcheck check`: formats, exit codes, config, suppression, cache, discovery."""

import io
import json
import os
import pathlib
import subprocess
import sys
import textwrap
from contextlib import redirect_stderr, redirect_stdout

import pytest

from shardcheck.cli import main

ROOT = pathlib.Path(__file__).resolve().parents[2]

BAD = textwrap.dedent('''\
    import jax
    import jax.numpy as jnp
    from jax.sharding import NamedSharding, PartitionSpec as P
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    x = jax.device_put(jnp.zeros((8, 16)), NamedSharding(mesh, P("batch", None)))
    ''')


def run(args, cwd):
    out, err = io.StringIO(), io.StringIO()
    old = os.getcwd()
    os.chdir(cwd)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            try:
                code = main(args)
            except SystemExit as e:  # argparse usage errors
                code = e.code
    finally:
        os.chdir(old)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def tree(tmp_path):
    def make(files, pyproject=None):
        for name, text in files.items():
            p = tmp_path / name
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(textwrap.dedent(text))
        if pyproject is not None:
            (tmp_path / "pyproject.toml").write_text(textwrap.dedent(pyproject))
        return tmp_path
    return make


def test_the_bundled_examples_are_clean_and_the_broken_ones_are_not():
    assert run(["examples/"], ROOT)[0] == 0
    code, out, _ = run(["check", "examples/broken/", "--no-cache"], ROOT)
    assert code == 1 and "unknown-mesh-axis" in out


def test_bare_paths_mean_check(tree):
    d = tree({"a.py": BAD})
    code, out, _ = run(["a.py", "--no-cache"], d)
    assert code == 1
    assert out.startswith("a.py:5:60: SC101 error: `P('batch', None)`")
    assert out.splitlines()[0].endswith("[unknown-mesh-axis]")


def test_json_fields(tree):
    d = tree({"a.py": BAD})
    code, out, _ = run(["a.py", "--format", "json", "--no-cache"], d)
    (f,) = json.loads(out)
    assert code == 1
    assert set(f) >= {"code", "name", "message", "severity", "filename", "location",
                      "end_location", "fix"}
    assert (f["code"], f["name"], f["severity"], f["filename"]) == (
        "SC101", "unknown-mesh-axis", "error", "a.py")
    assert f["location"] == {"row": 5, "column": 60} and f["fix"] is None


def test_output_format_takes_ruffs_spellings_of_the_machine_formats(tree):
    """`--output-format json` (ruff's flag) is `--format json`; so are sarif and github;
    `text` is `full`; the two flags disagreeing is a usage error, not a guess."""
    d = tree({"a.py": BAD})
    code, out, _ = run(["a.py", "--output-format", "json", "--no-cache"], d)
    assert code == 1 and json.loads(out)[0]["code"] == "SC101"
    code, out, _ = run(["a.py", "--output-format", "sarif", "--no-cache"], d)
    assert code == 1 and json.loads(out)["version"] == "2.1.0"
    code, out, _ = run(["a.py", "--output-format", "github", "--no-cache"], d)
    assert code == 1 and out.startswith("::error file=a.py,line=5,col=60")
    code, out, _ = run(["a.py", "--output-format", "text", "--no-cache"], d)
    assert code == 1 and "5 | x = jax.device_put" in out  # full: the code frame
    code, _, err = run(["a.py", "--format", "sarif", "--output-format", "json"], d)
    assert code == 2 and "--format sarif and --output-format json disagree" in err


def test_grouped_output_names_each_file_once_with_its_findings_under_it(tree):
    """ruff's ``--output-format grouped``: the file's name, then ``row:col: CODE ...``
    per finding (notes under it), a blank line between files, then the summary."""
    d = tree({"a.py": BAD, "b.py": BAD.replace('"batch"', '"modle"'), "ok.py": "x = 1\n"})
    code, out, _ = run(["a.py", "b.py", "ok.py", "--output-format", "grouped", "--no-cache"], d)
    lines = out.splitlines()
    assert code == 1 and lines[0] == "a.py:" and lines[1].startswith(
        "  5:60: SC101 error: `P('batch', None)`") and lines[1].endswith("[unknown-mesh-axis]")
    assert lines[2:4] == ["", "b.py:"] and "'modle'" in lines[4] and lines[5] == ""
    assert lines[6] == "Found 2 errors and 0 warnings in 2 of 3 files."
    code, out, _ = run(["a.py", "--output-format", "grouped", "-q", "--no-cache"], d)
    assert out.splitlines()[0] == "a.py:" and "Found" not in out
    code, out, _ = run(["ok.py", "--output-format", "grouped", "--no-cache"], d)
    assert code == 0 and out.strip() == "All checks passed (1 file)."
    from shardcheck.output.terminal import colour
    coloured = colour(run(["a.py", "--output-format", "grouped", "--no-cache"], d)[1])
    assert "\x1b[1;31mSC101" in coloured and "\x1b[1;4ma.py:" in coloured


def test_rule_is_explain_and_clean_removes_the_projects_cache(tree):
    d = tree({"a.py": BAD}, pyproject="[tool.shardcheck]\n")
    code, out, _ = run(["rule", "SC101"], d)
    assert code == 0 and out == run(["explain", "SC101"], d)[1] and "unknown-mesh-axis" in out
    assert run(["a.py"], d)[0] == 1 and (d / ".shardcheck_cache" / "v1").is_dir()
    code, _, err = run(["clean"], d)
    assert code == 0 and not (d / ".shardcheck_cache").exists() and "removed" in err
    assert run(["clean"], d)[:1] == (0,)  # nothing left: said, not an error
    (d / "pyproject.toml").write_text("[tool.shardcheck]\ncache-dir = 'src'\n")
    (d / "src").mkdir()
    (d / "src" / "model.py").write_text("x = 1\n")
    code, _, err = run(["clean"], d)  # a cache-dir set to the project's own files
    assert code == 2 and "not shardcheck's cache" in err and (d / "src" / "model.py").exists()


def test_sarif_is_valid_2_1_0_with_fingerprints(tree):
    d = tree({"a.py": BAD})
    code, out, _ = run(["a.py", "--format", "sarif", "--no-cache"], d)
    doc = json.loads(out)
    assert doc["version"] == "2.1.0" and "sarif-2.1.0" in doc["$schema"]
    run0 = doc["runs"][0]
    rules = run0["tool"]["driver"]["rules"]
    (res,) = run0["results"]
    assert rules[res["ruleIndex"]]["id"] == res["ruleId"] == "SC101"
    assert res["level"] == "error"
    loc = res["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == "a.py"
    assert loc["region"]["startLine"] == 5
    assert res["partialFingerprints"]["shardcheck/v1"].endswith(":1")
    # stable: the same input gives the same fingerprint
    again = json.loads(run(["a.py", "--format", "sarif", "--no-cache"], d)[1])
    assert again["runs"][0]["results"][0]["partialFingerprints"] == res["partialFingerprints"]
    assert all(r["id"].startswith("SC") and r["shortDescription"]["text"] for r in rules)


def test_github_annotations(tree):
    d = tree({"a.py": BAD})
    _, out, _ = run(["a.py", "--format", "github", "--no-cache"], d)
    assert out.startswith("::error file=a.py,line=5,col=60,endLine=5,endColumn=")
    assert "title=SC101 unknown-mesh-axis::" in out


def test_exit_zero_and_warnings_only(tree):
    d = tree({"a.py": BAD, "w.py": "import jax.experimental.pjit as pj\nf = pj.pjit\n"})
    assert run(["a.py", "--exit-zero", "--no-cache"], d)[0] == 0
    code, out, _ = run(["w.py", "--no-cache"], d)
    assert code == 0 and "warning" in out  # warnings do not fail the run


def test_select_ignore_by_code_prefix_and_name(tree):
    d = tree({"a.py": BAD})
    assert run(["a.py", "--ignore", "SC101", "--no-cache"], d)[0] == 0
    assert run(["a.py", "--ignore", "unknown-mesh-axis", "--no-cache"], d)[0] == 0
    assert run(["a.py", "--select", "SC4", "--no-cache"], d)[0] == 0
    assert run(["a.py", "--select", "SC1", "--no-cache"], d)[0] == 1
    code, _, err = run(["a.py", "--select", "SC9x", "--no-cache"], d)
    assert code == 2 and "unknown rule selector 'SC9x'" in err


def test_config_table(tree):
    d = tree({"a.py": BAD, "tests/t.py": BAD}, pyproject='''
        [tool.shardcheck]
        per-file-ignores = { "tests/**" = ["unknown-mesh-axis"] }
        ''')
    code, out, _ = run([".", "--no-cache"], d)
    assert code == 1 and "a.py" in out and "tests/t.py" not in out


@pytest.mark.parametrize("pyproject,message", [
    ("[tool.shardcheck]\nselcet = ['SC1']\n", "unknown key 'selcet'"),
    ("[tool.shardcheck]\nselect = 'SC1'\nignore = [1]\n", "ignore must be a list of strings"),
    ("[tool.shardcheck.meshes.prod]\ndata = 0\n", "positive integer size"),
    ("[tool.shardcheck]\ndefault-mesh = 'prod'\n", "default-mesh 'prod' is not one of"),
    ("[tool.shardcheck\n", "not valid TOML"),
    ("[tool.shardcheck.meshes.prod]\ndata = 8\naxis_types = 'fast'\n", "unknown axis type"),
])
def test_bad_config_is_a_clear_error(tree, pyproject, message):
    d = tree({"a.py": "x = 1\n"}, pyproject=pyproject)
    code, out, err = run(["a.py", "--no-cache"], d)
    assert code == 2 and message in err and "Traceback" not in err


def test_suppression_comments(tree):
    lines = BAD.splitlines()
    variants = [lines[4] + "  # noqa: SC101", lines[4] + "  # shardcheck: ignore[unknown-mesh-axis]",
                lines[4] + "  # shardcheck: ignore"]
    for v in variants:
        d = tree({"a.py": "\n".join(lines[:4] + [v]) + "\n"})
        assert run(["a.py", "--no-cache"], d)[0] == 0, v
    d = tree({"a.py": "\n".join(lines[:4] + [lines[4] + "  # noqa: SC102"]) + "\n"})
    assert run(["a.py", "--no-cache"], d)[0] == 1  # another code does not suppress it


def test_a_file_that_does_not_parse_does_not_stop_the_run(tree):
    d = tree({"a.py": BAD, "b.py": "def f(:\n"})
    code, out, err = run([".", "--no-cache"], d)
    assert code == 1 and "SC001" in out and "SC101" in out and "Traceback" not in out + err


def test_missing_path_and_unknown_rule(tree):
    d = tree({"a.py": "x = 1\n"})
    code, _, err = run(["nope/", "--no-cache"], d)
    assert code == 2 and "no such file" in err
    code, _, err = run(["explain", "SC999"], d)
    assert code == 2 and "unknown rule" in err
    code, _, err = run(["check", "--format", "xml"], d)
    assert code == 2 and "invalid choice" in err


def test_explain_and_rules():
    code, out, _ = run(["explain", "unknown-mesh-axis"], ROOT)
    assert code == 0 and out.startswith("SC101 unknown-mesh-axis (error)")
    for section in ("## What it does", "## Why is this bad?", "## Example", "Use instead:"):
        assert section in out
    code, out, _ = run(["rules", "--format", "json"], ROOT)
    assert {r["name"] for r in json.loads(out)} >= {"unknown-mesh-axis", "deprecated-api"}


def test_internal_error_is_reported_and_other_findings_kept(tree, monkeypatch):
    from shardcheck.analyzer.rule import ShardRule
    from shardcheck.analyzer.rules import all_rules

    class Crashes(ShardRule):
        """## What it does\nCrashes.\n"""
        CODE = "SC999"
        NAME = "crashes"

        def check(self, ctx):
            raise RuntimeError("boom")
    try:
        d = tree({"a.py": BAD})
        code, out, err = run(["a.py", "--no-cache"], d)
        assert code == 2
        assert "SC002 error: rule SC999 crashes crashed on this file (RuntimeError: boom" in out
        assert "SC101" in out and "Traceback" not in out + err
    finally:
        ShardRule.registry.pop("SC999")
    assert "SC999" not in all_rules()


def test_cache_makes_a_rerun_reuse_results_and_sees_changed_imports(tree):
    d = tree({"pkg/__init__.py": "", "pkg/meshes.py": '''
        import jax
        MESH = jax.make_mesh((2, 4), ("data", "model"))
        AXIS = "data"
        ''', "pkg/train.py": '''
        import jax
        import jax.numpy as jnp
        from jax.sharding import NamedSharding, PartitionSpec as P
        from pkg.meshes import MESH, AXIS
        x = jax.device_put(jnp.zeros((8, 16)), NamedSharding(MESH, P(AXIS, None)))
        '''})
    code, out, err = run([".", "-v"], d)
    assert code == 0 and "(0 from cache)" in err
    code, out, err = run([".", "-v"], d)
    assert code == 0 and "(3 from cache)" in err
    # the imported constant changes: train.py's cached result is stale and re-checked
    (d / "pkg/meshes.py").write_text(
        'import jax\nMESH = jax.make_mesh((2, 4), ("data", "model"))\nAXIS = "batch"\n')
    code, out, err = run([".", "-v"], d)
    assert code == 1 and "pkg/train.py:6" in out and "'batch'" in out
    assert "(1 from cache)" in err


def test_a_change_behind_a_packages_re_export_re_checks_every_file_that_uses_it(tree):
    """``from pkg import AXIS`` where ``pkg/__init__.py`` re-exports it from a submodule:
    every file that used it depends on the submodule, also the ones checked after the
    first read the package (one process keeps the modules it read)."""
    user = """
        import jax
        import jax.numpy as jnp
        from jax.sharding import NamedSharding, PartitionSpec as P
        from pkg import MESH, AXIS
        x = jax.device_put(jnp.zeros((8, 16)), NamedSharding(MESH, P(AXIS, None)))
        """
    d = tree({"pkg/__init__.py": "from .meshes import MESH, AXIS\n", "pkg/meshes.py": '''
        import jax
        MESH = jax.make_mesh((2, 4), ("data", "model"))
        AXIS = "data"
        ''', "a.py": user, "b.py": user, "c.py": "import pkg\n"})
    assert run([".", "-v", "-j", "1"], d)[0] == 0
    (d / "pkg/meshes.py").write_text(
        'import jax\nMESH = jax.make_mesh((2, 4), ("data", "model"))\nAXIS = "batch"\n')
    code, out, err = run([".", "-v", "-j", "1"], d)
    assert code == 1 and "a.py:6" in out and "b.py:6" in out and "'batch'" in out
    # c.py, which reads no name of the package, and pkg/__init__.py, which re-exports
    # the names and reads neither
    assert "(2 from cache)" in err


def test_declared_production_mesh_finds_what_8_devices_hide(tree):
    src = '''
        import jax
        import jax.numpy as jnp
        from jax.sharding import NamedSharding, PartitionSpec as P
        mesh = jax.make_mesh((jax.device_count() // 8, 8), ("data", "model"))
        batch = jax.device_put(jnp.zeros((96, 512)), NamedSharding(mesh, P("data", "model")))
        '''
    d = tree({"train.py": src})
    assert run(["train.py", "--no-cache"], d)[0] == 0  # sizes unknown: nothing proven
    d = tree({"train.py": src}, pyproject='''
        [tool.shardcheck.meshes.production]
        data = 64
        model = 8
        ''')
    code, out, _ = run(["train.py", "--no-cache"], d)
    assert code == 1 and "96 is not divisible by 64" in out and "production" in out


def test_default_mesh_checks_library_code(tree):
    lib = '''
        import jax
        from jax import P

        def shard_batch(x):
            return jax.device_put(x, P("dta", None))
        '''
    d = tree({"lib.py": lib})
    assert run(["lib.py", "--no-cache"], d)[0] == 0  # its callers are not in view
    d = tree({"lib.py": lib}, pyproject='''
        [tool.shardcheck]
        default-mesh = "production"
        [tool.shardcheck.meshes.production]
        data = 64
        model = 8
        ''')
    code, out, _ = run(["lib.py", "--no-cache"], d)
    assert code == 1 and "(did you mean 'data'?)" in out


def test_gitignore_and_exclude_are_honoured(tree):
    d = tree({"src/a.py": BAD, "gen/b.py": BAD, "vendor/c.py": BAD, ".gitignore": "gen/\n"},
             pyproject="[tool.shardcheck]\nexclude = ['vendor/']\n")
    (d / ".git").mkdir()
    code, out, _ = run([".", "--no-cache"], d)
    assert "src/a.py" in out and "gen/b.py" not in out and "vendor/c.py" not in out
    code, out, _ = run(["gen/b.py", "--no-cache"], d)  # a file named explicitly is checked
    assert code == 1


def test_parallel_run_matches_serial(tree):
    files = {f"m{i}.py": BAD if i % 3 == 0 else "import jax\nx = 1\n" for i in range(24)}
    d = tree(files)
    _, serial, _ = run([".", "--no-cache", "-j", "1", "--format", "json"], d)
    _, parallel, _ = run([".", "--no-cache", "-j", "2", "--format", "json"], d)
    assert json.loads(serial) == json.loads(parallel) and len(json.loads(serial)) == 8


def test_the_analyzer_never_imports_jax(tree):
    d = tree({"a.py": BAD})
    code = ("import sys\nfrom shardcheck.cli import main\n"
            f"rc = main(['check', {str(d / 'a.py')!r}, '--no-cache', '--format', 'json'])\n"
            "assert rc == 1\n"
            "assert not any(m == 'jax' or m.startswith('jax.') for m in sys.modules), 'jax imported'\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_types_prints_the_inferred_type_of_each_assignment():
    code, out, _ = run(["types", "examples/tensor_parallel_mlp.py"], ROOT)
    assert code == 0
    assert "examples/tensor_parallel_mlp.py:30:5: h: float32[128@data,256@model]" in out
    assert "examples/tensor_parallel_mlp.py:44:9: out: float32[128@data,64]" in out
    assert out.strip().endswith("have a known type (100%)")


def test_types_json_and_unknowns(tmp_path):
    src = tmp_path / "m.py"
    src.write_text("import jax.numpy as jnp\n\ndef f(i):\n    y = jnp.zeros((4, 2))\n"
                   "    z = y[i]\n    return z\n")
    code, out, _ = run(["types", str(src), "--format", "json", "--all"], tmp_path)
    assert code == 0
    data = json.loads(out)
    rows = {r["name"]: r for r in data["types"]}
    assert rows["y"]["type"] == "float32[4,2]"
    assert rows["z"]["type"] is None and rows["z"]["known"] == "float32[?]"  # i is unknown
    assert (data["known"], data["total"]) == (1, 2)


def test_types_on_bad_input_exits_2(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("x = (\n")
    code, _, err = run(["types", str(bad)], tmp_path)
    assert code == 2 and "does not parse" in err and "Traceback" not in err
    code, _, err = run(["types", str(tmp_path / "missing.py")], tmp_path)
    assert code == 2 and "no such file" in err


def test_sarif_carries_fixes_whose_replacements_give_the_fixed_file(tree):
    """SARIF `fixes` (§3.55): applying each replacement to the file gives what
    `check --fix` writes, for a move of several edits too."""
    src = ("import jax\nfrom jax.experimental.shard_map import shard_map\nfrom jax import P\n"
           "mesh = jax.make_mesh((8,), ('data',))\n"
           "f = shard_map(lambda b: b, mesh, P('data'), P('data'), check_rep=False)\n")
    d = tree({"a.py": src})
    doc = json.loads(run(["a.py", "--format", "sarif", "--no-cache"], d)[1])
    (res,) = [r for r in doc["runs"][0]["results"] if r.get("fixes")]
    (change,) = res["fixes"][0]["artifactChanges"]
    assert change["artifactLocation"]["uri"] == "a.py" and len(change["replacements"]) == 2
    lines = src.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    text = src
    for rep in sorted(change["replacements"], key=lambda r: (r["deletedRegion"]["startLine"],
                                                             r["deletedRegion"]["startColumn"]),
                      reverse=True):
        reg = rep["deletedRegion"]
        a = starts[reg["startLine"] - 1] + reg["startColumn"] - 1
        b = starts[reg["endLine"] - 1] + reg["endColumn"] - 1
        text = text[:a] + rep["insertedContent"]["text"] + text[b:]
    run(["a.py", "--fix", "--no-cache"], d)
    assert text == (d / "a.py").read_text()
    assert "jax.shard_map(lambda b: b, mesh=mesh" in text and "experimental" not in text
