"""A running total along the sequence dim, which is sharded over 'model'.

JAX: ShardingTypeError: Input should be unsharded over the axis being reduced. Got input type=float32[8@data,64@model] and axis=1
"""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

jax.config.update("jax_num_cpu_devices", 8)


@jax.jit
def positions(mask):
    return jnp.cumsum(mask, axis=1) - 1  # error: sharded-axis-op


def main():
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    with jax.set_mesh(mesh):
        mask = jax.device_put(jnp.ones((8, 64)), P("data", "model"))
        return positions(mask)


if __name__ == "__main__":
    main()
