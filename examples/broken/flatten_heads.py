"""Flattening (batch, heads) where only the heads dim is sharded: JAX cannot keep it.

JAX: ShardingTypeError: This reshape is not supported. Please specify the sharding of the output via the `out_sharding` argument of jax.lax.reshape.
"""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

jax.config.update("jax_num_cpu_devices", 8)


@jax.jit
def merge_heads(scores):
    return scores.reshape(8 * 16, 32)  # error: reshape-sharded-dim


def main():
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    with jax.set_mesh(mesh):
        scores = jax.device_put(jnp.ones((8, 16, 32)), P(None, "model", None))
        return merge_heads(scores)


if __name__ == "__main__":
    main()
