"""A Linen residual block with a square (embed x embed) projection; its kernel names
two different logical axes so that each dim is sharded on its own mesh axis."""

import jax
import jax.numpy as jnp
import optax
from flax import linen as nn
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

RULES = (("batch", "data"), ("embed", "model"), ("embed_out", None))


class ResidualBlock(nn.Module):
    dim: int = 32

    @nn.compact
    def __call__(self, x):
        kernel = self.param(
            "kernel",
            nn.with_logical_partitioning(nn.initializers.orthogonal(), ("embed", "embed_out")),
            (self.dim, self.dim))
        bias = self.param("bias", nn.with_logical_partitioning(nn.initializers.zeros_init(),
                                                               ("embed_out",)), (self.dim,))
        y = jnp.dot(nn.LayerNorm()(x), kernel) + bias
        return x + nn.with_logical_constraint(nn.gelu(y), ("batch", "embed"))


def main():
    mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    block = ResidualBlock()
    x = jnp.ones((8, 32))
    tx = optax.adam(1e-3)
    with jax.set_mesh(mesh), nn.logical_axis_rules(RULES):
        abstract = jax.eval_shape(block.init, jax.random.key(0), x)
        shardings = nn.logical_to_mesh_sharding(nn.get_partition_spec(abstract), mesh, RULES)
        variables = jax.jit(block.init, out_shardings=shardings)(jax.random.key(0), x)
        params = nn.meta.unbox(variables["params"])
        opt_state = tx.init(params)

        @jax.jit
        def step(params, opt_state, x):
            loss, grads = jax.value_and_grad(
                lambda p: jnp.mean(block.apply({"params": p}, x) ** 2))(params)
            updates, opt_state = tx.update(grads, opt_state)
            return optax.apply_updates(params, updates), opt_state, loss

        x = jax.device_put(x, NamedSharding(mesh, P("data", None)))
        params, opt_state, loss = step(params, opt_state, x)
    print("loss", float(loss))


if __name__ == "__main__":
    main()
