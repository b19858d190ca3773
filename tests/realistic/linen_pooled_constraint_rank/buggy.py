"""A Linen sequence classifier: token features are constrained per (batch, length,
embed), then mean-pooled; the pooled features get a constraint of their own rank."""

import jax
import jax.numpy as jnp
import optax
from flax import linen as nn
from flax.training import train_state
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

RULES = (("batch", "data"), ("length", None), ("embed", "model"), ("classes", None))


class SequenceClassifier(nn.Module):
    vocab: int = 100
    embed: int = 32
    classes: int = 4

    @nn.compact
    def __call__(self, tokens):
        x = nn.Embed(self.vocab, self.embed)(tokens)
        x = nn.with_logical_constraint(x, ("batch", "length", "embed"))
        x = nn.Dense(self.embed)(nn.gelu(x))
        pooled = jnp.mean(x, axis=1)
        pooled = nn.with_logical_constraint(pooled, ("batch", "length", "embed"))
        return nn.Dense(self.classes)(pooled)


def train_step(state, tokens, labels):
    def loss_fn(params):
        logits = state.apply_fn({"params": params}, tokens)
        return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()

    loss, grads = jax.value_and_grad(loss_fn)(state.params)
    return state.apply_gradients(grads=grads), loss


def main():
    mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    model = SequenceClassifier()
    tokens = jnp.zeros((8, 12), jnp.int32)
    labels = jnp.zeros((8,), jnp.int32)
    with jax.set_mesh(mesh), nn.logical_axis_rules(RULES):
        params = jax.jit(model.init)(jax.random.key(0), tokens)["params"]
        state = train_state.TrainState.create(apply_fn=model.apply, params=params,
                                              tx=optax.adamw(1e-3))
        tokens = jax.device_put(tokens, NamedSharding(mesh, P("data", None)))
        state, loss = jax.jit(train_step)(state, tokens, labels)
    print("loss", float(loss))


if __name__ == "__main__":
    main()
