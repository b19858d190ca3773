"""A hand-written sharded matmul with shard_map and explicit collectives.

``x`` is split over 'data' by rows and over 'model' along the contracting dim, ``w``
over 'model' by rows. Each device multiplies its blocks into a partial sum that varies
over 'model'; ``psum`` completes it (all-reduce), and ``psum_scatter`` completes it
while leaving the columns split over 'model' (reduce-scatter, half the traffic).

    python examples/shard_map_matmul.py
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import PartitionSpec as P

import sharding_types as st

jax.config.update("jax_num_cpu_devices", 8)

M, K, N = 16, 64, 32


def matmul_allreduce(xb, wb):
    st.assert_sharding(xb, "float32[8,16]{V:(data,model)}")
    st.assert_sharding(wb, "float32[16,32]{V:model}")
    partial = xb @ wb
    st.assert_sharding(partial, "float32[8,32]{V:(data,model)}")
    total = jax.lax.psum(partial, "model")
    return st.assert_sharding(total, "float32[8,32]{V:data}")


def matmul_reduce_scatter(xb, wb):
    partial = xb @ wb
    block = jax.lax.psum_scatter(partial, "model", scatter_dimension=1, tiled=True)
    return st.assert_sharding(block, "float32[8,8]{V:(data,model)}")


@jax.jit
def sharded_matmuls(x, w):
    full = jax.shard_map(matmul_allreduce, in_specs=(P("data", "model"), P("model", None)),
                         out_specs=P("data", None))(x, w)
    split = jax.shard_map(matmul_reduce_scatter, in_specs=(P("data", "model"), P("model", None)),
                          out_specs=P("data", "model"))(x, w)
    st.assert_sharding(full, "float32[16@data,32]")
    st.assert_sharding(split, "float32[16@data,32@model]")
    return full, split


def main():
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    with jax.set_mesh(mesh):
        x = jax.device_put(jnp.arange(M * K, dtype=jnp.float32).reshape(M, K) / 100.0,
                           P("data", "model"))
        w = jax.device_put(jnp.ones((K, N), jnp.float32) / K, P("model", None))
        full, split = sharded_matmuls(x, w)
    expected = np.asarray(x) @ np.asarray(w)
    np.testing.assert_allclose(np.asarray(full), expected, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(split), expected, rtol=1e-5)
    print(f"shard_map_matmul: {st.typeof(full)} and {st.typeof(split)} match x @ w")


if __name__ == "__main__":
    main()
