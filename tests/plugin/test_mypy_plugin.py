"""The mypy plugin, data-driven: each file under tests/mypy_cases marks the messages
mypy must print with ``# E: <text>`` (an error with code ``sharding``) or
``# N: <text>`` (a note) on the line; every other line must be clean. mypy runs
in-process through ``mypy.api``, once with the plugin and once without it.

Then the plugin as a user runs it: a scratch project outside the repository, with
``plugins = ["shardcheck.plugin"]`` and no ``mypy_path``, so that mypy finds
``sharding_types`` only through the README's install (``pip install -e .``).
"""

import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

mypy_api = pytest.importorskip("mypy.api")

ROOT = pathlib.Path(__file__).resolve().parents[2]
CASES = sorted((ROOT / "tests" / "mypy_cases").glob("*.py"))
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
BROKEN = ROOT / "examples" / "broken" / "annotated_layer_mismatch.py"
FIELDS = ROOT / "tests" / "mypy_cases" / "fields.py"
LINE = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+): (?P<kind>error|note): (?P<msg>.*)$")
MARK = re.compile(r"#\s*([EN]):\s*(.*)$")


PLUGIN = 'plugins = ["shardcheck.plugin"]\n'
# Every run here shares these, so that one cache serves them all (mypy keys its cache on
# per-module options and on `plugins`, not on `mypy_path`).
SHARED_OPTIONS = (
    "show_error_codes = true\ncheck_untyped_defs = true\nfollow_imports = \"silent\"\n"
    "[[tool.mypy.overrides]]\nmodule = [\"numpy.*\"]\nfollow_imports = \"skip\"\n")


def _config(tmp: pathlib.Path, plugin: bool) -> pathlib.Path:
    cfg = tmp / "pyproject.toml"
    cfg.write_text(
        "[tool.mypy]\n" + (PLUGIN if plugin else "") + f'mypy_path = "{ROOT}"\n' + SHARED_OPTIONS +
        "[tool.shardcheck.meshes.train]\ndata = 2\nmodel = 4\n")
    return cfg


def _run(tmp: pathlib.Path, files, plugin: bool, cache: pathlib.Path):
    cfg = _config(tmp, plugin)
    out, err, status = mypy_api.run([str(f) for f in files] + [
        "--config-file", str(cfg), "--cache-dir", str(cache), "--no-error-summary"])
    assert status in (0, 1), err + out
    found = {}
    for line in out.splitlines():
        m = LINE.match(line)
        if m:
            key = (pathlib.Path(m["path"]).name, int(m["line"]))
            found.setdefault(key, []).append((m["kind"], m["msg"]))
    return found, out


@pytest.fixture(scope="module")
def mypy_cache(tmp_path_factory):
    """One cache for the module's mypy runs: JAX's modules are analysed once."""
    return tmp_path_factory.mktemp("mypy_cache")


@pytest.fixture(scope="module")
def runs(tmp_path_factory, mypy_cache):
    tmp = tmp_path_factory.mktemp("mypy")
    cache = mypy_cache
    files = []
    for case in CASES:
        shutil.copy(case, tmp / case.name)
        files.append(tmp / case.name)
    files += EXAMPLES + [BROKEN]
    # With the plugin last, the cache it leaves is the one the user-install test reuses.
    return {False: _run(tmp, files, False, cache), True: _run(tmp, files, True, cache)}


def _expected(path: pathlib.Path):
    out = {}
    for i, line in enumerate(path.read_text().splitlines(), 1):
        m = MARK.search(line)
        if m:
            out[(path.name, i)] = ({"E": "error", "N": "note"}[m.group(1)], m.group(2).strip())
    return out


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.stem)
@pytest.mark.slow  # mypy over JAX's stubs, four runs: CI's -m slow leg
def test_plugin_reports_exactly_the_marked_lines(case, runs):
    found, out = runs[True]
    expected = _expected(case)
    got = {k: v for k, v in found.items() if k[0] == case.name}
    assert set(got) == set(expected), out
    for key, (kind, text) in expected.items():
        msgs = [m for k, m in got[key] if k == kind]
        assert any(text in m for m in msgs), (key, text, got[key])
        if kind == "error":
            assert all(m.endswith("[sharding]") for k, m in got[key] if k == "error"), got[key]


