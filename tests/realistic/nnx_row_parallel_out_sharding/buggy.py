"""Megatron-style tensor-parallel MLP in Flax NNX on an Explicit mesh: the second
projection contracts the model-sharded hidden dim, so its output sharding is chosen."""

import jax
import jax.numpy as jnp
import optax
from flax import nnx
from jax.sharding import PartitionSpec as P


class FeedForward(nnx.Module):
    def __init__(self, d_model: int, d_ff: int, *, rngs: nnx.Rngs):
        init = nnx.initializers.lecun_normal()
        # column-parallel up projection, row-parallel down projection
        self.up = nnx.Linear(d_model, d_ff, rngs=rngs,
                             kernel_init=nnx.with_partitioning(init, (None, "model")),
                             bias_init=nnx.with_partitioning(nnx.initializers.zeros, ("model",)))
        self.down = nnx.Linear(d_ff, d_model, use_bias=False, rngs=rngs,
                               kernel_init=nnx.with_partitioning(init, ("model", None)))

    def __call__(self, x):
        h = nnx.relu(self.up(x))
        return self.down(h)


class Classifier(nnx.Module):
    def __init__(self, d_in: int, d_ff: int, classes: int, *, rngs: nnx.Rngs):
        self.ffn = FeedForward(d_in, d_ff, rngs=rngs)
        self.head = nnx.Linear(d_in, classes, rngs=rngs)

    def __call__(self, x):
        return self.head(self.ffn(x))


@nnx.jit
def train_step(model, optimizer, x, labels):
    def loss_fn(model):
        logits = model(x)
        return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()

    loss, grads = nnx.value_and_grad(loss_fn)(model)
    optimizer.update(model, grads)
    return loss


def main():
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    with jax.set_mesh(mesh):
        model = Classifier(16, 64, 10, rngs=nnx.Rngs(0))
        optimizer = nnx.Optimizer(model, optax.sgd(0.1), wrt=nnx.Param)
        x = jax.random.normal(jax.random.key(1), (8, 16), out_sharding=P("data", None))
        labels = jnp.zeros((8,), jnp.int32, out_sharding=P("data"))
        loss = train_step(model, optimizer, x, labels)
    print("loss", float(loss))


if __name__ == "__main__":
    main()
