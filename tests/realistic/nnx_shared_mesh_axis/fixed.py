"""An NNX attention projection whose parameters are sharded through a rule table;
two logical names of one kernel must not land on the same mesh axis."""

import dataclasses

import jax
import jax.numpy as jnp
from flax import nnx
from jax.sharding import PartitionSpec as P


@dataclasses.dataclass(frozen=True)
class AttnConfig:
    embed: int = 32
    heads: int = 4
    head_dim: int = 8


RULES = (
    ("batch", "data"),
    ("embed", "data"),
    ("heads", "model"),
    ("kv", None),
)


class QKVProjection(nnx.Module):
    def __init__(self, cfg: AttnConfig, *, rngs: nnx.Rngs):
        init = nnx.initializers.xavier_uniform()
        shape = (cfg.embed, cfg.heads, cfg.head_dim)
        self.q = nnx.Param(nnx.with_partitioning(init, ("embed", "heads", "kv"))(
            rngs.params(), shape))
        self.k = nnx.Param(nnx.with_partitioning(init, ("embed", "heads", "kv"))(
            rngs.params(), shape))
        self.v = nnx.Param(nnx.with_partitioning(init, ("embed", "heads", "kv"))(
            rngs.params(), shape))

    def __call__(self, x):
        # x: [batch, length, embed]; the projections come out head-sharded
        spec = P("data", None, "model", None)
        q = jnp.einsum("ble,ehd->blhd", x, self.q[...], out_sharding=spec)
        k = jnp.einsum("ble,ehd->blhd", x, self.k[...], out_sharding=spec)
        v = jnp.einsum("ble,ehd->blhd", x, self.v[...], out_sharding=spec)
        return q, k, v


def main():
    cfg = AttnConfig()
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    with jax.set_mesh(mesh), nnx.logical_axis_rules(RULES):
        proj = QKVProjection(cfg, rngs=nnx.Rngs(0))
        x = jnp.ones((4, 6, cfg.embed), out_sharding=P("data", None, None))
        q, k, v = nnx.jit(lambda m, x: m(x))(proj, x)
    print(jax.typeof(q), jax.typeof(proj.q[...]))


if __name__ == "__main__":
    main()
