"""An NNX grouped-query attention layer whose logical axis rules live in the model
config (a dataclass field with a default factory) and are entered around construction."""

import dataclasses

import jax
import jax.numpy as jnp
from flax import nnx
from jax.sharding import PartitionSpec as P


def default_rules():
    return [("batch", "data"), ("embed", None), ("q_heads", "model"),
            ("kv", "model"), ("head_dim", None)]


@dataclasses.dataclass
class GQAConfig:
    embed: int = 32
    q_heads: int = 8
    kv_heads: int = 4
    head_dim: int = 4
    mesh_shape: tuple = (2, 4)
    mesh_axes: tuple = ("data", "model")
    rules: list = dataclasses.field(default_factory=default_rules)


class GroupedQueryAttention(nnx.Module):
    def __init__(self, cfg: GQAConfig, rngs: nnx.Rngs):
        init = nnx.initializers.lecun_normal()
        self.cfg = cfg
        self.wq = nnx.Param(nnx.with_partitioning(init, ("embed", "q_heads", "head_dim"))(
            rngs.params(), (cfg.embed, cfg.q_heads, cfg.head_dim)))
        self.wkv = nnx.Param(nnx.with_partitioning(init, ("embed", "kv_heads", "head_dim"))(
            rngs.params(), (cfg.embed, cfg.kv_heads, 2 * cfg.head_dim)))

    def __call__(self, x):
        spec = P("data", None, "model", None)
        q = jnp.einsum("bte,ehd->bthd", x, self.wq[...], out_sharding=spec)
        kv = jnp.einsum("bte,ehd->bthd", x, self.wkv[...], out_sharding=spec)
        k, v = jnp.split(kv, 2, axis=-1)
        group = self.cfg.q_heads // self.cfg.kv_heads
        k = jnp.repeat(k, group, axis=2, out_sharding=spec)
        v = jnp.repeat(v, group, axis=2, out_sharding=spec)
        probs = jax.nn.softmax(jnp.einsum("bqhd,bkhd->bhqk", q, k), axis=-1)
        return jnp.einsum("bhqk,bkhd->bqhd", probs, v)


def main():
    cfg = GQAConfig()
    mesh = jax.make_mesh(cfg.mesh_shape, cfg.mesh_axes)
    with jax.set_mesh(mesh), nnx.logical_axis_rules(cfg.rules):
        layer = GroupedQueryAttention(cfg, nnx.Rngs(0))
        x = jnp.ones((4, 6, cfg.embed), out_sharding=P("data", None, None))
        out = nnx.jit(lambda m, x: m(x))(layer, x)
    print(jax.typeof(out))


if __name__ == "__main__":
    main()
