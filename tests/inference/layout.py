"""Reductions, transposes, reshapes, indexing and multi-operand ops on an Explicit mesh."""
import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P, reshard


def main():
    mesh = jax.make_mesh((2, 4), ("x", "y"))
    with jax.set_mesh(mesh):
        a = jax.device_put(jnp.zeros((8, 16)), P("x", "y"))
        s0 = a.sum(axis=0)
        s1 = jnp.sum(a, axis=1)
        sa = a.sum()
        mn = jnp.mean(a, axis=-1, keepdims=True)
        mx = jnp.max(a, axis=(0, 1))
        am = jnp.argmax(a, axis=1)
        bs = (a > 0).sum()
        lse = jax.nn.logsumexp(a, axis=-1)
        sm = jax.nn.softmax(a, axis=0)
        T = a.T
        x3 = jax.device_put(jnp.zeros((2, 8, 16)), P("x", None, "y"))
        tp = jnp.transpose(x3, (2, 0, 1))
        sw = jnp.swapaxes(x3, 0, 2)
        ed = jnp.expand_dims(a, 1)
        sq = jnp.squeeze(ed, 1)
        merged = a.reshape(128)
        rows = jax.device_put(jnp.zeros((16, 8)), P("x", None))
        split = rows.reshape(4, 4, 8)
        split_minor = rows.reshape(16, 2, 4)
        add1 = a.reshape(8, 1, 16)
        neg1 = rows.reshape(-1, 4, 8)
        rs = jnp.reshape(rows, (2, 8, 8))
        c0 = jax.device_put(jnp.zeros((8, 16)), P("x", None))
        cols = c0[:, :4]
        ell = c0[..., 0]
        new = c0[None]
        full = c0[:]
        col = c0[:, 3]
        cat = jnp.concatenate([c0, c0], axis=1)
        cat0 = jnp.concatenate([c0, c0], axis=0)
        st = jnp.stack([c0, c0], axis=1)
        wh = jnp.where(c0 > 0, c0, 0.0)
        wh2 = jnp.where(c0 > 0, jax.device_put(jnp.zeros((8, 16)), P(None, "y")), 0.0)
        dus = jax.lax.dynamic_update_slice(c0, jax.device_put(jnp.ones((8, 4)), P("x", None)), (0, 0))
        cs = jnp.cumsum(c0, axis=1)
        so = jnp.sort(c0, axis=1)
        oh = jax.nn.one_hot(jax.device_put(jnp.arange(8), P("x")), 16)
        moved = reshard(c0, P(None, "y"))
        cl = jnp.clip(c0, 0.0, 1.0)
    return s0, moved


if __name__ == "__main__":
    main()
