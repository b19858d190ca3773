"""A bias vector placed with a 2-entry spec copied from the weight matrix.

JAX 0.10.2: AssertionError: (1, P(None, 'model')) from inside device_put.
JAX 0.12: ValueError: Length of sharding.spec (2) must be equal to aval's ndim (1).
"""

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

jax.config.update("jax_num_cpu_devices", 8)

D_IN, D_OUT = 32, 128


def main():
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    w_spec = NamedSharding(mesh, P(None, "model"))
    w = jax.device_put(jnp.zeros((D_IN, D_OUT)), w_spec)
    b = jax.device_put(jnp.zeros((D_OUT,)), NamedSharding(mesh, P(None, "model")))  # error: spec-rank-mismatch
    return w, b


if __name__ == "__main__":
    main()
