"""Activations constrained under a context mesh, a shard_map block, a spec read from a
config class's declared default, and one the analyzer cannot see (an uncalled helper)."""
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Explicit,) * 2)
jax.set_mesh(mesh)
x = jax.device_put(jnp.zeros((8, 16)), P("data", None))
h = jax.sharding.reshard(x, P("data", "model"))
c = jax.lax.with_sharding_constraint(h, P("data", "model"))  # an assert on Explicit axes
r = jax.sharding.reshard(h, P(None, "model"))
w = jax.device_put(jnp.ones((16, 4)), NamedSharding(mesh, P("model", None)))
tp = jax.device_put(jnp.ones((4, 16)), NamedSharding(mesh, P(None, ("data", "model"))))


def block(a, b):
    return jax.lax.psum(a @ b, "model")


matmul = jax.shard_map(block, mesh=mesh, in_specs=(P("data", "model"), P("model", None)),
                       out_specs=P("data", None))
y = matmul(h, w)


class Config:
    activation_spec = P("data", None)


def constrain_from_config(cfg: Config, a):
    return jax.lax.with_sharding_constraint(a, cfg.activation_spec)


def library_helper(a, spec):
    return jax.lax.with_sharding_constraint(a, NamedSharding(mesh, spec))
