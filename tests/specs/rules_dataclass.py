"""Logical axes mapped to mesh axes by a dataclass of rules (the jax-llm-examples idiom):
the config holds the rules through ``field(default_factory=...)``, and a helper maps a
tuple of logical names with ``jax.tree.map`` and ``getattr``. No caller is in view, so
the map reads the configs' declared defaults."""
import dataclasses
from dataclasses import field

import jax
from jax.sharding import PartitionSpec as P

BATCH_AXIS = "x"
TENSOR_AXES = ("y", "z")


@dataclasses.dataclass
class ShardingRules:
    batch: str | None = BATCH_AXIS
    sequence: str | None = None
    heads: tuple | str | None = TENSOR_AXES
    embed: str | None = None
    vocab: tuple | str | None = field(default="y")


def logical_to_physical(logical, rules: ShardingRules) -> P:
    spec = jax.tree.map(lambda axis: getattr(rules, axis) if axis is not None else None, logical)
    flat = jax.tree.leaves(spec)
    if len(set(flat)) != len(flat):
        raise ValueError(f"colliding mesh axes in {spec}")
    return P(*spec)


@dataclasses.dataclass
class Config:
    rules: ShardingRules = field(default_factory=ShardingRules)
    dtype: str = "float32"


def attention_input(q, cfg: Config):
    l2p = lambda *logical: logical_to_physical(logical, cfg.rules)
    return jax.lax.with_sharding_constraint(q, l2p("batch", "heads", "sequence", None))


def place_tokens(tokens, cfg: Config):
    return jax.device_put(tokens, logical_to_physical(("batch", None), cfg.rules))


def embed_rows(table, cfg: Config):
    return jax.device_put(table, logical_to_physical(("vocab", "embed"), cfg.rules))


def scale_heads(x, cfg: Config):
    spec = logical_to_physical(("batch", "heads"), cfg.rules)
    return jax.shard_map(lambda a: a * 2, in_specs=spec, out_specs=spec)(x)
