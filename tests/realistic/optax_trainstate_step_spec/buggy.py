"""FSDP-style MLP training with a Flax TrainState and adamw: every array of the state
(parameters, both moments) is sharded on its first dim over "data" by one sharding
tree given to jax.jit; the scalar step counters stay replicated."""

import jax
import jax.numpy as jnp
import optax
from flax import linen as nn
from flax.training import train_state
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P


class MLP(nn.Module):
    hidden: int = 32
    out: int = 8

    @nn.compact
    def __call__(self, x):
        x = nn.relu(nn.Dense(self.hidden)(x))
        return nn.Dense(self.out)(x)


def create_state(rng, batch):
    model = MLP()
    params = model.init(rng, batch["x"])["params"]
    tx = optax.adamw(learning_rate=1e-3, weight_decay=1e-4)
    return train_state.TrainState.create(apply_fn=model.apply, params=params, tx=tx)


def state_shardings(state, mesh):
    def leaf_sharding(x):
        return NamedSharding(mesh, P("data"))
    return jax.tree.map(leaf_sharding, state)


def train_step(state, batch):
    def loss_fn(params):
        logits = state.apply_fn({"params": params}, batch["x"])
        return optax.softmax_cross_entropy_with_integer_labels(logits, batch["y"]).mean()

    loss, grads = jax.value_and_grad(loss_fn)(state.params)
    return state.apply_gradients(grads=grads), loss


def main():
    mesh = jax.make_mesh((8,), ("data",), axis_types=(AxisType.Auto,))
    rng = jax.random.key(0)
    batch = {"x": jnp.ones((16, 16)), "y": jnp.zeros((16,), jnp.int32)}
    state = create_state(rng, batch)
    state_sh = state_shardings(state, mesh)
    batch_sh = {"x": NamedSharding(mesh, P("data", None)), "y": NamedSharding(mesh, P("data"))}
    state = jax.device_put(state, state_sh)
    batch = jax.device_put(batch, batch_sh)
    step = jax.jit(train_step, in_shardings=(state_sh, batch_sh),
                   out_shardings=(state_sh, NamedSharding(mesh, P())))
    for _ in range(2):
        state, loss = step(state, batch)
    print("loss", float(loss), "step", int(state.step))


if __name__ == "__main__":
    main()
