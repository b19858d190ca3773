"""An embedding table whose vocabulary does not divide the 'model' axis.

JAX: ValueError: Sharding spec ('model',) implies that array axis 0 is partitioned 4
times, but does not evenly divide the dimension size 30.
"""

import jax
import jax.numpy as jnp
from jax import P

jax.config.update("jax_num_cpu_devices", 8)

VOCAB, D_MODEL = 30, 64


def main():
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    with jax.set_mesh(mesh):
        table = jnp.zeros((VOCAB, D_MODEL), out_sharding=P("model", None))  # error: indivisible-dimension
        return table


if __name__ == "__main__":
    main()
