"""A bigram language model on an Explicit mesh with a vocab-parallel output layer: the
logits are gathered over the vocabulary before optax's integer-label cross entropy."""

import jax
import jax.numpy as jnp
import optax
from jax.sharding import PartitionSpec as P

VOCAB, DIM = 64, 16


def init_params(key):
    k1, k2 = jax.random.split(key)
    return {
        "embed": jax.random.normal(k1, (VOCAB, DIM), out_sharding=P(None, None)) * 0.02,
        # vocab-parallel unembedding: each "model" shard owns a slice of the vocabulary
        "unembed": jax.random.normal(k2, (DIM, VOCAB), out_sharding=P(None, "model")) * 0.02,
    }


def loss_fn(params, tokens):
    inputs, targets = tokens[:, :-1], tokens[:, 1:]
    h = params["embed"].at[inputs].get(out_sharding=P("data", None, None))
    # the per-token loss picks one vocab entry: gather the vocabulary in the matmul
    logits = jnp.einsum("btd,dv->btv", h, params["unembed"], out_sharding=P("data", None, None))
    return optax.softmax_cross_entropy_with_integer_labels(logits, targets).mean()


@jax.jit
def train_step(params, opt_state, tokens):
    loss, grads = jax.value_and_grad(loss_fn)(params, tokens)
    updates, opt_state = optimizer.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


optimizer = optax.adamw(1e-2)


def main():
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    with jax.set_mesh(mesh):
        params = init_params(jax.random.key(0))
        opt_state = optimizer.init(params)
        tokens = jax.random.randint(jax.random.key(1), (8, 12), 0, VOCAB,
                                    out_sharding=P("data", None))
        for _ in range(2):
            params, opt_state, loss = train_step(params, opt_state, tokens)
    print("loss", float(loss))


if __name__ == "__main__":
    main()
