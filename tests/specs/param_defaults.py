"""Parameters' declared defaults, read where no caller is in view (the tunix idiom: a
module stores a sharding config its ``__init__`` defaults to a factory's result; the
maxdiffusion one: a None default the body fills in from a factory that returns early)."""
import dataclasses

import jax
from jax.sharding import PartitionSpec as P


@dataclasses.dataclass
class ShardingConfig:
    act_btd: tuple
    ffw_df: tuple

    @staticmethod
    def get_default_sharding(is_sampling: bool = False):
        fsdp = "data" if not is_sampling else None
        return ShardingConfig(act_btd=P(fsdp, None, "model"), ffw_df=P(fsdp, "model"))


def shard(x, s):
    return jax.lax.with_sharding_constraint(x, P(*s))


class Block:
    def __init__(self, dim: int, shd_config: ShardingConfig = ShardingConfig.get_default_sharding()):
        self.dim = dim
        self.shd_config = shd_config

    def __call__(self, x):
        return shard(x, self.shd_config.act_btd)


def constrain(x, spec=P(None, "model")):
    return jax.lax.with_sharding_constraint(x, spec)


@dataclasses.dataclass
class ModelConfig:
    shd_config: ShardingConfig = dataclasses.field(default_factory=ShardingConfig.get_default_sharding)


class Mlp:
    def __init__(self, config: ModelConfig):
        self.shd_config = config.shd_config  # a chain from a parameter: its class's default

    def __call__(self, x):
        return shard(x, self.shd_config.ffw_df)


def sharding_specs(strategy: str = "default"):
    """A factory that returns early, by strategy (maxdiffusion's get_sharding_specs)."""
    if strategy == "default":
        return ShardingConfig(act_btd=P("data", None, None), ffw_df=P("data", "model"))
    if strategy == "tensor":
        return ShardingConfig(act_btd=P(None, None, "model"), ffw_df=P(None, "model"))
    raise ValueError(strategy)


class Dit:
    def __init__(self, specs: ShardingConfig | None = None):
        if specs is None:  # a None default the body fills in: what a call with none gets
            specs = sharding_specs("default")
        self.specs = specs

    def __call__(self, x):
        return jax.lax.with_sharding_constraint(x, self.specs.act_btd)


def constrain_or(x, spec=None):
    spec = spec or sharding_specs("tensor").ffw_df
    return jax.lax.with_sharding_constraint(x, spec)
