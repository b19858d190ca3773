"""Never crash, never hang, never lose a finding: bad files, pathological sources, odd
file system entries, caches and command lines (issue 15). Each test names the case."""

import json
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

from shardcheck.analyzer.engine import check_source
from shardcheck.analyzer.inferred_types import infer_types, jit_calls
from shardcheck.cli import main

ROOT = pathlib.Path(__file__).resolve().parents[2]

BAD = textwrap.dedent('''\
    import jax
    import jax.numpy as jnp
    from jax.sharding import NamedSharding, PartitionSpec as P
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    x = jax.device_put(jnp.zeros((8, 16)), NamedSharding(mesh, P("batch", None)))
    ''')

# Each a file Python cannot decode, and what the SC001 message must name.
UNDECODABLE = {
    "latin1_comment.py": (b"# caf\xe9\nx = 1\n", "not valid UTF-8"),
    "bogus_cookie.py": (b"# -*- coding: bogus -*-\nx = 1\n", "unknown encoding 'bogus'"),
    "utf16.py": ("x = 1\n".encode("utf-16"), "UTF-16"),
    "bom_latin1_cookie.py": (b"\xef\xbb\xbf# -*- coding: latin-1 -*-\nx = 1\n", "byte-order mark"),
    "binary.py": (bytes(range(256)) * 4, "not valid UTF-8"),
}


def run(args, cwd, env=None):
    """``shardcheck ARGS`` in-process: (exit status, stdout, stderr)."""
    import io
    from contextlib import redirect_stderr, redirect_stdout
    out, err = io.StringIO(), io.StringIO()
    old = os.getcwd()
    os.chdir(cwd)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            try:
                code = main(list(args))
            except SystemExit as e:
                code = e.code
    finally:
        os.chdir(old)
    return code, out.getvalue(), err.getvalue()


def cli(args, cwd, timeout=300, env=None):
    """``shardcheck ARGS`` as a user runs it, in a fresh process with a time limit: a
    hang fails the test instead of blocking the suite."""
    r = subprocess.run([sys.executable, "-m", "shardcheck", *args], cwd=cwd, capture_output=True,
                       text=True, timeout=timeout, env=dict(os.environ, **(env or {})))
    return r.returncode, r.stdout, r.stderr


def codes(findings):
    return [f.code for f in findings]


# -- files Python cannot decode ------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(UNDECODABLE))
def test_an_undecodable_file_is_one_syntax_error_naming_the_encoding_problem(name):
    data, problem = UNDECODABLE[name]
    found = check_source(data, name)
    assert codes(found) == ["SC001"], found
    assert problem in found[0].message


def test_a_valid_coding_cookie_is_honoured():
    src = "# -*- coding: latin-1 -*-\n# caf\xe9\n".encode("latin-1") + BAD.encode()
    found = check_source(src, "latin.py")
    assert codes(found) == ["SC101"], found


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_undecodable_files_do_not_lose_the_other_files_findings(tmp_path, jobs):
    for name, (data, _) in UNDECODABLE.items():
        (tmp_path / name).write_bytes(data)
    for i in range(12):  # enough files for the parallel path
        (tmp_path / f"bad{i}.py").write_text(BAD)
    code, out, err = run(["check", ".", "--no-cache", "-j", jobs, "--format", "json"], tmp_path)
    assert code == 1 and "Traceback" not in err, err
    found = json.loads(out)
    by_file = {}
    for f in found:
        by_file.setdefault(f["filename"], []).append(f["code"])
    assert all(by_file[n] == ["SC001"] for n in UNDECODABLE), by_file
    assert all(by_file[f"bad{i}.py"] == ["SC101"] for i in range(12)), by_file


def test_types_reports_an_undecodable_file_and_goes_on(tmp_path):
    for name, (data, _) in UNDECODABLE.items():
        (tmp_path / name).write_bytes(data)
    (tmp_path / "good.py").write_text("import jax.numpy as jnp\ny = jnp.zeros((4, 2))\n")
    code, out, err = run(["types", "."], tmp_path)
    assert code == 2 and "Traceback" not in err
    for name, (_, problem) in UNDECODABLE.items():
        assert f"{name}: this file" in err and problem in err
    assert "good.py:2:1: y: float32[4,2]" in out


