"""An MNIST-style MLP classifier step with gradient clipping: the jitted step
returns the new state and two metrics, and out_shardings lists a sharding for each."""

import jax
import jax.numpy as jnp
import optax
from flax import linen as nn
from flax.training import train_state
from jax.sharding import NamedSharding, PartitionSpec as P


class Classifier(nn.Module):
    classes: int = 10

    @nn.compact
    def __call__(self, x):
        x = nn.Dense(64)(x)
        x = nn.LayerNorm()(nn.relu(x))
        return nn.Dense(self.classes)(x)


def train_step(state, images, labels):
    def loss_fn(params):
        logits = state.apply_fn({"params": params}, images)
        return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()

    loss, grads = jax.value_and_grad(loss_fn)(state.params)
    grad_norm = optax.global_norm(grads)
    return state.apply_gradients(grads=grads), loss, grad_norm


def main():
    mesh = jax.make_mesh((8,), ("batch",))
    replicated = NamedSharding(mesh, P())
    batch_sharding = NamedSharding(mesh, P("batch"))
    model = Classifier()
    images = jnp.ones((32, 28 * 28))
    labels = jnp.arange(32) % 10
    params = model.init(jax.random.key(0), images[:1])["params"]
    tx = optax.chain(optax.clip_by_global_norm(1.0), optax.sgd(0.1, momentum=0.9))
    state = train_state.TrainState.create(apply_fn=model.apply, params=params, tx=tx)
    state_sharding = jax.tree.map(lambda _: replicated, state)
    step = jax.jit(train_step,
                   in_shardings=(state_sharding, batch_sharding, batch_sharding),
                   out_shardings=(state_sharding, replicated, replicated))
    state, loss, grad_norm = step(state, images, labels)
    print(float(loss), float(grad_norm))


if __name__ == "__main__":
    main()
