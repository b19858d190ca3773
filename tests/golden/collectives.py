"""shard_map bodies: a collective over an axis the shard_map does not bind, and arity."""

import jax
import jax.numpy as jnp
from jax import P


def reduce_rows(block):
    total = jax.lax.psum(block, "data")
    return jax.lax.pmean(total, "model")


def two_outputs(block):
    return block, block * 2, block * 3


def main():
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    with jax.set_mesh(mesh):
        x = jax.device_put(jnp.ones((8, 16)), P("data", None))
        a = jax.shard_map(reduce_rows, in_specs=P("data", None), out_specs=P(None, None),
                          axis_names={"data"})(x)
        b = jax.shard_map(two_outputs, in_specs=P("data", None),
                          out_specs=(P("data", None), P("data", None)))(x)
        return a, b


if __name__ == "__main__":
    main()
