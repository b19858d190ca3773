"""Logical names with the rule table in view: the map shows the mesh axes they resolve to."""
import flax.linen as nn
import jax
import jax.numpy as jnp
from jax.sharding import AxisType

RULES = [("batch", "data"), ("embed", "model"), ("mlp", "model")]
mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
with jax.set_mesh(mesh), nn.logical_axis_rules(RULES):
    acts = nn.with_logical_constraint(jnp.zeros((8, 16)), ("batch", "embed"))
    # a mesh axis already used by an earlier dim is skipped: 'mlp' stays unsharded
    hidden = nn.with_logical_constraint(jnp.zeros((8, 16)), ("embed", "mlp"))
