"""Code ported from jax.experimental.shard_map that kept check_rep=.

JAX: TypeError: shard_map() got an unexpected keyword argument 'check_rep'.
"""

import jax
import jax.numpy as jnp
from jax import P

jax.config.update("jax_num_cpu_devices", 8)


def main():
    mesh = jax.make_mesh((8,), ("data",))
    with jax.set_mesh(mesh):
        x = jax.device_put(jnp.ones((16,)), P("data"))
        f = jax.shard_map(lambda b: b * 2, in_specs=P("data"), out_specs=P("data"),
                          check_rep=False)  # error: deprecated-api
        return f(x)


if __name__ == "__main__":
    main()
