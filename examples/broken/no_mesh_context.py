"""A script that builds its mesh but never sets it before placing the batch.

JAX: ValueError: Please set a mesh via `jax.set_mesh` if a PartitionSpec is passed to
device_put.
"""

import jax
import jax.numpy as jnp
from jax import P

jax.config.update("jax_num_cpu_devices", 8)


def load_batch():
    return jax.device_put(jnp.ones((64, 32)), P("data", None))  # error: no-mesh-context


def main():
    mesh = jax.make_mesh((8,), ("data",))
    batch = load_batch()
    return mesh, batch


if __name__ == "__main__":
    main()
