"""The pytest plugin, used as a user uses it: pytest run on a small project with the
plugin's options (it is installed with shardcheck, entry point ``pytest11``)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

MODEL = '''
import jax
from sharding_types import Sharded


def scale(x: Sharded[jax.Array, "float32[B@data,D]"]) -> jax.Array:
    return x * 2
'''
BROKEN = '''
import jax
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))
s = NamedSharding(mesh, P("modle"))
'''
TEST = '''
import jax
import jax.numpy as jnp
import pytest
from jax.sharding import NamedSharding, PartitionSpec as P

from sharding_types import ShardingMismatchError


def test_annotated_call_is_checked(shardcheck_mesh):
    from pkg.model import scale
    mesh = shardcheck_mesh((2, 4), ("data", "model"))
    good = jax.device_put(jnp.zeros((8, 4)), NamedSharding(mesh, P("data", None)))
    assert scale(good).shape == (8, 4)
    bad = jax.device_put(jnp.zeros((8, 4)), NamedSharding(mesh, P("model", None)))
    with pytest.raises(ShardingMismatchError):
        scale(bad)
'''


def _project(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "model.py").write_text(textwrap.dedent(MODEL))
    (tmp_path / "pkg" / "broken.py").write_text(textwrap.dedent(BROKEN))
    (tmp_path / "test_model.py").write_text(textwrap.dedent(TEST))


def _pytest(tmp_path, *args):
    import os
    # a user's shell: no device settings inherited from this test session
    env = {k: v for k, v in os.environ.items()
           if k not in ("XLA_FLAGS", "JAX_NUM_CPU_DEVICES", "PYTEST_XDIST_WORKER",
                        "PYTEST_ADDOPTS")}
    # hypothesis's and jaxtyping's plugins, which the test extras install, cost each run
    # 1.8 s of imports and take no part
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-p", "no:hypothesispytest", "-p", "no:jaxtyping", *args],
                          capture_output=True, text=True, cwd=tmp_path, env=env)


def test_static_findings_fail_their_own_items(tmp_path):
    _project(tmp_path)
    r = _pytest(tmp_path, "--shardcheck", "pkg")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "FAILED pkg/broken.py::shardcheck" in r.stdout
    assert "pkg/broken.py:6:25: SC101" in r.stdout
    assert "1 failed, 2 passed" in r.stdout  # __init__.py and model.py are clean


@pytest.mark.slow  # end to end, child processes and their budgets: CI's `-m slow` leg
def test_import_hook_checks_annotated_calls_on_virtual_devices(tmp_path):
    _project(tmp_path)
    r = _pytest(tmp_path, "--shardcheck-cpu-devices=8", "--shardcheck-packages=pkg",
                "test_model.py")
    assert r.returncode == 0 and "1 passed" in r.stdout, r.stdout + r.stderr
    # without the hook the mis-sharded call goes unchecked: the test's raises fails
    r = _pytest(tmp_path, "--shardcheck-cpu-devices=8", "test_model.py")
    assert r.returncode == 1 and "DID NOT RAISE" in r.stdout
    # without the devices the fixture skips, saying how to get them
    r = _pytest(tmp_path, "-rs", "test_model.py")
    assert r.returncode == 0 and "--shardcheck-cpu-devices=8" in r.stdout


def test_inactive_unless_asked(tmp_path):
    _project(tmp_path)
    r = _pytest(tmp_path, "pkg")
    assert r.returncode == 5 and "no tests ran" in r.stdout  # nothing collected from pkg/


# -- the project is the unit (issue 37): each item gives `shardcheck check FILE`'s answer ----
# A conftest of the user's that counts the runs of the runner the session makes
COUNTING_CONFTEST = '''
import shardcheck.check.runner as runner

RUNS = []
_run = runner.run


def counted(files, *args, **kwargs):
    RUNS.append(len(files))
    return _run(files, *args, **kwargs)


runner.run = counted


def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_line(f"shardcheck runs: {RUNS}")
'''


def test_each_item_gives_the_projects_answer_for_its_file(tmp_path):
    import tinylm_project  # tests/tinylm_project.py
    tinylm_project.write(tmp_path)
    (tmp_path / "conftest.py").write_text(COUNTING_CONFTEST)
    r = _pytest(tmp_path, "--shardcheck", "src", "scripts")
    assert r.returncode == 1, r.stdout + r.stderr
    # the review's case: the typo is seen only with the package's mesh resolved
    assert "FAILED scripts/demo.py::shardcheck" in r.stdout
    assert "scripts/demo.py:10:45: SC101" in r.stdout
    # model.py's findings come from train.py's call, and fail model.py's item alone
    assert "FAILED src/tinylm/model.py::shardcheck" in r.stdout
    model = r.stdout.split("src/tinylm/model.py:10:75: SC104", 1)[1].split("\n___", 1)[0]
    assert "src/tinylm/model.py:11:76: SC104" in model and "SC101" not in model
    assert model.count("src/tinylm/train.py:17:18: note: `init_params` is called here") == 2
    assert "2 failed, 3 passed" in r.stdout  # __init__.py, mesh.py, train.py
    assert "shardcheck runs: [5]" in r.stdout  # one run of the runner for the session


def test_an_item_alone_analyses_the_files_that_import_it(tmp_path):
    import tinylm_project
    tinylm_project.write(tmp_path)
    r = _pytest(tmp_path, "--shardcheck", "src/tinylm/model.py")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "src/tinylm/model.py:10:75: SC104" in r.stdout
    assert "src/tinylm/train.py:17:18: note: `init_params` is called here" in r.stdout
    assert "1 failed" in r.stdout
    assert (tmp_path / ".shardcheck_cache").is_dir()  # check's cache, beside pyproject.toml


def test_a_config_error_fails_each_item_in_one_line(tmp_path):
    _project(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.shardcheck]\nselect = ["SC9999"]\n')
    r = _pytest(tmp_path, "--shardcheck", "pkg")
    assert r.returncode == 1 and "3 failed" in r.stdout, r.stdout + r.stderr
    assert "shardcheck: config error:" in r.stdout and "SC9999" in r.stdout
    assert "Traceback" not in r.stdout


def test_an_item_alone_gets_the_axes_of_the_projects_meshes(tmp_path):
    """SC114 needs every mesh of the project: model.py's item reads train.py's mesh and
    the project's YAML configs, as `shardcheck check` does (tests/analyzer/
    test_project_axes.py has the cases)."""
    (tmp_path / "pyproject.toml").write_text("[tool.shardcheck]\n")
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "base.yml").write_text("mesh_axes: ['data', 'model']\n")
    (tmp_path / "train.py").write_text(
        "import jax\nimport model\n\ndef main(config):\n"
        "    model.MESHES['train'] = jax.make_mesh((2, 4), config.mesh_axes)\n")
    (tmp_path / "model.py").write_text(
        "import jax\nfrom jax.sharding import NamedSharding, PartitionSpec as P\n\nMESHES = {}\n\n"
        "def shard(x):\n    return jax.device_put(x, NamedSharding(MESHES['train'], P('modle')))\n")
    r = _pytest(tmp_path, "--shardcheck", "model.py")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "model.py:7:63: SC114" in r.stdout and "Did you mean 'model'?" in r.stdout


def test_a_sharding_config_is_an_item_and_its_warnings_are_listed(tmp_path):
    """A YAML sharding config pytest meets is checked as `shardcheck check CONFIG` checks
    it: its SC113 warning is in pytest's warnings summary, the item passes, and
    `-W error::...ShardcheckWarning` fails it. A YAML file that holds no sharding config
    is no item."""
    (tmp_path / "pyproject.toml").write_text("[tool.shardcheck]\n")
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "base.yml").write_text(
        "mesh_axes: ['data', 'model']\nlogical_axis_rules: [['embed', 'modle']]\n")
    (tmp_path / "configs" / "data.yml").write_text("paths: ['a', 'b']\n")
    r = _pytest(tmp_path, "--shardcheck", "-rA", "configs")
    assert r.returncode == 0 and "1 passed" in r.stdout, r.stdout + r.stderr
    assert "configs/base.yml:2: ShardcheckWarning: SC113 warning" in r.stdout, r.stdout
    assert "data.yml" not in r.stdout
    r = _pytest(tmp_path, "--shardcheck", "configs", "-W",
                "error::shardcheck.integrations.pytest_plugin.ShardcheckWarning")
    assert r.returncode == 1 and "1 failed" in r.stdout and "SC113" in r.stdout, r.stdout
    (tmp_path / "configs" / "base.yml").write_text(
        "mesh_axes: ['data', 'model']\nlogical_axis_rules: [['embed', 'model']]\n")
    r = _pytest(tmp_path, "--shardcheck", "configs", "-W",
                "error::shardcheck.integrations.pytest_plugin.ShardcheckWarning")
    assert r.returncode == 0 and "1 passed" in r.stdout and "SC113" not in r.stdout, r.stdout


def test_a_python_files_warning_is_listed_not_failed(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.shardcheck]\n")
    (tmp_path / "old.py").write_text(
        "import jax\nfrom jax.experimental.pjit import pjit\n\nf = pjit(lambda a: a)\n")
    r = _pytest(tmp_path, "--shardcheck", "old.py")
    assert r.returncode == 0 and "1 passed" in r.stdout, r.stdout + r.stderr
    assert "old.py:2: ShardcheckWarning: SC401 warning" in r.stdout, r.stdout
