"""Gathers and indexed updates (``x.at[...]``, ``jnp.take``, ``jnp.take_along_axis``),
``jnp.split``/``repeat``/``tril``, and optax's losses and norms, on an Explicit mesh."""
import jax
import jax.numpy as jnp
import optax
from jax.sharding import PartitionSpec as P


def main():
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


if __name__ == "__main__":
    main()
