"""A miniGPT-style NNX language model trained with nnx.jit on a ("batch", "model")
mesh; token batches are placed with a NamedSharding before each step."""

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx
from jax.sharding import NamedSharding, PartitionSpec as P

VOCAB, MAXLEN, EMBED, BATCH = 64, 8, 16, 8


class TinyLM(nnx.Module):
    def __init__(self, *, rngs: nnx.Rngs):
        init = nnx.initializers.normal(0.02)
        self.tok = nnx.Embed(VOCAB, EMBED, rngs=rngs,
                             embedding_init=nnx.with_partitioning(init, ("model", None)))
        self.pos = nnx.Embed(MAXLEN, EMBED, rngs=rngs)
        self.out = nnx.Linear(EMBED, VOCAB, use_bias=False, rngs=rngs,
                              kernel_init=nnx.with_partitioning(init, (None, "model")))

    def __call__(self, tokens):
        positions = jnp.arange(tokens.shape[1])[None, :]
        h = self.tok(tokens, out_sharding=P("batch", None, None)) + self.pos(positions)
        return self.out(h, out_sharding=P("batch", None, None))


def loss_fn(model, batch):
    logits = model(batch["inputs"])
    return optax.softmax_cross_entropy_with_integer_labels(logits, batch["targets"]).mean()


@nnx.jit
def train_step(model, optimizer, batch):
    loss, grads = nnx.value_and_grad(loss_fn)(model, batch)
    optimizer.update(model, grads)
    return loss


def batches(steps):
    rng = np.random.default_rng(0)
    for _ in range(steps):
        tokens = rng.integers(0, VOCAB, size=(BATCH, MAXLEN + 1), dtype=np.int32)
        yield {"inputs": tokens[:, :-1], "targets": tokens[:, 1:]}


def main():
    mesh = jax.make_mesh((4, 2), ("batch", "model"))
    data_sharding = NamedSharding(mesh, P("data", None))
    with jax.set_mesh(mesh):
        model = TinyLM(rngs=nnx.Rngs(0))
        optimizer = nnx.Optimizer(model, optax.adamw(3e-4), wrt=nnx.Param)
        for step, batch in enumerate(batches(2)):
            batch = jax.device_put(batch, data_sharding)
            loss = train_step(model, optimizer, batch)
            print(step, float(loss))


if __name__ == "__main__":
    main()