@pytest.mark.slow  # mypy over JAX's stubs, four runs: CI's -m slow leg
def test_examples_give_no_sharding_error_with_the_plugin(runs):
    found, out = runs[True]
    names = {p.name for p in EXAMPLES}
    assert [k for k in found if k[0] in names] == [], out


@pytest.mark.slow  # mypy over JAX's stubs, four runs: CI's -m slow leg
def test_the_broken_example_is_reported_at_its_marked_line(runs):
    found, out = runs[True]
    marked = [i for i, l in enumerate(BROKEN.read_text().splitlines(), 1) if "# error:" in l]
    got = {k[1]: v for k, v in found.items() if k[0] == BROKEN.name}
    assert list(got) == marked, out
    assert got[marked[0]][0][1].endswith("[sharding]")


@pytest.mark.slow  # mypy over JAX's stubs, four runs: CI's -m slow leg
def test_without_the_plugin_nothing_is_reported(runs):
    """Sharded[...] is typing.Annotated to a checker without the plugin: plain arrays,
    no errors; reveal_type shows the plain array type."""
    found, out = runs[False]
    errors = {k: v for k, v in found.items() if any(kind == "error" for kind, _ in v)}
    assert errors == {}, out
    notes = [m for k, v in found.items() for kind, m in v if kind == "note"]
    assert notes and all(m == 'Revealed type is "jax._src.basearray.Array"' for m in notes), notes


def test_nothing_else_in_shardcheck_imports_mypy():
    import subprocess
    import sys
    code = ("import sys, shardcheck.plugin, shardcheck.analyzer.engine, sharding_types;"
            "assert 'mypy' not in sys.modules, 'mypy imported'")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_field_cases_are_types_jax_prints():
    """fields.py's types (reduced, weak, host memory, ...) are ones JAX really prints."""
    from jax_snippets import run_snippets
    used = set(re.findall(r'Sharded\[jax\.Array, "([^"]+)"\]', FIELDS.read_text()))
    [result] = run_snippets([JAX_FIELD_VALUES])
    assert result["status"] == "ok", result
    assert used and used <= set(result["result"]), sorted(used - set(result["result"]))


JAX_FIELD_VALUES = """
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))
seen = []
with jax.set_mesh(mesh):
    plain = jax.device_put(jnp.zeros((8, 4)), P("data", None))
    host = jax.device_put(plain, NamedSharding(mesh, P("data", None), memory_kind="pinned_host"))
    weak = jnp.asarray(1.0) * 2
    for v in (plain, host, weak, jnp.float32(1.0), jnp.broadcast_to(weak, (8, 4))):
        seen.append(str(jax.typeof(v)))

    @jax.jit
    def inside(x, y, w):
        seen.append(str(jax.typeof(jax.sharding.reshard(x, P("data", None, reduced={"model"})))))
        seen.append(str(jax.typeof(jnp.dot(y, w, out_sharding=P("data", None, unreduced={"model"})))))
        return x

    inside(plain, jax.device_put(jnp.zeros((8, 4)), P("data", "model")),
           jax.device_put(jnp.ones((4, 4)), P("model", None)))
RESULT = seen
"""


# -- the plugin as a user runs it ----------------------------------------------------------
USER_PROGRAM = """\
import jax
from sharding_types import Sharded


def layer(x: Sharded[jax.Array, "float32[8@data,4]"]) -> None: ...


def caller(m: Sharded[jax.Array, "float32[8@model,4]"]) -> None:
    layer(m)
    reveal_type(m)
"""
WRONG_ARGUMENT = re.compile(
    r'^prog\.py:9: error: Sharding mismatch: argument "x" of "layer" declared '
    r'"float32\[8@data,4\]", got "float32\[8@model,4\]" \(.*\)  \[sharding\]$', re.M)


def _scratch_project(where: pathlib.Path, options: str = "") -> pathlib.Path:
    """A project of the user's: its program and a mypy config naming the plugin, no mypy_path."""
    where.mkdir(parents=True, exist_ok=True)
    (where / "pyproject.toml").write_text("[tool.mypy]\n" + PLUGIN + options)
    (where / "prog.py").write_text(USER_PROGRAM)
    return where


