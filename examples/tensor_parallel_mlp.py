"""Megatron-style tensor-parallel MLP: a column-parallel then a row-parallel layer.

The first weight is split by columns over 'model', so ``x @ w_in`` needs no
communication and leaves the hidden activation sharded over 'model'. The second weight
is split by rows, so its contraction runs over the sharded dim: each device holds a
partial sum, and ``out_sharding=P("data", None)`` asks JAX for the all-reduce over
'model' that completes it.

    python examples/tensor_parallel_mlp.py
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import PartitionSpec as P

import sharding_types as st
from sharding_types import Sharded, check_shardings

jax.config.update("jax_num_cpu_devices", 8)

BATCH, D_MODEL, D_FF = 128, 64, 256


@jax.jit
@check_shardings
def mlp(x: Sharded[jax.Array, "float32[B@data,D]"],
        w_in: Sharded[jax.Array, "float32[D,F@model]"],
        w_out: Sharded[jax.Array, "float32[F@model,D]"]) -> Sharded[jax.Array, "float32[B@data,D]"]:
    h = jax.nn.gelu(x @ w_in)  # column-parallel: no communication
    st.assert_sharding(h, "float32[B@data,F@model]")
    # row-parallel: contracting over F, sharded on both sides; JAX needs the output
    # sharding spelled out, and inserts the all-reduce over 'model' to produce it.
    return jnp.dot(h, w_out, out_sharding=P("data", None))


def main():
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    with jax.set_mesh(mesh):
        k1, k2, k3 = jax.random.split(jax.random.key(0), 3)
        x = jax.device_put(jax.random.normal(k1, (BATCH, D_MODEL)), P("data", None))
        w_in = jax.device_put(jax.random.normal(k2, (D_MODEL, D_FF)) * 0.05, P(None, "model"))
        w_out = jax.device_put(jax.random.normal(k3, (D_FF, D_MODEL)) * 0.05, P("model", None))
        out = mlp(x, w_in, w_out)
        st.assert_sharding(out, "float32[128@data,64]")
    expected = jax.nn.gelu(np.asarray(x) @ np.asarray(w_in)) @ np.asarray(w_out)
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-4, atol=1e-4)
    print(f"tensor_parallel_mlp: out {st.typeof(out)}, matches the unsharded result")


if __name__ == "__main__":
    main()
