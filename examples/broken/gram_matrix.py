"""A Gram matrix of row-sharded embeddings: both result dims would be sharded over 'data'.

JAX: ShardingTypeError: dot_general operation with inputs: f32[32@data,16], f32[16,32@data] produces an illegally sharded result: f32[32@data,32@data]
"""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

jax.config.update("jax_num_cpu_devices", 8)


def similarity(z):
    z = z / jnp.linalg.norm(z, axis=-1, keepdims=True)
    return z @ z.T  # error: illegal-result-sharding


def main():
    mesh = jax.make_mesh((8,), ("data",))
    with jax.set_mesh(mesh):
        z = jax.device_put(jnp.ones((32, 16)), P("data", None))
        return jax.jit(similarity)(z)


if __name__ == "__main__":
    main()
