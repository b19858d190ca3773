"""Flax's built-in layers: NNX's normalisations on sharded inputs (Explicit mesh), an
NNX parameter made by a known initializer and indexed, Linen's Dense and Embed through
``model.apply`` with no mesh in force, and a Linen block's ``self.param``s, norms and
logical constraint under an Auto mesh and rules."""
import jax
import jax.numpy as jnp
from flax import linen as nn
from flax import nnx
from jax.sharding import AxisType, PartitionSpec as P


class Block(nn.Module):
    dim: int = 8

    @nn.compact
    def __call__(self, x):
        kernel = self.param("kernel", nn.with_logical_partitioning(
            nn.initializers.orthogonal(), ("embed", "mlp")), (self.dim, self.dim))
        bias = self.param("bias", nn.with_logical_partitioning(nn.initializers.zeros_init(),
                                                               ("mlp",)), (self.dim,))
        scale = self.param("scale", nn.initializers.ones, (self.dim,))
        normed = nn.LayerNorm()(x)
        rms = nn.RMSNorm()(normed)
        y = jnp.dot(rms, kernel) + bias
        return nn.with_logical_constraint(y * scale, ("batch", "mlp"))


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
        positions = nnx.Embed(8, 16, rngs=nnx.Rngs(0))
        where = jnp.arange(8)[None, :]
        placed = positions(where)
    model = Classifier()
    tokens = jnp.zeros((4, 6), jnp.int32)
    variables = model.init(jax.random.key(0), tokens)
    logits = model.apply(variables, tokens)
    auto = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    block = Block()
    feats = jnp.ones((4, 8))
    with jax.set_mesh(auto), nn.logical_axis_rules((("batch", "data"), ("embed", None),
                                                    ("mlp", "model"))):
        block_vars = jax.jit(block.init)(jax.random.key(0), feats)
        out = jax.jit(block.apply)(block_vars, feats)
    return normed, rms, logits, out


if __name__ == "__main__":
    main()
