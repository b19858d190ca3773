"""Flax's built-in layers: NNX's normalisations on sharded inputs (Explicit mesh), an
NNX parameter made by a known initializer and indexed, and Linen's Dense and Embed
through ``model.apply`` with no mesh in force."""
import jax
import jax.numpy as jnp
from flax import linen as nn
from flax import nnx
from jax.sharding import PartitionSpec as P


class Classifier(nn.Module):
    vocab: int = 32
    features: int = 8

    @nn.compact
    def __call__(self, tokens):
        return nn.Dense(4)(nn.Embed(self.vocab, self.features)(tokens))


def main():
    mesh = jax.make_mesh((2, 4), ("x", "y"))
    with jax.set_mesh(mesh):
        rows = jax.device_put(jnp.ones((8, 16)), P("x", None))
        cols = jax.device_put(jnp.ones((8, 16)), P(None, "y"))
        layer_norm = nnx.LayerNorm(16, rngs=nnx.Rngs(0))
        rms_norm = nnx.RMSNorm(16, rngs=nnx.Rngs(0))
        plain = nnx.LayerNorm(16, use_bias=False, rngs=nnx.Rngs(0))
        half = nnx.LayerNorm(16, dtype=jnp.bfloat16, rngs=nnx.Rngs(0))
        normed = layer_norm(rows)
        normed_cols = layer_norm(cols)
        rms = rms_norm(cols)
        unbiased = plain(rows)
        low = half(rows)
        init = nnx.initializers.xavier_uniform()
        kernel = nnx.Param(nnx.with_partitioning(init, (None, "y"))(jax.random.key(0), (16, 8)))
        held = kernel[...]
        first_row = kernel[0]
        projected = jnp.einsum("bd,dk->bk", rows, kernel[...])
        raw = init(jax.random.key(1), (4, 4))  # unknown: the sample's sharding is not followed
    model = Classifier()
    tokens = jnp.zeros((4, 6), jnp.int32)
    variables = model.init(jax.random.key(0), tokens)
    logits = model.apply(variables, tokens)
    return normed, rms, logits


if __name__ == "__main__":
    main()
