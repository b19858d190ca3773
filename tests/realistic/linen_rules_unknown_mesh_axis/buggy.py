"""A Linen MLP defined with setup(), sharded with T5X-style rules whose right-hand
sides must be axes of the mesh the TrainState is placed on."""

import functools

import jax
import jax.numpy as jnp
import optax
from flax import linen as nn
from flax.training import train_state
from jax.sharding import AxisType

LOGICAL_AXIS_RULES = [
    ("batch", "data"),
    ("embed", None),
    ("mlp", "tensor"),
]


class FeedForward(nn.Module):
    d_model: int = 16
    d_ff: int = 64

    def setup(self):
        init = nn.initializers.xavier_uniform()
        self.wi = nn.Dense(self.d_ff, use_bias=False,
                           kernel_init=nn.with_logical_partitioning(init, ("embed", "mlp")))
        self.wo = nn.Dense(self.d_model, use_bias=False,
                           kernel_init=nn.with_logical_partitioning(init, ("mlp", "embed")))

    def __call__(self, x):
        return self.wo(nn.relu(self.wi(x)))


TX = optax.adamw(1e-3)


def make_state(model, rng, x):
    params = model.init(rng, x)["params"]
    return train_state.TrainState.create(apply_fn=model.apply, params=params, tx=TX)


def main():
    mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    model = FeedForward()
    x = jnp.ones((8, 16))
    with jax.set_mesh(mesh), nn.logical_axis_rules(LOGICAL_AXIS_RULES):
        shapes = jax.eval_shape(functools.partial(make_state, model), jax.random.key(0), x)
        shardings = nn.logical_to_mesh_sharding(nn.get_partition_spec(shapes), mesh,
                                                LOGICAL_AXIS_RULES)
        state = jax.jit(make_state, static_argnums=0, out_shardings=shardings)(
            model, jax.random.key(0), x)
        y = jax.jit(state.apply_fn)({"params": state.params}, x)
    print(y.shape, state.params["wi"]["kernel"].value.sharding.spec)


if __name__ == "__main__":
    main()
