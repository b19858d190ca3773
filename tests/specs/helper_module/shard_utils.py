"""A project's sharding helpers, in their own module (the MaxText idiom): a NamedSharding
from logical names under the rules in force, and a constraint that reshards in explicit
mode."""
import enum

import jax
from flax import linen as nn
from jax.sharding import NamedSharding


class ShardMode(enum.Enum):
    AUTO = "auto"
    EXPLICIT = "explicit"


def create_sharding(mesh, logical_names, rules=None):
    return NamedSharding(mesh, nn.logical_to_mesh_axes(logical_names, rules))


def maybe_shard_with_logical(inputs, logical_axes, mesh, shard_mode, rules=None):
    if inputs is None:
        return None
    named_sharding = create_sharding(mesh, logical_axes, rules=rules)
    if shard_mode == ShardMode.EXPLICIT:
        return jax.sharding.reshard(inputs, named_sharding)
    return jax.lax.with_sharding_constraint(inputs, named_sharding)
