"""Data-parallel training: the batch is sharded over 'data', parameters are replicated.

JAX inserts the gradient all-reduce itself: the gradients of replicated parameters come
back replicated, which the assertions below check at trace time.

    python examples/data_parallel.py
"""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

import sharding_types as st
from sharding_types import Sharded, check_shardings

jax.config.update("jax_num_cpu_devices", 8)

BATCH, D_IN, D_HIDDEN, D_OUT = 64, 32, 128, 8
LEARNING_RATE = 0.05


def init_params(key):
    k1, k2 = jax.random.split(key)
    return {
        "w1": jax.random.normal(k1, (D_IN, D_HIDDEN)) * 0.1,
        "b1": jnp.zeros((D_HIDDEN,)),
        "w2": jax.random.normal(k2, (D_HIDDEN, D_OUT)) * 0.1,
        "b2": jnp.zeros((D_OUT,)),
    }


def loss_fn(params, x, y):
    h = jax.nn.relu(x @ params["w1"] + params["b1"])
    st.assert_sharding(h, "float32[B@data,128]")
    pred = h @ params["w2"] + params["b2"]
    return jnp.mean((pred - y) ** 2)


@jax.jit
@check_shardings
def train_step(params,
               x: Sharded[jax.Array, "float32[B@data,32]"],
               y: Sharded[jax.Array, "float32[B@data,8]"]) -> tuple:
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    # Gradients of replicated parameters are replicated: the all-reduce over 'data'
    # happened inside the backward pass.
    st.assert_sharding(grads["w1"], "float32[32,128]")
    st.assert_sharding(grads["b2"], "float32[8]")
    new_params = jax.tree.map(lambda p, g: p - LEARNING_RATE * g, params, grads)
    return new_params, st.assert_sharding(loss, "float32[]")


def main():
    mesh = jax.make_mesh((8,), ("data",))
    with jax.set_mesh(mesh):
        params = jax.device_put(init_params(jax.random.key(0)), P())
        x = jax.device_put(jax.random.normal(jax.random.key(1), (BATCH, D_IN)), P("data", None))
        true_w = jax.random.normal(jax.random.key(2), (D_IN, D_OUT))
        y = jax.device_put(x @ true_w, P("data", None))
        losses = []
        for _ in range(20):
            params, loss = train_step(params, x, y)
            losses.append(float(loss))
        st.assert_sharding(params["w1"], "float32[32,128]")
    assert losses[-1] < losses[0], losses
    print(f"data_parallel: loss {losses[0]:.4f} -> {losses[-1]:.4f}")


if __name__ == "__main__":
    main()
