"""t5x-style spellings: flax.linen.partitioning's axis_rules and with_sharding_constraint
are Linen's logical_axis_rules and with_logical_constraint under other names."""
import jax
import jax.numpy as jnp
from flax.linen import partitioning as nn_partitioning
from jax.sharding import AxisType

RULES = [("batch", "data"), ("embed", "model")]
mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
with jax.set_mesh(mesh), nn_partitioning.axis_rules(RULES):
    acts = nn_partitioning.with_sharding_constraint(jnp.zeros((8, 16)), ("batch", "embed"))
nn_partitioning.set_axis_rules([("batch", "model")])
with jax.set_mesh(mesh):
    moved = nn_partitioning.with_sharding_constraint(jnp.zeros((8, 16)), ("batch", None))
