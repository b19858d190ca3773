"""A token router for a mixture-of-experts layer as a shard_map kernel over the batch:
it returns the routing weights per token and two auxiliary losses, each reduced over
the data shards."""

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

N_EXPERTS, TOP_K = 4, 2


def route(logits):
    probs = jax.nn.softmax(logits, axis=-1)
    top_vals, top_idx = jax.lax.top_k(probs, TOP_K)
    dispatch = jax.nn.one_hot(top_idx, N_EXPERTS).sum(axis=-2)  # [tokens, experts]
    weights = dispatch * probs
    # load balancing: fraction of tokens per expert times mean router probability
    tokens = jax.lax.psum(logits.shape[0], "data")
    frac = jax.lax.psum(dispatch.sum(0), "data") / tokens
    mean_prob = jax.lax.psum(probs.sum(0), "data") / tokens
    balance_loss = N_EXPERTS * jnp.sum(frac * mean_prob)
    z_loss = jax.lax.psum(jnp.sum(jax.nn.logsumexp(logits, axis=-1) ** 2), "data") / tokens
    return weights, balance_loss, z_loss


def make_router(mesh):
    return jax.jit(jax.shard_map(route, mesh=mesh, in_specs=P("data", None),
                                 out_specs=(P("data", None), P())))


def main():
    mesh = jax.make_mesh((8,), ("data",))
    router = make_router(mesh)
    logits = jax.random.normal(jax.random.key(0), (64, N_EXPERTS))
    logits = jax.device_put(logits, NamedSharding(mesh, P("data", None)))
    weights, balance, z = router(logits)
    print(jax.typeof(weights), float(balance), float(z))


if __name__ == "__main__":
    main()