def _user_env() -> dict:
    """The environment without anything that would show mypy the repository."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MYPYPATH")}


def _assert_plugin_reported(out: str) -> None:
    assert 'module named "sharding_types"' not in out, (
        "mypy cannot find sharding_types through this install; reinstall with the "
        "README's command 1 (pip install -e '.[jax]')\n" + out)
    assert WRONG_ARGUMENT.search(out), out
    assert "prog.py:10: note: Revealed type is \"Literal['float32[8@model,4]']?\"" in out, out


def test_mypy_sees_sharding_types_through_the_readme_install(tmp_path, mypy_cache):
    """This environment's own ``pip install -e .`` (README command 1), seen by mypy run
    from a scratch project outside the repository: nothing else on its path."""
    project = _scratch_project(tmp_path / "user", SHARED_OPTIONS)
    r = subprocess.run([sys.executable, "-m", "mypy", "prog.py", "--cache-dir", str(mypy_cache)],
                       cwd=project, env=_user_env(), capture_output=True, text=True, timeout=600)
    assert r.returncode == 1, r.stdout + r.stderr
    _assert_plugin_reported(r.stdout)


INSTALL_TEST = "SHARDCHECK_TEST_INSTALL"


@pytest.mark.skipif(not os.environ.get(INSTALL_TEST),
                    reason=f"installs shardcheck and its dependencies into a fresh venv "
                           f"(minutes); set {INSTALL_TEST}=1 to run")
def test_readme_install_into_a_fresh_venv_gives_a_working_plugin(tmp_path):
    """README command 1's install, for real: a copy of the repository (so this checkout's
    own install is left alone), a new venv, ``pip install -e``, then mypy in a scratch
    project with only ``plugins = ["shardcheck.plugin"]``."""
    source = tmp_path / "shardcheck"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".git", ".venv*", "build", "*.egg-info", "__pycache__", ".*_cache"))
    venv = tmp_path / "user" / ".venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    bin_dir = venv / ("Scripts" if os.name == "nt" else "bin")
    env = _user_env()
    for args in (["-e", str(source)], ["mypy"]):
        r = subprocess.run([str(bin_dir / "pip"), "install", "-q", *args], env=env,
                           capture_output=True, text=True, timeout=1800)
        assert r.returncode == 0, r.stdout + r.stderr
    project = _scratch_project(tmp_path / "user")
    r = subprocess.run([str(bin_dir / "mypy"), "prog.py"], cwd=project, env=env,
                       capture_output=True, text=True, timeout=1800)
    assert r.returncode == 1, r.stdout + r.stderr
    _assert_plugin_reported(r.stdout)


@pytest.mark.slow  # mypy over JAX's stubs, three runs: CI's -m slow leg
def test_a_change_of_the_declared_meshes_is_seen_through_mypys_cache(tmp_path, mypy_cache):
    """The plugin reports what it read from [tool.shardcheck] (report_config_data):
    mypy re-checks a cached module when the meshes change, instead of repeating the
    answer the old meshes gave."""
    prog = tmp_path / "prog.py"
    prog.write_text('import jax\nfrom sharding_types import Sharded\n\n\n'
                    'def route(x: Sharded[jax.Array, "float32[8@expert]"]) -> None: ...\n')

    def check(axes: str):
        cfg = tmp_path / "pyproject.toml"
        cfg.write_text("[tool.mypy]\n" + PLUGIN + f'mypy_path = "{ROOT}"\n' + SHARED_OPTIONS +
                       f"[tool.shardcheck.meshes.train]\n{axes}\n")
        out, err, status = mypy_api.run([str(prog), "--config-file", str(cfg), "--cache-dir",
                                         str(mypy_cache), "--no-error-summary"])
        assert status in (0, 1), err + out
        return out
    assert check("data = 2\nexpert = 4") == ""
    assert 'names axis "expert", which no mesh' in check("data = 2\nmodel = 4")
    assert check("data = 2\nexpert = 4") == ""
