"""A layer annotated for batch-sharded input, called with a feature-sharded activation.

Both static checkers see it: shardcheck infers the activation's type, and mypy with
the shardcheck plugin reads the annotation (error code `sharding`). At runtime
@check_shardings rejects the call before JAX traces the layer.

JAX: ShardingMismatchError: layer(): argument 'x' does not match float32[B@data,D]
"""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

from sharding_types import Sharded, check_shardings

jax.config.update("jax_num_cpu_devices", 8)


@check_shardings
def layer(x: Sharded[jax.Array, "float32[B@data,D]"]) -> Sharded[jax.Array, "float32[B@data,D]"]:
    return jnp.tanh(x)


def main():
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    with jax.set_mesh(mesh):
        h: Sharded[jax.Array, "float32[8,64@model]"] = jax.device_put(jnp.ones((8, 64)), P(None, "model"))
        return layer(h)  # error: sharding-annotation-mismatch


if __name__ == "__main__":
    main()