# -- what CPython rejects, and what only a newer Python accepts ------------------------------
REJECTED = {
    "nul_in_docstring": 'def f():\n    """a\x00b"""\n',
    "500_nested_brackets": "x = " + "[" * 500 + "]" * 500 + "\n",
    "99_nested_withs": "".join("    " * i + f"with a{i}:\n" for i in range(99)) + "    " * 99 + "pass\n",
    "21_nested_for_loops": "".join("    " * i + f"for i{i} in x:\n" for i in range(21)) + "    " * 21 + "pass\n",
    "3000_nested_lambdas": "x = " + "lambda: " * 3000 + "1\n",  # CPython: MemoryError
    "assignment_to_literal": "1 = x\n",
    "return_outside_function": "return 1\n",
}


@pytest.mark.parametrize("name", sorted(REJECTED))
def test_what_cpython_rejects_is_a_syntax_error(name):
    src = REJECTED[name]
    with pytest.raises((SyntaxError, ValueError, MemoryError, RecursionError)):
        compile(src, name, "exec", dont_inherit=True)
    found = check_source(src, f"{name}.py")
    assert codes(found) == ["SC001"], found


def test_syntax_newer_than_the_running_python_is_still_checked():
    src = "type Vector = list[float]\n\ndef first[T](xs: list[T]) -> T:\n    return xs[0]\n" + BAD
    found = check_source(src, "newer.py")
    assert codes(found) == ["SC101"], found  # analysed, not rejected


def test_a_type_parameter_default_is_newer_syntax_before_python_313():
    """PEP 696 (3.13): 3.11 and 3.12 reject ``[T = int]``; the file is still checked."""
    src = "class Box[T = int]:\n    pass\n\ndef first[*Ts = *tuple[int]](x): ...\n" + BAD
    found = check_source(src, "defaults.py")
    assert codes(found) == ["SC101"], found


# -- deep nesting CPython compiles ---------------------------------------------------------
DEEP = {
    "500_link_attribute_chain": "y = a" + ".b" * 500 + "\n",
    "1000_term_sum": "y = " + " + ".join(["1"] * 1000) + "\n",
    "1000_elifs": "if a == 0:\n    pass\n" + "".join(f"elif a == {i}:\n    pass\n" for i in range(1, 1000)),
    "10000_term_and": "y = " + " and ".join(["a"] * 10000) + "\n",
}


@pytest.mark.parametrize("name", sorted(DEEP))
def test_deep_nesting_cpython_compiles_is_analysed_not_an_internal_error(name):
    src = DEEP[name]
    compile(src, name, "exec", dont_inherit=True)
    found = check_source(BAD + src, f"{name}.py")
    assert codes(found) == ["SC101"], found  # the rest of the file is still checked
    assert infer_types(BAD + src, f"{name}.py") is not None


# On Python 3.12 libcst cannot print (nor place findings in) chains of ~740 links: those
# statements are analysed as unknown, on the same rows, and the rest of the file is checked.
def test_statements_too_deep_for_libcst_become_pass_on_the_same_rows():
    from shardcheck.analyzer.deep import blank_deep_statements
    src = ("import jax\n"
           "def f(a):\n"
           "    y = 1; z = a" + ".b" * 800 + "\n"
           "    return y\n"
           "@jax.jit\n"
           "def g(b):\n"
           "    if b == 0:\n"
           "        pass\n"
           + "".join(f"    elif b == {i}:  # é\n        pass\n" for i in range(1, 800))
           + "    return b\n")
    flat = blank_deep_statements(src, 500)
    assert flat is not None and len(flat.splitlines()) == len(src.splitlines())
    lines = flat.splitlines()
    assert lines[2] == "    y = 1; pass"  # only the deep statement of its row
    assert lines[6] == "    pass" and all(not ln.strip() for ln in lines[7:-1])
    assert lines[:2] + lines[3:6] + lines[-1:] == (src.splitlines()[:2] + src.splitlines()[3:6]
                                                   + ["    return b"])
    compile(flat, "flat.py", "exec")
    assert blank_deep_statements(src, 5000) is None  # nothing that deep


