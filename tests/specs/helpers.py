"""Helpers that take the spec (or the logical names) as a parameter, called with different
ones: the helper's own site is unknown, each call is listed with the spec it gives."""
import flax.linen as nn
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)


def place(a, spec):
    return jax.device_put(a, NamedSharding(mesh, spec))


def shard_logical(x, names):
    return nn.with_logical_constraint(x, names)


acts = place(jnp.zeros((8, 16)), P("data", None))
weights = place(jnp.ones((16, 4)), P("model", None))
with jax.set_mesh(mesh), nn.logical_axis_rules([("batch", "data"), ("embed", "model")]):
    hidden = shard_logical(jnp.zeros((8, 16)), ("batch", "embed"))
    logits = shard_logical(jnp.zeros((8, 16)), ("batch", None))


def named(*names):  # the names arrive as a *args tuple, one per call
    return NamedSharding(mesh, P(*names))


bias = jax.device_put(jnp.zeros((8,)), named("data"))
table = jax.device_put(jnp.zeros((8, 4)), named(None, "model"))
