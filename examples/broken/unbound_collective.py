"""A shard_map over 'data' only whose body reduces over 'model'.

JAX: NameError: Found an unbound axis name: model.
"""

import jax
import jax.numpy as jnp
from jax import P

jax.config.update("jax_num_cpu_devices", 8)


def local_sum(block):
    return jax.lax.psum(block, "model")  # error: unbound-collective-axis


def main():
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    with jax.set_mesh(mesh):
        x = jax.device_put(jnp.ones((8, 4)), P("data", None))
        f = jax.shard_map(local_sum, in_specs=P("data", None), out_specs=P("data", None),
                          axis_names={"data"})
        return jax.jit(f)(x)


if __name__ == "__main__":
    main()