def test_a_file_whose_analysis_runs_out_of_recursion_is_analysed_without_its_deep_statements():
    """Forced on any Python: the first analysis raises RecursionError as 3.12 does."""
    from shardcheck.analyzer import engine
    src = BAD + DEEP["1000_elifs"] + BAD.replace("x =", "x2 =")
    seen = []

    def analyse(source, *rest):
        seen.append(source)
        if len(seen) == 1:
            try:
                raise RecursionError("maximum recursion depth exceeded")
            except RecursionError:
                raise KeyError("what libcst's position provider raises while unwinding")  # noqa: B904 (implicit context, as libcst)
        return engine._findings(source, *rest)

    from shardcheck.analyzer.deep import degrading_deep_statements
    findings, _ = degrading_deep_statements(
        analyse, src, "x.py", engine.Config(), None, None, set(engine.Config().enabled_codes()))
    assert len(seen) == 2 and "elif" not in seen[1]
    rows = BAD.count("\n")
    assert [(f.code, f.row) for f in findings] == [("SC101", rows), ("SC101", 2 * rows + 2000)]


# -- a mesh axis of size 0 -----------------------------------------------------------------
ZERO_MESH = textwrap.dedent('''\
    import jax
    import jax.numpy as jnp
    from jax.sharding import NamedSharding, PartitionSpec as P
    mesh = jax.make_mesh((0,), ("data",))
    x = jax.device_put(jnp.zeros((8, 16)), NamedSharding(mesh, P("data", None)))
    y = x.reshape(2, 4, 16)
    f = jax.shard_map(lambda a: a, mesh=mesh, in_specs=P("data"), out_specs=P("data"))
    z = f(x)
    g = jax.shard_map(lambda a: jax.lax.all_gather(a, "data", tiled=True), mesh=mesh,
                      in_specs=P("data"), out_specs=P("data"))
    w = jax.jit(g)(x)
    ''')


def test_a_mesh_axis_of_size_0_is_a_finding_not_a_crash():
    found = check_source(ZERO_MESH, "zero.py")
    assert codes(found) == ["SC108"], found
    assert found[0].row == 4 and "size 0" in found[0].message
    infer_types(ZERO_MESH, "zero.py")  # `types` and `confirm --mesh` read these
    jit_calls(ZERO_MESH, "zero.py")


def test_an_abstract_mesh_of_size_0_is_a_finding():
    src = "import jax\nm = jax.sharding.AbstractMesh((2, 0), ('a', 'b'))\n"
    found = check_source(src, "zero.py")
    assert codes(found) == ["SC108"] and "'b' has size 0" in found[0].message


# -- suppression comments ------------------------------------------------------------------
def _line5(comment):
    return BAD.rstrip("\n") + "  " + comment + "\n"


@pytest.mark.parametrize("comment", ["# noqa", "# NOQA", "# NOQA: SC101", "# noqa:sc101",
                                     "# noqa: E501, SC101", "# Shardcheck: Ignore[SC101]"])
def test_noqa_forms_ruff_honours_are_honoured(comment):
    assert check_source(_line5(comment), "x.py") == []


def test_noqa_with_other_tools_codes_does_not_suppress():
    assert codes(check_source(_line5("# noqa: E501"), "x.py")) == ["SC101"]


def test_an_unknown_code_in_ignore_is_reported():
    found = check_source(_line5("# shardcheck: ignore[SC999]"), "x.py")
    assert codes(found) == ["SC101", "SC004"], found
    assert "'SC999'" in found[1].message and found[1].severity == "warning"


def test_a_suppression_inside_a_string_is_not_a_comment():
    src = BAD.rstrip("\n") + '; s = "# shardcheck: ignore[SC999] # noqa"\n'
    assert codes(check_source(src, "x.py")) == ["SC101"]


