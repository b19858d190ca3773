"""Tensor-parallel MLP whose row-parallel weight names a mesh axis with a typo.

JAX: ValueError: Resource axis: modle of P('modle', None) is not found in mesh.
"""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

jax.config.update("jax_num_cpu_devices", 8)

D_MODEL, D_FF = 64, 256


def main():
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    with jax.set_mesh(mesh):
        w_in = jax.device_put(jnp.ones((D_MODEL, D_FF)), P(None, "model"))
        w_out = jax.device_put(jnp.ones((D_FF, D_MODEL)), P("modle", None))  # error: unknown-mesh-axis
        return w_in, w_out


if __name__ == "__main__":
    main()
