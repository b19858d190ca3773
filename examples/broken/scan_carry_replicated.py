"""A per-shard running sum written with lax.scan whose carry starts as jnp.zeros.

Inside the shard_map body each row of the block varies over 'data' ({V:data}); the
initial carry jnp.zeros((D,)) does not, so after one step the carry's type changed.
JAX: TypeError: scan body function carry input and carry output must have equal types.
"""

import jax
import jax.numpy as jnp
from jax import P

jax.config.update("jax_num_cpu_devices", 8)

ROWS, D = 16, 32


def running_sum(block):
    def step(total, row):
        return total + row, total

    total, prefix = jax.lax.scan(step, jnp.zeros((D,)), block)  # error: control-flow-type-mismatch
    return prefix


def main():
    mesh = jax.make_mesh((8,), ("data",))
    with jax.set_mesh(mesh):
        x = jax.device_put(jnp.ones((ROWS, D)), P("data"))
        return jax.jit(jax.shard_map(running_sum, in_specs=P("data"), out_specs=P("data")))(x)


if __name__ == "__main__":
    main()
