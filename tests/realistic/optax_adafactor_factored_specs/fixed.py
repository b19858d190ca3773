"""The sharded-TrainState recipe: eval_shape the state factory, turn its logical specs
into shardings, and jit the factory with them. The optimizer state inherits the
parameters' logical names, so each moment must keep its parameter's shape (adam's do)."""

import functools

import jax
import jax.numpy as jnp
import optax
from flax import linen as nn
from flax.training import train_state
from jax.sharding import AxisType

RULES = (("batch", "data"), ("embed", None), ("hidden", "model"))


class Regressor(nn.Module):
    @nn.compact
    def __call__(self, x):
        init = nn.initializers.lecun_normal()
        h = nn.Dense(32, kernel_init=nn.with_logical_partitioning(init, ("embed", "hidden")))(x)
        return nn.Dense(1, kernel_init=nn.with_logical_partitioning(init, ("hidden", None)))(
            nn.silu(h))


def make_optimizer(learning_rate):
    schedule = optax.warmup_cosine_decay_schedule(0.0, learning_rate, 10, 100)
    return optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(schedule))


def create_train_state(model, tx, rng, x):
    params = model.init(rng, x)["params"]
    return train_state.TrainState.create(apply_fn=model.apply, params=params, tx=tx)


def main():
    mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    model = Regressor()
    x = jnp.ones((8, 16))
    tx = make_optimizer(1e-3)
    with jax.set_mesh(mesh), nn.logical_axis_rules(RULES):
        init = functools.partial(create_train_state, model, tx)
        abstract = jax.eval_shape(init, jax.random.key(0), x)
        shardings = nn.logical_to_mesh_sharding(nn.get_partition_spec(abstract), mesh, RULES)
        state = jax.jit(init, out_shardings=shardings)(jax.random.key(0), x)
    print(int(state.step), jax.tree.leaves(state.params)[0].sharding)


if __name__ == "__main__":
    main()