# -- file system entries -------------------------------------------------------------------
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_in_a_checked_directory_is_skipped_not_waited_on(tmp_path):
    os.mkfifo(tmp_path / "pipe.py")
    (tmp_path / "bad.py").write_text(BAD)
    code, out, err = cli(["check", ".", "--no-cache"], tmp_path, timeout=120)
    assert code == 1, out + err
    assert "pipe.py:1:1: SC003 warning: this file was not analysed: it is a FIFO" in out
    assert "bad.py:5:" in out and "SC101" in out


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_named_on_the_command_line_is_skipped(tmp_path):
    os.mkfifo(tmp_path / "pipe.py")
    code, out, err = cli(["check", "pipe.py", "--no-cache"], tmp_path, timeout=120)
    assert code == 0 and "SC003" in out and "FIFO" in out and "no such file" not in err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_in_the_cache_is_a_miss(tmp_path):
    (tmp_path / "bad.py").write_text(BAD)
    cache = tmp_path / "cache"
    assert run(["check", ".", "--cache-dir", str(cache)], tmp_path)[0] == 1
    entries = list(cache.rglob("*.json"))
    assert len(entries) == 1
    entries[0].unlink()
    os.mkfifo(entries[0])
    code, out, err = cli(["check", "bad.py", "--cache-dir", str(cache), "-v"],
                         tmp_path, timeout=120)
    assert code == 1 and "SC101" in out and "(0 from cache)" in err


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_dangling_symlinks_and_loops_are_read_errors_not_internal_errors(tmp_path):
    os.symlink("nowhere.py", tmp_path / "dangling.py")
    os.symlink("loop.py", tmp_path / "loop.py")
    (tmp_path / "bad.py").write_text(BAD)
    code, out, err = run(["check", ".", "--no-cache"], tmp_path)
    assert code == 1 and "SC002" not in out and "Traceback" not in err
    assert "dangling.py:1:1: SC003" in out and "dangling symlink (to 'nowhere.py'" in out
    assert "loop.py:1:1: SC003" in out and "symlink loop" in out
    # named on the command line: the same reason, not "no such file or directory"
    code, out, err = run(["check", "dangling.py", "loop.py", "--no-cache"], tmp_path)
    assert code == 0 and "no such file" not in err
    assert out.count("SC003") == 2


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                    reason="root reads files without read permission")
def test_an_unreadable_file_is_a_read_error_not_an_internal_error(tmp_path):
    p = tmp_path / "secret.py"
    p.write_text(BAD)
    p.chmod(0)
    try:
        code, out, err = run(["check", ".", "--no-cache"], tmp_path)
    finally:
        p.chmod(0o644)
    assert "SC002" not in out and "secret.py:1:1: SC003" in out and "ermission denied" in out


def test_read_errors_are_worded_for_the_user():
    import errno

    from shardcheck.analyzer.sources import read_error
    assert "cannot be read: Permission denied" in read_error(
        "x.py", PermissionError(errno.EACCES, "Permission denied"))
    assert "symlink loop" in read_error("x.py", OSError(errno.ELOOP, "Too many levels"))


# -- discovery ----------------------------------------------------------------------------
def test_a_gitignored_directory_named_on_the_command_line_is_checked(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("gen/\n")
    (tmp_path / "gen").mkdir()
    (tmp_path / "gen" / "b.py").write_text(BAD)
    code, out, _ = run(["check", "gen/", "--no-cache"], tmp_path)
    assert code == 1 and "gen/b.py:5:" in out
    code, out, _ = run(["check", ".", "--no-cache"], tmp_path)  # walked into: still ignored
    assert code == 0 and "(0 files)" in out


def test_force_exclude_applies_exclude_to_named_files(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.shardcheck]\nexclude = ['broken/']\n")
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "b.py").write_text(BAD)
    (tmp_path / "a.py").write_text(BAD)
    assert run(["check", "broken/b.py", "--no-cache"], tmp_path)[0] == 1  # named: checked
    code, out, _ = run(["check", "--force-exclude", "broken/b.py", "a.py", "--no-cache"], tmp_path)
    assert code == 1 and "a.py:5:" in out and "broken/b.py" not in out


def test_the_pre_commit_hook_uses_force_exclude():
    hooks = (ROOT / ".pre-commit-hooks.yaml").read_text()
    entry = next(line for line in hooks.splitlines() if line.strip().startswith("entry:"))
    assert entry.split(":", 1)[1].split() == ["shardcheck", "check", "--force-exclude"]
    # pre-commit names the repo's own examples/broken/ files: the hook passes them
    broken = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "examples/broken").glob("*.py"))
    code, out, _ = run(["check", "--force-exclude", "--no-cache", *broken[:3]], ROOT)
    assert code == 0, out


# -- the command line ----------------------------------------------------------------------
@pytest.mark.parametrize("jobs", ["0", "-1", "100000"])
def test_jobs_out_of_range_is_a_usage_error(tmp_path, jobs):
    (tmp_path / "a.py").write_text("x = 1\n")
    code, out, err = run(["check", "a.py", "-j", jobs], tmp_path)
    assert code == 2 and err.strip().count("\n") == 0 and "-j/--jobs must be from 1 to 1024" in err


