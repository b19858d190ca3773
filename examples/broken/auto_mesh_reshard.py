"""reshard on a mesh built with jax.sharding.Mesh, whose axes default to Auto.

JAX: ValueError: PartitionSpec passed to reshard cannot contain axis names that are of
type Auto or Manual.
"""

import jax
import jax.numpy as jnp
from jax.experimental import mesh_utils
from jax.sharding import Mesh
from jax.sharding import PartitionSpec as P

jax.config.update("jax_num_cpu_devices", 8)


def main():
    mesh = Mesh(mesh_utils.create_device_mesh((2, 4)), ("data", "model"))
    with jax.set_mesh(mesh):
        x = jnp.ones((8, 16))
        y = jax.sharding.reshard(x, P("data", None))  # error: axis-type-mismatch
        return y


if __name__ == "__main__":
    main()
