"""Library-shaped code on 8 CPU devices: gathers and indexed updates (``x.at[...]``,
``jnp.take``, ``jnp.take_along_axis``), ``jnp.split``/``repeat``/``tril`` and optax's
losses and norms on an Explicit mesh; Flax's built-in layers: NNX's normalisations on
sharded inputs, an NNX parameter made by a known initializer and indexed, Linen's Dense
and Embed through ``model.apply`` (typed under an Auto mesh only: with no mesh in force
the variables may carry Explicit axes), and a Linen block's ``self.param``s, norms and
logical constraint under an Auto mesh and rules."""
import jax
import jax.numpy as jnp
import optax
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


def gathers_and_losses():
    mesh = jax.make_mesh((2, 4), ("x", "y"))
    with jax.set_mesh(mesh):
        table = jnp.zeros((32, 16))
        ids = jnp.zeros((8, 4), jnp.int32)
        rows = jax.device_put(jnp.zeros((8, 16)), P("x", None))
        both = jax.device_put(jnp.zeros((8, 16)), P("x", "y"))
        gathered = table.at[jax.device_put(ids, P("x", None))].get(out_sharding=P("x", None, None))
        column = rows.at[:, 3].get()
        zeroed = rows.at[:, 3].set(0.0)
        bumped = rows.at[:, 1:3].add(1.0)
        picked = rows.at[:, jnp.array([0, 1])].multiply(2.0)
        embedded = jnp.take(jax.device_put(table, P(None, "y")), ids, axis=0)
        index = jax.device_put(jnp.zeros((8, 1), jnp.int32), P("x", None))
        along = jnp.take_along_axis(rows, index, axis=-1)
        left, right = jnp.split(both, 2, axis=1)
        top, bottom = jnp.split(rows, 2)
        wide = jnp.repeat(rows, 3, axis=1)
        grown = jnp.repeat(both, 2, axis=1, out_sharding=P("x", "y"))
        lower = jnp.tril(both)
        logits = jax.device_put(jnp.zeros((8, 4, 16)), P("x", None, None))
        labels = jax.device_put(jnp.zeros((8, 4), jnp.int32), P("x", None))
        other = jax.device_put(jnp.zeros((8, 4), jnp.int32), P(None, "y"))
        per_token = optax.softmax_cross_entropy_with_integer_labels(logits, labels)
        mixed = optax.softmax_cross_entropy_with_integer_labels(logits, other)
        loss = per_token.mean()
        vocab = jax.device_put(jnp.zeros((8, 4, 16)), P("x", None, "y"))
        dense = optax.softmax_cross_entropy(vocab, jax.nn.one_hot(labels, 16))
        squared = optax.l2_loss(rows, rows)
        errors = optax.squared_error(both)
        bce = optax.sigmoid_binary_cross_entropy(both, both)
        norm = optax.global_norm({"a": rows, "b": both})
    return loss, norm


def main():
    gathers_and_losses()
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
    logits = model.apply(variables, tokens)  # unknown: no mesh in force, the variables' types unknown
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