def test_the_cache_never_goes_to_an_unrelated_working_directory(tmp_path):
    project = tmp_path / "elsewhere"
    project.mkdir()
    (project / "a.py").write_text(BAD)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    user_cache = tmp_path / "user_cache"
    code, _, _ = cli(["check", str(project / "a.py")], cwd, env={"XDG_CACHE_HOME": str(user_cache)})
    assert code == 1
    assert not (cwd / ".shardcheck_cache").exists() and not (project / ".shardcheck_cache").exists()
    assert list((user_cache / "shardcheck").rglob("*.json"))  # no project root: the user's cache
    (project / ".git").mkdir()  # a checkout: its root
    cli(["check", str(project / "a.py")], cwd, env={"XDG_CACHE_HOME": str(user_cache)})
    assert (project / ".shardcheck_cache").is_dir() and not (cwd / ".shardcheck_cache").exists()


def test_cache_dir_in_the_config_is_relative_to_the_config(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.shardcheck]\ncache-dir = 'build/cache'\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text(BAD)
    assert run(["check", "a.py"], tmp_path / "src")[0] == 1
    assert (tmp_path / "build" / "cache").is_dir() and not (tmp_path / "src" / "build").exists()


WRONG_SHAPES = ["null", "[]", "1", '"x"', '{"findings": [1], "deps": {}}',
                '{"findings": [], "deps": []}', '{"findings": {}, "deps": {}}',
                '{"findings": [{"code": 1}], "deps": {}}', '{"deps": {}}',
                '{"findings": [], "deps": {"a.py": 5}}', "[[[[[[[[[[[[[[", "\x00\xff"]


@pytest.mark.parametrize("entry", WRONG_SHAPES)
def test_a_wrong_shape_or_corrupt_cache_entry_is_a_miss(tmp_path, entry):
    (tmp_path / "bad.py").write_text(BAD)
    cache = tmp_path / "cache"
    assert run(["check", ".", "--cache-dir", str(cache)], tmp_path)[0] == 1
    (path,) = cache.rglob("*.json")
    path.write_bytes(entry.encode("utf-8", "surrogateescape"))
    for _ in range(2):  # the miss is re-checked and rewritten; both runs are right
        code, out, err = run(["check", ".", "--cache-dir", str(cache)], tmp_path)
        assert code == 1 and "bad.py:5:" in out and "Traceback" not in err


def test_a_finding_with_wrong_field_types_in_the_cache_is_a_miss(tmp_path):
    (tmp_path / "bad.py").write_text(BAD)
    cache = tmp_path / "cache"
    run(["check", ".", "--cache-dir", str(cache)], tmp_path)
    (path,) = cache.rglob("*.json")
    entry = json.loads(path.read_text())
    entry["findings"][0]["location"]["row"] = "five"
    path.write_text(json.dumps(entry))
    code, out, _ = run(["check", ".", "--cache-dir", str(cache), "--format", "json"], tmp_path)
    assert code == 1 and json.loads(out)[0]["location"]["row"] == 5


@pytest.mark.parametrize("related", ["x", [1], [{"message": 1}], [{
    "message": "m", "filename": "f.py", "location": {"row": "1", "column": 1},
    "end_location": {"row": 1, "column": 2}}]])
def test_a_finding_with_wrong_related_locations_in_the_cache_is_a_miss(tmp_path, related):
    (tmp_path / "bad.py").write_text(BAD)
    cache = tmp_path / "cache"
    run(["check", ".", "--cache-dir", str(cache)], tmp_path)
    (path,) = cache.rglob("*.json")
    entry = json.loads(path.read_text())
    entry["findings"][0]["related"] = related
    path.write_text(json.dumps(entry))
    code, out, err = run(["check", ".", "--cache-dir", str(cache), "--format", "json"], tmp_path)
    assert code == 1 and "Traceback" not in err
    assert all(isinstance(r["location"]["row"], int) for f in json.loads(out) for r in f["related"])


# -- --mesh: no follow-on findings ---------------------------------------------------------
def test_check_at_production_scale_reports_no_follow_on_declaration_conflicts():
    code, out, err = run(["check", "--no-cache", "--mesh", "data=64,model=8", "examples/"], ROOT)
    assert code == 1 and "Traceback" not in err
    reported = {line.split(" ")[1] for line in out.splitlines() if ": SC" in line}
    assert reported == {"SC104"}, out
    assert "512@data" not in out


