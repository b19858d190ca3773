"""A sharding config whose fields have no defaults but a static method that makes the
default one (tunix's and gemma's ``get_default_sharding()``), handed to NNX modules as
an optional keyword (``shd_config: ShardingConfig | None = None``)."""

from __future__ import annotations

import dataclasses
from typing import Optional, Tuple

import jax
from flax import nnx
from flax.nnx import initializers


@dataclasses.dataclass(frozen=True)
class ShardingConfig:
    kernel: Tuple[Optional[str], ...]
    bias: Tuple[Optional[str], ...]
    act: Tuple[Optional[str], ...]

    @staticmethod
    def get_default_sharding(is_sampling: bool = False):
        fsdp = "data" if not is_sampling else None
        return ShardingConfig(kernel=(fsdp, "model"), bias=("model",), act=(fsdp, None, "model"))


class Projection(nnx.Module):
    def __init__(self, dim: int, *, rngs: nnx.Rngs, shd_config: ShardingConfig | None = None):
        self.proj = nnx.Linear(
            dim, dim, rngs=rngs,
            kernel_init=nnx.with_partitioning(initializers.xavier_uniform(),
                                              shd_config.kernel if shd_config else ()),
            bias_init=nnx.with_partitioning(initializers.zeros_init(),
                                            shd_config.bias if shd_config else ()))
        self.shd_config = shd_config

    def __call__(self, x):
        y = self.proj(x)
        if self.shd_config:
            y = jax.lax.with_sharding_constraint(y, jax.P(*self.shd_config.act))
        return y


def embed(x, cfg: Optional[ShardingConfig] = None):
    return jax.lax.with_sharding_constraint(x, jax.P(*cfg.act))
