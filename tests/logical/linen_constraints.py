"""Linen logical constraints under rule contexts, as real models write them."""
import jax
import jax.numpy as jnp
import flax.linen as nn
from jax.sharding import AxisType, PartitionSpec as P

RULES = [("batch", ("data",)), ("length", None), ("embed", "model"), ("mlp", "model"),
         ("heads", "model"), ("vocab", ("model", "data"))]
auto = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
explicit = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Explicit,) * 2)


def block(x):
    h = nn.with_logical_constraint(x, ("batch", "length", "embed"))
    return h * 2


with jax.set_mesh(explicit), nn.logical_axis_rules(RULES):
    x = jax.device_put(jnp.zeros((8, 4, 16)), P("data", None, "model"))
    y = nn.with_logical_constraint(x, ("batch", "length", "embed"))
    z = block(x)
    w = jax.device_put(jnp.zeros((16, 8)), P("model", None))
    w2 = nn.with_logical_constraint(w, ("embed", "vocab"))  # vocab's axes overlap: skipped
    u = jax.device_put(jnp.zeros((8, 4, 16)), P("data"))
    v = nn.with_logical_constraint(u, ("batch", None, None), rules=[("batch", "data")])

with jax.set_mesh(auto), nn.logical_axis_rules(RULES):
    a = jnp.ones((8, 16))
    b = nn.with_logical_constraint(a, ("batch", "mlp"))
    spec = nn.logical_to_mesh_axes(("mlp", "embed"))

nn.set_logical_axis_rules(RULES)
with jax.set_mesh(explicit):
    c = jax.device_put(jnp.zeros((8, 16)), P("data", "model"))
    d = nn.with_logical_constraint(c, ("batch", "heads"))