SCALE_LOCAL = textwrap.dedent('''\
    import jax
    import jax.numpy as jnp
    from jax.sharding import PartitionSpec as P
    import sharding_types as st

    def body(xb):
        st.assert_sharding(xb, "float32[512,16]{V:(data,model)}")
        return xb

    @jax.jit
    def step(x):
        out = jax.shard_map(body, in_specs=P("data", "model"), out_specs=P("data", "model"))(x)
        return st.assert_sharding(out, "float32[1024@data,64@model]")

    mesh = jax.make_mesh((2, 4), ("data", "model"))
    with jax.set_mesh(mesh):
        x = jax.device_put(jnp.zeros((1024, 64)), P("data", "model"))
        step(x)
    ''')


def test_at_scale_a_local_type_that_breaks_is_reported_but_not_its_global_echo(tmp_path):
    (tmp_path / "prog.py").write_text(SCALE_LOCAL)
    assert run(["check", "prog.py", "--no-cache"], tmp_path)[0] == 0  # right on 8 devices
    code, out, _ = run(["check", "prog.py", "--no-cache", "--mesh", "data=64,model=8"], tmp_path)
    # at 64x8 the body sees 16x8 blocks: its declared 512x16 really fails there ...
    assert code == 1 and "prog.py:7:" in out and "SC307" in out
    # ... but the output's global shape is the program's, 1024: no finding at line 13
    assert "prog.py:13:" not in out, out


# -- budgets -------------------------------------------------------------------------------
# The slow and big files use a sharding API: a file that uses none is never analysed
# (analyzer/precheck.py), so it could not run past a budget; nor could a statement that
# uses none (it is not parsed: analyzer/relevance.py), so the slow sum reads PartitionSpec.
SHARDING_IMPORT = "from jax.sharding import PartitionSpec\n"
# Five sums of 1,500 terms take about 2 s to analyse on 2 cores, on 3.11 and 3.12 (one
# such sum took 0.35 s once the analysis got faster, under the 0.5 s budget below; one
# sum of 3,000 terms is deeper than CPython 3.12 compiles, a syntax-error there), so the
# budget, not the machine, decides the test.
SLOW = SHARDING_IMPORT + "".join(f"y{i} = PartitionSpec + " + " + ".join(["a"] * 1500) + "\n"
                                 for i in range(5))


def test_a_file_past_the_time_budget_is_skipped_and_the_run_goes_on(tmp_path):
    (tmp_path / "slow.py").write_text(SLOW)
    (tmp_path / "bad.py").write_text(BAD)
    code, out, err = cli(["check", ".", "--no-cache", "--timeout-per-file", "0.5"], tmp_path)
    assert code == 1 and "Traceback" not in err
    assert "slow.py:1:1: SC003 warning: this file was not analysed: its analysis ran past " \
           "timeout-per-file (0.5 s); it is too large or too complex to analyse" in out
    assert "bad.py:5:" in out and "SC101" in out


