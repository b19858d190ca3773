"""FSDP-style training: parameters and optimizer state live sharded over 'data'.

Each weight is stored split along its first dim over 'data'. Before a layer uses it,
``reshard(w, P())`` all-gathers the full weight; in the backward pass the gradient is
summed over 'data' and each device keeps its slice, so gradients and updated parameters
keep the storage sharding. ``shardcheck confirm examples/fsdp.py`` lists what XLA
emits: the two all-gathers, and (on CPU) one all-reduce of the full gradients rather
than a reduce-scatter.

    python examples/fsdp.py
"""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P
from jax.sharding import reshard

import sharding_types as st
from sharding_types import Sharded, check_shardings

jax.config.update("jax_num_cpu_devices", 8)

BATCH, D_IN, D_HIDDEN, D_OUT = 128, 64, 256, 16
LEARNING_RATE = 0.02
PARAM_SPECS = {"w1": P("data", None), "w2": P("data", None)}


def forward(params, x):
    w1 = reshard(params["w1"], P())  # all-gather the shards for use
    h = jax.nn.relu(x @ w1)
    st.assert_sharding(h, "float32[B@data,256]")
    w2 = reshard(params["w2"], P())
    return h @ w2


def loss_fn(params, x, y):
    return jnp.mean((forward(params, x) - y) ** 2)


@jax.jit
@check_shardings
def train_step(params,
               x: Sharded[jax.Array, "float32[B@data,64]"],
               y: Sharded[jax.Array, "float32[B@data,16]"]) -> tuple:
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    # gradients come back in the parameters' storage sharding (reduce-scattered)
    st.assert_sharding(grads["w1"], "float32[64@data,256]")
    st.assert_sharding(grads["w2"], "float32[256@data,16]")
    new_params = jax.tree.map(lambda p, g: p - LEARNING_RATE * g, params, grads)
    return new_params, loss


def main():
    mesh = jax.make_mesh((8,), ("data",))
    with jax.set_mesh(mesh):
        k1, k2, k3, k4 = jax.random.split(jax.random.key(0), 4)
        params = {"w1": jax.random.normal(k1, (D_IN, D_HIDDEN)) * 0.1,
                  "w2": jax.random.normal(k2, (D_HIDDEN, D_OUT)) * 0.1}
        params = jax.device_put(params, PARAM_SPECS)
        x = jax.device_put(jax.random.normal(k3, (BATCH, D_IN)), P("data", None))
        y = jax.device_put(jax.random.normal(k4, (BATCH, D_OUT)), P("data", None))
        losses = []
        for _ in range(10):
            params, loss = train_step(params, x, y)
            losses.append(float(loss))
        st.assert_sharding(params["w1"], "float32[64@data,256]")
    assert losses[-1] < losses[0], losses
    print(f"fsdp: loss {losses[0]:.4f} -> {losses[-1]:.4f}, w1 {st.typeof(params['w1'])}")


if __name__ == "__main__":
    main()
