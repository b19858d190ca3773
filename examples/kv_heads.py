"""Grouped-query attention's key/value projection, with its 12 KV heads split over 'model'.

Correct as written on the 2x4 mesh here: 'model' has 4 devices and 12 heads divide.
On a production mesh with 8-way tensor parallelism they do not, and JAX rejects the
reshard at trace time. Nothing on 8 devices shows it; the production mesh does,
without the hardware:

    shardcheck confirm --mesh data=64,model=8 examples/kv_heads.py

reports JAX's error at the reshard line, next to the static finding for the same
line (indivisible-dimension).

    python examples/kv_heads.py
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import PartitionSpec as P
from jax.sharding import reshard

import sharding_types as st
from sharding_types import Sharded, check_shardings

jax.config.update("jax_num_cpu_devices", 8)

BATCH, SEQ, D_MODEL, KV_HEADS, HEAD_DIM = 128, 8, 64, 12, 16


@jax.jit
@check_shardings
def project_kv(x: Sharded[jax.Array, "float32[B@data,S,D]"],
               w: Sharded[jax.Array, "float32[D,H,K]"]) -> Sharded[jax.Array, "float32[B@data,S,H@model,K]"]:
    kv = jnp.einsum("bsd,dhk->bshk", x, w)
    # attention runs per head: put the heads on 'model' (needs KV_HEADS % model == 0)
    return reshard(kv, P("data", None, "model", None))


def main():
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    k1, k2 = jax.random.split(jax.random.key(0))
    with jax.set_mesh(mesh):
        x = jax.device_put(jax.random.normal(k1, (BATCH, SEQ, D_MODEL)), P("data", None, None))
        w = jax.device_put(jax.random.normal(k2, (D_MODEL, KV_HEADS, HEAD_DIM)) * 0.1, P())
        kv = project_kv(x, w)
        st.assert_sharding(kv, "float32[128@data,8,12@model,16]")
    expected = np.einsum("bsd,dhk->bshk", np.asarray(x), np.asarray(w))
    np.testing.assert_allclose(np.asarray(kv), expected, rtol=1e-4, atol=1e-4)
    print(f"kv_heads: kv {st.typeof(kv)}, matches the unsharded result")


if __name__ == "__main__":
    main()