def test_a_file_python_rejects_for_recursion_is_the_error_python_gives_not_a_skip(tmp_path):
    """The analysis raises the recursion limit, and on 3.11 CPython's compiler scales its
    own depth check with it: a 100,000-term sum that `python deep.py` rejects compiled
    there, and libcst spent the whole time budget on it (reported as skipped)."""
    import time
    (tmp_path / "deep.py").write_text(
        SHARDING_IMPORT + "x = PartitionSpec(" + " + ".join(["1"] * 100_000) + ")\n")
    ran = subprocess.run([sys.executable, "deep.py"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120)
    assert "RecursionError: maximum recursion depth exceeded during compilation" in ran.stderr
    start = time.monotonic()
    code, out, _ = cli(["check", "--no-cache", "--timeout-per-file", "60", "deep.py"], tmp_path)
    assert code == 1 and time.monotonic() - start < 30
    assert "deep.py:1:1: SC001 error: this file is too deeply nested for Python to compile " \
        "(RecursionError: maximum recursion depth exceeded during compilation)" in out


@pytest.mark.slow  # a worker filling 150 MiB (7 s): CI's -m slow leg; the time budget's test is the default's
def test_a_file_past_the_memory_budget_is_skipped_and_the_run_goes_on(tmp_path):
    (tmp_path / "big.py").write_text(SHARDING_IMPORT + "".join(f"x{i} = {i}\n" for i in range(150_000)))
    (tmp_path / "bad.py").write_text(BAD)
    code, out, err = cli(["check", ".", "--no-cache", "--memory-per-file", "150MiB",
                          "--timeout-per-file", "0"], tmp_path)
    assert code == 1 and "Traceback" not in err
    assert "big.py:1:1: SC003 warning: this file was not analysed:" in out and "memory" in out
    assert "bad.py:5:" in out and "SC101" in out


# A run whose worker fails on crash.py, as the driver says: by dying (os._exit, a
# signal) or by an exception outside the rules. Workers are forked here (no JAX loaded),
# so they run the patched check_one.
_FAILING_WORKER = """
import os, signal, sys
from shardcheck.check import supervisor
from shardcheck.cli import main
how = sys.argv[1]
real = supervisor.check_one
def check_one(path, data=None):
    if path.endswith("crash.py"):
        if how == "exit":
            os._exit(3)
        if how == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        raise OverflowError("a bug of ours")
    return real(path, data)
supervisor.check_one = check_one
sys.exit(main(["check", "--no-cache", "-j", "2", "crash.py", "bad.py"]))
"""


@pytest.mark.parametrize("how,said", [
    ("exit", "its worker process died: exit status 3"),
    ("kill", "its worker process died: killed by signal 9, by the system's out-of-memory "
             "killer or another process"),
    ("raise", "OverflowError: a bug of ours"),
])
def test_a_worker_that_fails_is_an_internal_error_and_exit_2_not_a_skip(tmp_path, how, said):
    """Any worker death became a skipped-file warning and exit 0: with every worker
    failing (an OverflowError from a memory budget too large for setrlimit), a real
    SC101 disappeared and the run passed. ruff exits 2 on internal errors."""
    (tmp_path / "crash.py").write_text(BAD)
    (tmp_path / "bad.py").write_text(BAD)
    r = subprocess.run([sys.executable, "-c", _FAILING_WORKER, how], cwd=tmp_path,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert f"crash.py:1:1: SC002 error: shardcheck failed while checking this file ({said}), " \
        "so its findings are missing; please report it with this file [internal-error]" in r.stdout
    assert "bad.py:5:" in r.stdout and "SC101" in r.stdout  # the other file's findings stay


def test_files_are_checked_under_the_tuned_collector_and_the_caller_keeps_its_own(
        tmp_path, monkeypatch):
    import gc

    from shardcheck.check import runner, supervisor
    from shardcheck.analyzer.config import Config
    (tmp_path / "bad.py").write_text(BAD)
    seen = []
    real = supervisor.check_one
    monkeypatch.setattr(supervisor, "check_one",
                        lambda *a: seen.append(gc.get_threshold()) or real(*a))
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)  # Python's defaults
    try:
        config = Config(root=str(tmp_path))
        config.timeout_per_file = config.memory_per_file = 0  # in this process
        res = runner.run([str(tmp_path / "bad.py")], config, jobs=1)
        assert gc.get_threshold() == (700, 10, 10)
    finally:
        gc.set_threshold(*saved)
    assert [f.code for f in res.findings] == ["SC101"]
    assert seen == [supervisor.GC_THRESHOLD] == [(200_000, 30, 30)]


def test_the_budgets_are_configurable(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.shardcheck]\ntimeout-per-file = 0.5\n')
    (tmp_path / "slow.py").write_text(SLOW)
    code, out, _ = cli(["check", ".", "--no-cache"], tmp_path)
    assert code == 0 and "timeout-per-file (0.5 s)" in out


def test_a_large_generated_file_is_skipped_by_default_with_a_note(tmp_path):
    marker = "# Generated by the protocol buffer compiler.  DO NOT EDIT!\n"
    (tmp_path / "big_pb2.py").write_text(marker + BAD + "X = 1\n" * 100_000)  # 600 KB
    (tmp_path / "small.py").write_text("# @generated\n" + BAD + "X = 1\n" * 300)  # 2 KB
    code, out, _ = run(["check", ".", "--no-cache"], tmp_path)
    assert code == 1 and "big_pb2.py:1:1: SC003" in out and "generated-size-limit (512 KiB)" in out
    assert "small.py:6:" in out and "SC101" in out  # under the limit: checked
    (tmp_path / "big_pb2.py").unlink()
    (tmp_path / "pyproject.toml").write_text("[tool.shardcheck]\ngenerated-size-limit = '1KiB'\n")
    code, out, _ = run(["check", ".", "--no-cache"], tmp_path)
    assert code == 0 and "small.py:1:1: SC003" in out
    (tmp_path / "pyproject.toml").write_text("[tool.shardcheck]\ngenerated-size-limit = 0\n")
    code, out, _ = run(["check", ".", "--no-cache"], tmp_path)
    assert code == 1 and "small.py:6:" in out  # 0: every generated file is checked


# -- dogfood ------------------------------------------------------------------------------
@pytest.mark.slow  # every file of the repository, tests included: CI's `-m slow` leg
def test_shardcheck_passes_on_its_own_repository(tmp_path):
    code, out, err = cli([".", "--cache-dir", str(tmp_path / "cache")], ROOT, timeout=900)
    assert code == 0, out + err


# -- the docs' promises, as written -------------------------------------------------------
README = " ".join(" ".join(p.read_text(encoding="utf-8") for p in
                           [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]).split())


def test_readme_a_named_path_is_always_checked(tmp_path):
    assert "a file or directory named on the command line is always checked" in README
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("ignored_dir/\nignored_file.py\n")
    (tmp_path / "pyproject.toml").write_text(
        "[tool.shardcheck]\nexclude = ['excluded_dir/', 'excluded_file.py']\n")
    for name in ("ignored_dir/a.py", "ignored_file.py", "excluded_dir/b.py", "excluded_file.py"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(BAD)
    assert run(["check", ".", "--no-cache"], tmp_path)[0] == 0  # walked: all four skipped
    for named in ("ignored_dir", "ignored_dir/", "ignored_file.py", "excluded_dir",
                  "excluded_file.py"):
        code, out, _ = run(["check", named, "--no-cache"], tmp_path)
        assert code == 1 and "SC101" in out, named


def test_readme_a_file_that_does_not_parse_is_one_finding_and_the_run_goes_on(tmp_path):
    assert "A file that does not parse is one `syntax-error` finding and the run goes on" in README
    (tmp_path / "broken.py").write_text("def f(:\n    pass\n" + BAD)
    (tmp_path / "binary.py").write_bytes(bytes(range(256)))
    (tmp_path / "bad.py").write_text(BAD)
    code, out, err = run(["check", ".", "--no-cache", "--format", "json"], tmp_path)
    found = json.loads(out)
    assert code == 1 and "Traceback" not in err
    assert [(f["filename"], f["code"]) for f in found] == [
        ("bad.py", "SC101"), ("binary.py", "SC001"), ("broken.py", "SC001")]


def test_readme_a_bad_key_is_a_clear_error_exit_2(tmp_path):
    assert "A bad key, selector, size or TOML file is a clear error (exit 2)" in README
    (tmp_path / "pyproject.toml").write_text("[tool.shardcheck]\nselct = ['SC1']\n")
    (tmp_path / "a.py").write_text("x = 1\n")
    code, out, err = run(["check", "a.py"], tmp_path)
    assert code == 2 and out == "" and err == (
        "shardcheck: config error: unknown key 'selct' in [tool.shardcheck]; known keys: "
        + ", ".join(__import__("shardcheck.check.config", fromlist=["x"]).KNOWN_KEYS) + "\n")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_types_and_imports_never_wait_on_a_fifo(tmp_path):
    os.mkfifo(tmp_path / "pipe.py")
    os.symlink("nowhere.py", tmp_path / "dangling.py")
    (tmp_path / "user.py").write_text("import pipe\nimport dangling\nimport jax.numpy as jnp\n"
                                      "y = jnp.zeros((4, 2))\n")
    code, out, err = cli(["types", "."], tmp_path, timeout=120)
    assert code == 2 and "Traceback" not in err
    assert "pipe.py: not analysed: it is a FIFO" in err and "dangling symlink" in err
    assert "user.py:4:1: y: float32[4,2]" in out
    code, out, err = cli(["check", ".", "--no-cache", "--timeout-per-file", "0"], tmp_path,
                         timeout=120)
    assert code == 0 and out.count("SC003") == 2 and "user.py" not in out
