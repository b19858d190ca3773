"""``jax.device_count()`` (analyzer/jaxapi/constructors.py): the count a module sets up
for itself, else unknown; checked against JAX on 8 CPU devices."""

from shardcheck.analyzer.engine import check_source

RING = """import jax
jax.config.update("jax_platforms", "cpu")
jax.config.update("jax_num_cpu_devices", 8)
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((4, 2), ("data", "model"))
x = jax.device_put(jnp.arange(16.0).reshape(8, 2), NamedSharding(mesh, P("data", None)))


def shift(block):
    n = jax.device_count()  # 8, but 'data' has 4
    return jax.lax.ppermute(block, "data", [(i, (i + 1) % n) for i in range(n)])


y = jax.shard_map(shift, mesh=mesh, in_specs=P("data", None), out_specs=P("data", None))(x)
"""


def _found(code):
    return [(f.row, f.code) for f in check_source(code, "ring.py") if f.severity == "error"]


def test_the_device_count_a_module_sets_up_is_known():
    assert _found(RING) == [(13, "SC210")]
    axis = RING.replace("n = jax.device_count()", "n = jax.lax.axis_size('data')")
    assert _found(axis) == []


def test_a_count_the_module_does_not_set_is_unknown():
    unset = RING.replace('jax.config.update("jax_num_cpu_devices", 8)\n', "")
    assert _found(unset) == []
    assert _found(RING.replace("jax.device_count()", "jax.device_count(backend='cpu')")) == []
    # set, and the platform not pinned: the count the program is written for
    assert _found(RING.replace('jax.config.update("jax_platforms", "cpu")\n', "")) == [(12, "SC210")]


def test_jax_agrees(jax8):
    from jax_snippets import run_snippets
    bad, good = run_snippets([RING, RING.replace("n = jax.device_count()",
                                                 "n = jax.lax.axis_size('data')")])
    assert bad["status"] == "error" and "must be unique" in bad["error"], bad
    assert good["status"] == "ok", good
