"""The pytest plugin, used as a user uses it: pytest run on a small project with the
plugin's options (it is installed with shardcheck, entry point ``pytest11``)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

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
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           *args], capture_output=True, text=True, cwd=tmp_path, env=env)


def test_static_findings_fail_their_own_items(tmp_path):
    _project(tmp_path)
    r = _pytest(tmp_path, "--shardcheck", "pkg")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "FAILED pkg/broken.py::shardcheck" in r.stdout
    assert "pkg/broken.py:6:25: SC101" in r.stdout
    assert "1 failed, 2 passed" in r.stdout  # __init__.py and model.py are clean


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
