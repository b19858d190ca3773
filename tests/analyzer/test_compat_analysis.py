"""The analysis follows the JAX version profile selected by ``jax-version``: meshes get
that version's default axis types and make_mesh's sizes keyword (each flag itself is
checked against the installed JAX in test_compat.py)."""

from shardcheck.analyzer.config import Config
from shardcheck.analyzer.engine import check_source
from shardcheck.analyzer.inferred_types import infer_types

ABSTRACT = '''import jax
from jax import P
from jax.sharding import AbstractMesh, reshard

def f(x):
    return reshard(x, P("x", None))

mesh = AbstractMesh((2, 4), ("x", "y"))
with jax.sharding.use_abstract_mesh(mesh):
    f(jax.ShapeDtypeStruct((8, 4), jax.numpy.float32))
'''


def _codes(source: str, version: str):
    return {f.code for f in check_source(source, "m.py", Config(jax_version=version))}


def test_abstract_mesh_axes_are_auto_on_0_10_and_explicit_from_0_11():
    assert "SC106" in _codes(ABSTRACT, "0.10")  # reshard needs Explicit axes
    assert "SC106" not in _codes(ABSTRACT, "0.11")
    assert "SC106" not in _codes(ABSTRACT, "0.12")


def test_make_mesh_sizes_are_read_under_either_keyword():
    for keyword in ("axis_shapes", "axis_sizes"):
        source = f'''import jax
import jax.numpy as jnp
from jax import P
mesh = jax.make_mesh({keyword}=(2, 4), axis_names=("x", "y"))
with jax.set_mesh(mesh):
    a = jax.device_put(jnp.zeros((8, 4)), P("x", "y"))
'''
        for version in ("0.10", "0.12"):
            types = {t.name: t.type for t in infer_types(source, "m.py", Config(jax_version=version))}
            assert types["a"] == "float32[8@x,4@y]", (keyword, version, types)


PARTIAL_MANUAL = '''import jax
import jax.numpy as jnp
from jax import P

mesh = jax.make_mesh((2, 4), ("x", "y"))
with jax.set_mesh(mesh):
    x = jnp.ones((8, 16))  # replicated
    y = jax.shard_map(lambda b: b * 2, in_specs=P("x", None), out_specs=P("x", None),
                      axis_names={"x"})(x)
'''


def test_a_partial_manual_shard_map_checks_its_in_specs_from_0_12():
    """Up to 0.11 JAX reshards the input of a shard_map manual over some axes; 0.12
    raises (test_compat.py checks the flag against the installed JAX)."""
    assert "SC204" not in _codes(PARTIAL_MANUAL, "0.10")
    assert "SC204" not in _codes(PARTIAL_MANUAL, "0.11")
    assert "SC204" in _codes(PARTIAL_MANUAL, "0.12")
    full = PARTIAL_MANUAL.replace('axis_names={"x"}', 'axis_names={"x", "y"}')
    assert all("SC204" in _codes(full, v) for v in ("0.10", "0.11", "0.12"))
