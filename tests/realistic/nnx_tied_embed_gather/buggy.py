"""A tied-embedding NNX decoder on an Explicit mesh: the vocabulary is sharded over
"model", so the token lookup names the sharding of its result."""

import jax
import optax
from flax import nnx
from jax.sharding import PartitionSpec as P


class TiedDecoder(nnx.Module):
    def __init__(self, vocab: int, embed: int, *, rngs: nnx.Rngs):
        self.embed = nnx.Embed(
            vocab, embed, rngs=rngs,
            embedding_init=nnx.with_partitioning(nnx.initializers.normal(0.02), ("model", None)))
        self.mix = nnx.Linear(embed, embed, rngs=rngs)

    def __call__(self, tokens):
        # a vocab-sharded table looked up with batch-sharded ids: the result is per batch
        x = self.embed(tokens)
        x = x + nnx.gelu(self.mix(x))
        return self.embed.attend(x, out_sharding=P("data", None, None))


def make_loss(model, tokens):
    logits = model(tokens[:, :-1])
    return optax.softmax_cross_entropy_with_integer_labels(logits, tokens[:, 1:]).mean()


def main():
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    with jax.set_mesh(mesh):
        model = TiedDecoder(vocab=32, embed=16, rngs=nnx.Rngs(params=0))
        optimizer = nnx.Optimizer(model, optax.adam(1e-3), wrt=nnx.Param)

        @nnx.jit
        def step(model, optimizer, tokens):
            loss, grads = nnx.value_and_grad(make_loss)(model, tokens)
            optimizer.update(model, grads)
            return loss

        tokens = jax.random.randint(jax.random.key(0), (4, 9), 0, 32, out_sharding=P("data", None))
        print("loss", float(step(model, optimizer, tokens)))


if __name__ == "__main__":
    main()
