"""Sharded TrainState creation for a Linen model with logically partitioned
parameters: the abstract state's logical specs are mapped to mesh shardings."""

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import linen as nn
from flax.training import train_state
from jax.sharding import AxisType, Mesh, NamedSharding

RULES = (("batch", "data"), ("embed", None), ("hidden", "model"))


class MLP(nn.Module):
    hidden: int = 64
    features: int = 16

    @nn.compact
    def __call__(self, x):
        init = nn.initializers.lecun_normal()
        x = nn.Dense(self.hidden, kernel_init=nn.with_logical_partitioning(
            init, ("embed", "hidden")))(x)
        x = nn.with_logical_constraint(nn.relu(x), ("batch", "hidden"))
        return nn.Dense(self.features, kernel_init=nn.with_logical_partitioning(
            init, ("hidden", "embed")))(x)


def create_state(rng, x):
    model = MLP()
    params = model.init(rng, x)["params"]
    return train_state.TrainState.create(apply_fn=model.apply, params=params,
                                         tx=optax.sgd(0.01))


def main():
    devices = np.array(jax.devices()).reshape(2, 4)
    mesh = Mesh(devices, ("data", "model"), axis_types=(AxisType.Auto, AxisType.Auto))
    x = jax.device_put(jnp.ones((8, 16)), NamedSharding(mesh, jax.P("data", None)))
    with jax.set_mesh(mesh), nn.logical_axis_rules(RULES):
        abstract_state = jax.eval_shape(create_state, jax.random.key(0), x)
        state_specs = nn.get_partition_spec(abstract_state)
        state_shardings = nn.logical_to_mesh_sharding(state_specs, mesh, RULES)
        state = jax.jit(create_state, out_shardings=state_shardings)(jax.random.key(0), x)
    kernel = state.params["Dense_0"]["kernel"].value
    print(kernel.shape, kernel.sharding.spec)


if __name__ == "__main__":
    main()
