"""A ring-free all-gather attention kernel for sequence parallelism: queries stay
sequence-sharded, keys and values are all-gathered over the "seq" axis."""

import functools

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

SEQ = "seq"


def seq_parallel_attention(q, k, v, bias):
    k_all = jax.lax.all_gather(k, SEQ, axis=1, tiled=True)
    v_all = jax.lax.all_gather(v, SEQ, axis=1, tiled=True)
    logits = jnp.einsum("bqd,bkd->bqk", q, k_all) / jnp.sqrt(q.shape[-1]) + bias
    return jnp.einsum("bqk,bkd->bqd", jax.nn.softmax(logits, axis=-1), v_all)


def build(mesh):
    qkv = P("data", SEQ, None)
    return jax.jit(jax.shard_map(
        seq_parallel_attention, mesh=mesh,
        in_specs=(qkv, qkv, qkv),
        out_specs=qkv))


def causal_bias(batch, length):
    mask = jnp.tril(jnp.ones((length, length), bool))
    return jnp.broadcast_to(jnp.where(mask, 0.0, -1e9), (batch, length, length))


def main():
    mesh = jax.make_mesh((2, 4), ("data", SEQ))
    attend = build(mesh)
    place = functools.partial(jax.device_put, device=NamedSharding(mesh, P("data", SEQ, None)))
    key = jax.random.key(0)
    q, k, v = (place(jax.random.normal(kk, (4, 16, 8))) for kk in jax.random.split(key, 3))
    out = attend(q, k, v, place(causal_bias(4, 16)))
    print(jax.typeof(out))


if __name__ == "__main__":
    main()
