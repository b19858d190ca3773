"""Sharded initialisation of a Linen model built in setup(): the out_shardings of the
jitted init must describe what init returns, the whole variables dict."""

import jax
import jax.numpy as jnp
from flax import linen as nn
from jax.sharding import AxisType

RULES = (("batch", "data"), ("embed", "model"), ("kv", None), ("heads", None))


class AttentionProjections(nn.Module):
    embed: int = 16
    heads: int = 2
    head_dim: int = 8

    def setup(self):
        init = nn.with_logical_partitioning(nn.initializers.lecun_normal(),
                                            ("embed", "heads", "kv"))
        shape = (self.embed, self.heads, self.head_dim)
        self.query = self.param("query", init, shape)
        self.key = self.param("key", init, shape)
        self.value = self.param("value", init, shape)

    def __call__(self, x):
        q = jnp.einsum("bld,dhk->blhk", x, self.query)
        k = jnp.einsum("bld,dhk->blhk", x, self.key)
        v = jnp.einsum("bld,dhk->blhk", x, self.value)
        return q, k, v


def main():
    mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    model = AttentionProjections()
    x = jnp.ones((4, 8, 16))
    with jax.set_mesh(mesh), nn.logical_axis_rules(RULES):
        abstract = jax.eval_shape(model.init, jax.random.key(0), x)
        shardings = nn.logical_to_mesh_sharding(nn.get_partition_spec(abstract), mesh, RULES)
        variables = jax.jit(model.init, out_shardings=shardings)(jax.random.key(0), x)
        q, _, _ = jax.jit(model.apply)(variables, x)
    print(q.shape, variables["params"]["query"].value.sharding.spec)


if __name__ == "__main__":
    main()
