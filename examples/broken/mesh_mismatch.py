"""A shard_map given a 1-D mesh inside a context that set the 2-D training mesh.

JAX: ValueError: The context mesh ... should match the mesh passed to shard_map.
"""

import jax
import jax.numpy as jnp
from jax import P

jax.config.update("jax_num_cpu_devices", 8)


def normalize(x, flat_mesh):
    def body(block):
        return block / jax.lax.psum(jnp.sum(block), "devices")
    return jax.shard_map(body, mesh=flat_mesh, in_specs=P("devices"), out_specs=P("devices"))(x)  # error: mesh-mismatch


def main():
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    flat = jax.make_mesh((8,), ("devices",))
    with jax.set_mesh(mesh):
        x = jnp.ones((16,))
        return jax.jit(normalize, static_argnums=1)(x, flat)


if __name__ == "__main__":
    main()
