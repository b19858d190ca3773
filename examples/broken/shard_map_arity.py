"""A shard_map whose in_specs forgot the bias argument.

JAX: ValueError: pytree structure error: different lengths of tuple at key path
shard_map in_specs.
"""

import jax
import jax.numpy as jnp
from jax import P

jax.config.update("jax_num_cpu_devices", 8)


def layer(x, w, b):
    return jax.lax.psum(x @ w, "model") + b


def main():
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    with jax.set_mesh(mesh):
        x = jax.device_put(jnp.ones((8, 16)), P("data", "model"))
        w = jax.device_put(jnp.ones((16, 4)), P("model", None))
        b = jnp.zeros((4,))
        f = jax.shard_map(layer, in_specs=(P("data", "model"), P("model", None)), out_specs=P("data", None))  # error: shard-map-arity-mismatch
        return f(x, w, b)


if __name__ == "__main__":
    main()
