"""NNX parameters with logical sharding metadata, resolved by the rules in force."""
import jax
import jax.numpy as jnp
from flax import nnx
from jax.sharding import AxisType

RULES = [("embed", "data"), ("mlp", "model"), ("batch", "data")]
mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)

with jax.set_mesh(mesh), nnx.logical_axis_rules(RULES):
    kernel = nnx.Param(jnp.zeros((16, 32)), out_sharding=("embed", "mlp"))
    bias = nnx.Param(jnp.zeros((32,)), out_sharding=("mlp",))
    init = nnx.with_partitioning(nnx.initializers.lecun_normal(), ("embed", "mlp"))
    local = nnx.Param(jnp.zeros((16, 32)), out_sharding=("embed", "hidden"),
                      sharding_rules=[("hidden", "model")])
