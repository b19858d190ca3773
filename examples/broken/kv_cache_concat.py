"""A KV cache extended with a replicated new entry: concatenate needs one sharding.

JAX: ShardingTypeError: All operands should have the same sharding.
"""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

jax.config.update("jax_num_cpu_devices", 8)


@jax.jit
def extend(cache, k_new):
    return jnp.concatenate([cache, k_new], axis=1)  # error: operand-sharding-mismatch


def main():
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    with jax.set_mesh(mesh):
        cache = jax.device_put(jnp.zeros((4, 16, 8)), P("data", None, None))
        k_new = jnp.ones((4, 1, 8))
        return extend(cache, k_new)


if __name__ == "__main__":
    main()
