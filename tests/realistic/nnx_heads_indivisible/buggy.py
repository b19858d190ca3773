"""Multi-head self-attention in Flax NNX with per-head projection kernels sharded
over the heads dim; the head count comes from a model config."""

import dataclasses

import jax
import jax.numpy as jnp
from flax import nnx
from jax.sharding import PartitionSpec as P


@dataclasses.dataclass(frozen=True)
class ModelConfig:
    d_model: int = 48
    num_heads: int = 6
    seq_len: int = 8

    @property
    def head_dim(self) -> int:
        return self.d_model // self.num_heads


class SelfAttention(nnx.Module):
    def __init__(self, cfg: ModelConfig, *, rngs: nnx.Rngs):
        self.cfg = cfg
        kernel = nnx.with_partitioning(nnx.initializers.lecun_normal(), (None, "model", None))
        self.qkv = nnx.LinearGeneral(cfg.d_model, (cfg.num_heads, 3 * cfg.head_dim),
                                     kernel_init=kernel, use_bias=False, rngs=rngs)
        self.out = nnx.LinearGeneral((cfg.num_heads, cfg.head_dim), cfg.d_model, axis=(-2, -1),
                                     kernel_init=nnx.with_partitioning(
                                         nnx.initializers.lecun_normal(), ("model", None, None)),
                                     use_bias=False, rngs=rngs)

    def __call__(self, x):
        qkv = self.qkv(x, out_sharding=P("data", None, "model", None))
        q, k, v = jnp.split(qkv, 3, axis=-1)
        logits = jnp.einsum("bqhd,bkhd->bhqk", q, k) / jnp.sqrt(self.cfg.head_dim)
        weights = jax.nn.softmax(logits, axis=-1)
        ctx = jnp.einsum("bhqk,bkhd->bqhd", weights, v)
        return self.out(ctx, out_sharding=P("data", None, None))


def main():
    cfg = ModelConfig()
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    with jax.set_mesh(mesh):
        attn = SelfAttention(cfg, rngs=nnx.Rngs(0))
        x = jax.random.normal(jax.random.key(0), (4, cfg.seq_len, cfg.d_model),
                              out_sharding=P("data", None, None))
        y = nnx.jit(lambda m, x: m(x))(attn, x)
    print(jax.typeof(y))


if __name__ == "__main__":
    main()
