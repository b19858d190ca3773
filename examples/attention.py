"""Multi-head self-attention with heads sharded over 'model' and the batch over 'data'.

The q/k/v projections are column-parallel over heads, so every head's attention runs
on one device group with no communication. The output projection contracts over the
sharded heads dim, so it names its output sharding and JAX all-reduces over 'model'.

    python examples/attention.py
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import PartitionSpec as P

import sharding_types as st
from sharding_types import Sharded, check_shardings

jax.config.update("jax_num_cpu_devices", 8)

BATCH, SEQ, D_MODEL, HEADS, HEAD_DIM = 64, 16, 64, 8, 8


@check_shardings
def attention(x: Sharded[jax.Array, "float32[B@data,S,D]"],
              wq: Sharded[jax.Array, "float32[D,H@model,K]"],
              wk: Sharded[jax.Array, "float32[D,H@model,K]"],
              wv: Sharded[jax.Array, "float32[D,H@model,K]"],
              wo: Sharded[jax.Array, "float32[H@model,K,D]"]) -> Sharded[jax.Array, "float32[B@data,S,D]"]:
    q = jnp.einsum("bsd,dhk->bshk", x, wq)
    k = jnp.einsum("bsd,dhk->bshk", x, wk)
    v = jnp.einsum("bsd,dhk->bshk", x, wv)
    st.assert_sharding(q, "float32[B@data,S,H@model,K]")
    scores = jnp.einsum("bqhk,bthk->bhqt", q, k) / jnp.sqrt(HEAD_DIM)
    st.assert_sharding(scores, "float32[B@data,H@model,S,S]")
    probs = jax.nn.softmax(scores, axis=-1)
    ctx = jnp.einsum("bhqt,bthk->bqhk", probs, v)
    st.assert_sharding(ctx, "float32[B@data,S,H@model,K]")
    # contracting over the sharded heads dim: name the output sharding (all-reduce)
    return jnp.einsum("bshk,hkd->bsd", ctx, wo, out_sharding=P("data", None, None))


def reference(x, wq, wk, wv, wo):
    x, wq, wk, wv, wo = (np.asarray(a, np.float64) for a in (x, wq, wk, wv, wo))
    q, k, v = (np.einsum("bsd,dhk->bshk", x, w) for w in (wq, wk, wv))
    s = np.einsum("bqhk,bthk->bhqt", q, k) / np.sqrt(HEAD_DIM)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    return np.einsum("bshk,hkd->bsd", np.einsum("bhqt,bthk->bqhk", p, v), wo)


def main():
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    keys = jax.random.split(jax.random.key(0), 5)
    with jax.set_mesh(mesh):
        x = jax.device_put(jax.random.normal(keys[0], (BATCH, SEQ, D_MODEL)), P("data", None, None))
        wq, wk, wv = (jax.device_put(jax.random.normal(k, (D_MODEL, HEADS, HEAD_DIM)) * 0.1,
                                     P(None, "model", None)) for k in keys[1:4])
        wo = jax.device_put(jax.random.normal(keys[4], (HEADS, HEAD_DIM, D_MODEL)) * 0.1,
                            P("model", None, None))
        out = jax.jit(attention)(x, wq, wk, wv, wo)
        st.assert_sharding(out, "float32[64@data,16,64]")
    np.testing.assert_allclose(np.asarray(out), reference(x, wq, wk, wv, wo), rtol=1e-4, atol=1e-4)
    print(f"attention: out {st.typeof(out)}, matches the unsharded result")


if __name__ == "__main__":
    main()
