"""NNX out_sharding written as a PartitionSpec of logical names, resolved under the caller's rules
(shardcheck before issue 13 read the names as mesh axes: two false SC101 errors)."""
import jax
import jax.numpy as jnp
from flax import nnx
from jax.sharding import AxisType, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
RULES = [("embed", "data"), ("mlp", "model")]


def make():
    return nnx.Param(jnp.zeros((16, 32)), out_sharding=P("embed", "mlp"))


with jax.set_mesh(mesh), nnx.logical_axis_rules(RULES):
    w = make()
