"""A residual connection that adds a batch-sharded stream to a feature-sharded one.

JAX: ShardingTypeError: add got incompatible shardings for broadcasting: ('data', None), ('model', None).
"""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

jax.config.update("jax_num_cpu_devices", 8)


@jax.jit
def block(x, skip):
    h = jnp.tanh(x) * 0.5
    return h + skip  # error: elementwise-sharding-conflict


def main():
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    with jax.set_mesh(mesh):
        x = jax.device_put(jnp.ones((8, 32)), P("data", None))
        skip = jax.device_put(jnp.ones((8, 32)), P("model", None))
        return block(x, skip)


if __name__ == "__main__":
    main()
