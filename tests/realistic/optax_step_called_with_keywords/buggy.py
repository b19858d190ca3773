"""A linear-regression trainer whose jitted update is given in_shardings; the training
loop calls it positionally, as jit requires when in_shardings is set."""

import functools

import jax
import jax.numpy as jnp
import optax
from jax.sharding import NamedSharding, PartitionSpec as P

MESH = jax.make_mesh((2, 4), ("data", "model"))
REPLICATED = NamedSharding(MESH, P())
ROWS = NamedSharding(MESH, P("data", None))
COLS = NamedSharding(MESH, P(None, "model"))

optimizer = optax.lion(learning_rate=1e-3)


def loss_fn(weights, features, targets):
    preds = jnp.einsum("bf,fo->bo", features, weights)
    return jnp.mean((preds - targets) ** 2)


# the optimizer state (lion's momentum and its scalar count) keeps whatever sharding it has
@functools.partial(jax.jit,
                   in_shardings=(COLS, None, ROWS, NamedSharding(MESH, P("data", "model"))),
                   out_shardings=(COLS, None, REPLICATED))
def update(weights, opt_state, features, targets):
    loss, grads = jax.value_and_grad(loss_fn)(weights, features, targets)
    updates, opt_state = optimizer.update(grads, opt_state, weights)
    return optax.apply_updates(weights, updates), opt_state, loss


def fit(features, targets, steps=3):
    weights = jax.device_put(jnp.zeros((features.shape[1], targets.shape[1])), COLS)
    opt_state = optimizer.init(weights)
    for _ in range(steps):
        weights, opt_state, loss = update(weights, opt_state, features=features, targets=targets)
    return weights, loss


def main():
    features = jax.device_put(jnp.ones((16, 8)), ROWS)
    targets = jax.device_put(jnp.ones((16, 4)), NamedSharding(MESH, P("data", "model")))
    weights, loss = fit(features, targets)
    print(weights.shape, float(loss))


if __name__ == "__main__":
    main()
