"""A training setup that shards parameters by a tree of specs (issue 13's pytrees)."""
from functools import partial

import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Explicit,) * 2)
PARAM_SPECS = {"w": P(None, "model"), "b": P("model")}
param_shardings = jax.tree.map(lambda s: NamedSharding(mesh, s), PARAM_SPECS)
params = {"w": jnp.zeros((8, 16)), "b": jnp.zeros((16,))}
params = jax.device_put(params, param_shardings)
again = jax.device_put(params, jax.tree.map(partial(NamedSharding, mesh), PARAM_SPECS))
pair = jax.device_put((jnp.zeros((8, 4)), jnp.zeros((8,))),
                      (NamedSharding(mesh, P("data", None)), NamedSharding(mesh, P())))
batch_sharding = NamedSharding(mesh, P("data"))


def loss(params, x):
    return (x @ params["w"] + params["b"]).sum()


step = jax.jit(loss, in_shardings=(param_shardings, batch_sharding),
               out_shardings=NamedSharding(mesh, P()))
value = step(params, jnp.ones((4, 8)))
