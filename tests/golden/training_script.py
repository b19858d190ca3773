"""A training script with several sharding defects, for golden output."""

import jax
import jax.numpy as jnp
from jax.experimental.pjit import pjit
from jax.sharding import NamedSharding, PartitionSpec as P

BATCH, D_MODEL, VOCAB = 64, 128, 1000
AXES = ("data", "model")
ROW = P("data", None)


def make_mesh():
    return jax.make_mesh((2, 4), AXES)


def embed(tokens, table):
    return table[tokens]


def main():
    mesh = make_mesh()
    table = jax.device_put(jnp.zeros((VOCAB, D_MODEL)), NamedSharding(mesh, P("model", None)))
    with jax.set_mesh(mesh):
        x = jax.device_put(jnp.zeros((BATCH, D_MODEL)), ROW)
        y = jax.device_put(jnp.zeros((BATCH,)), P("data", "model"))
        z = jax.device_put(jnp.zeros((BATCH, D_MODEL)), P("batch", None))
        step = pjit(embed)
        ok = jax.device_put(jnp.zeros((BATCH, D_MODEL)), P("data", None))  # shardcheck: ignore[SC101]
    return table, x, y, z, step, ok


if __name__ == "__main__":
    main()
