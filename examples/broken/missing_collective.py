"""A row-parallel layer written with shard_map that forgot the all-reduce.

Each device multiplies its slice of the hidden dim, so the block is a partial sum over
'model'; out_specs=P("data", None) claims it is complete and replicated over 'model'.
JAX: ValueError: shard_map ... was given out_specs which require replication which
can't be statically inferred.
"""

import jax
import jax.numpy as jnp
from jax import P

jax.config.update("jax_num_cpu_devices", 8)

BATCH, D_FF, D_MODEL = 16, 256, 64


def row_parallel(h_block, w_block):
    out = jnp.dot(h_block, w_block)
    return out


def main():
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    with jax.set_mesh(mesh):
        h = jax.device_put(jnp.ones((BATCH, D_FF)), P("data", "model"))
        w = jax.device_put(jnp.ones((D_FF, D_MODEL)), P("model", None))
        layer = jax.shard_map(row_parallel, in_specs=(P("data", "model"), P("model", None)),
                              out_specs=P("data", None))  # error: missing-collective
        return jax.jit(layer)(h, w)


if __name__ == "__main__":
    main()
