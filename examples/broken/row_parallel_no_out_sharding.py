"""A Megatron row-parallel layer that forgets to say how its partial sums combine.

The hidden activation is sharded over 'model' along F, and so is the second weight's
contracting dim: every device holds a partial sum, and JAX will not guess whether to
all-reduce it, reduce-scatter it or keep it unreduced.

JAX: ShardingTypeError: Contracting dimensions are sharded and it is ambiguous how the output should be sharded. Please specify the output sharding via the `out_sharding` parameter.
"""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

jax.config.update("jax_num_cpu_devices", 8)


@jax.jit
def mlp(x, w_in, w_out):
    h = jax.nn.relu(x @ w_in)
    return h @ w_out  # error: contracting-sharding-mismatch


def main():
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    with jax.set_mesh(mesh):
        x = jax.device_put(jnp.ones((16, 64)), P("data", None))
        w_in = jax.device_put(jnp.ones((64, 256)), P(None, "model"))
        w_out = jax.device_put(jnp.ones((256, 64)), P("model", None))
        return mlp(x, w_in, w_out)


if __name__ == "__main__":
    main()
