"""JAX's sharding API as the analyzer knows it: canonical names, aliases, signatures.

Names are those JAX 0.10.2 exports (checked with ``dir()`` on jax, jax.sharding and
jax.lax); the deprecation table quotes JAX 0.10.2's own ``_deprecations`` entries.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional

# Spelling -> canonical name. Anything not listed canonicalises to itself.
ALIASES: Dict[str, str] = {
    "jax.P": "jax.sharding.PartitionSpec",
    "jax.NamedSharding": "jax.sharding.NamedSharding",
    "jax.reshard": "jax.sharding.reshard",
    "jax.sharding.set_mesh": "jax.set_mesh",
    "jax.experimental.shard.reshard": "jax.sharding.reshard",
    "jax.interpreters.pxla.Mesh": "jax.sharding.Mesh",
    "jax._src.mesh.Mesh": "jax.sharding.Mesh",
    "jax._src.partition_spec.PartitionSpec": "jax.sharding.PartitionSpec",
    "jax.experimental.PartitionSpec": "jax.sharding.PartitionSpec",
    "jax.experimental.pjit.PartitionSpec": "jax.sharding.PartitionSpec",
    "jax.numpy": "jax.numpy",
    "numpy": "numpy",
}

PARTITION_SPEC = "jax.sharding.PartitionSpec"
NAMED_SHARDING = "jax.sharding.NamedSharding"
MAKE_MESH = "jax.make_mesh"
MESH = "jax.sharding.Mesh"
ABSTRACT_MESH = "jax.sharding.AbstractMesh"
CREATE_DEVICE_MESH = "jax.experimental.mesh_utils.create_device_mesh"
SET_MESH = "jax.set_mesh"
USE_ABSTRACT_MESH = "jax.sharding.use_abstract_mesh"
SHARD_MAP = "jax.shard_map"
SHARD_MAP_EXPERIMENTAL = "jax.experimental.shard_map.shard_map"
JIT = "jax.jit"
PJIT = "jax.experimental.pjit.pjit"
DEVICE_PUT = "jax.device_put"
WITH_SHARDING_CONSTRAINT = "jax.lax.with_sharding_constraint"
RESHARD = "jax.sharding.reshard"
AXIS_TYPE = "jax.sharding.AxisType"
PARTIAL = "functools.partial"

SHARD_MAPS = (SHARD_MAP, SHARD_MAP_EXPERIMENTAL)
JITS = (JIT, PJIT)
MESH_CONTEXTS = (SET_MESH, USE_ABSTRACT_MESH, "jax.sharding.use_mesh")

# Collectives: canonical name -> index of the positional axis-name argument.
COLLECTIVES: Dict[str, int] = {
    f"jax.lax.{n}": 1 for n in (
        "psum", "pmean", "pmax", "pmin", "all_gather", "psum_scatter", "all_to_all",
        "ppermute", "pcast", "pbroadcast", "pshuffle", "pswapaxes", "ragged_all_to_all",
        "pvary")
}
COLLECTIVES.update({"jax.lax.axis_index": 0, "jax.lax.axis_size": 0})

# Array constructors whose shape the source states: name -> (shape arg index, kind).
ARRAY_CONSTRUCTORS: Dict[str, int] = {}
for _mod in ("jax.numpy", "numpy"):
    for _n in ("zeros", "ones", "empty", "full"):
        ARRAY_CONSTRUCTORS[f"{_mod}.{_n}"] = 0
for _n in ("normal", "uniform", "bernoulli", "truncated_normal", "randint", "categorical",
           "gumbel", "laplace", "logistic", "rademacher", "bits", "exponential", "cauchy"):
    ARRAY_CONSTRUCTORS[f"jax.random.{_n}"] = 1
ARANGES = ("jax.numpy.arange", "numpy.arange")
NUMPY_RANDOM_SIZE = ("numpy.random.", "numpy.random.default_rng")


@dataclass(frozen=True)
class Deprecation:
    """An API that JAX deprecated or removed, as of a JAX version."""

    replacement: str
    note: str
    removed_in: Optional[str] = None  # set when calling it fails in JAX 0.10.2
    deprecated_in: Optional[str] = None


DEPRECATED: Dict[str, Deprecation] = {
    "jax.experimental.shard_map.shard_map": Deprecation(
        "jax.shard_map", "jax.experimental.shard_map is deprecated in JAX 0.8.0; "
        "jax.shard_map takes mesh= as a keyword (optional under jax.set_mesh) and "
        "check_vma= instead of check_rep=", deprecated_in="0.8.0"),
    "jax.experimental.pjit.pjit": Deprecation(
        "jax.jit", "jax.experimental.pjit.pjit is deprecated (JAX 0.8, Oct 2025); jax.jit "
        "takes the same in_shardings=/out_shardings=", deprecated_in="0.8.0"),
    "jax.lax.pvary": Deprecation(
        "jax.lax.pcast(x, axis_name, to='varying')",
        "jax.lax.pvary was deprecated in JAX 0.8.2 and removed in JAX 0.10.0",
        removed_in="0.10.0", deprecated_in="0.8.2"),
    "jax.device_put_replicated": Deprecation(
        "jax.device_put(x, NamedSharding(mesh, P()))",
        "jax.device_put_replicated was removed in JAX 0.10.0", removed_in="0.10.0"),
    "jax.device_put_sharded": Deprecation(
        "jax.device_put(x, NamedSharding(mesh, spec))",
        "jax.device_put_sharded was removed in JAX 0.10.0", removed_in="0.10.0"),
    "jax.sharding.use_mesh": Deprecation(
        "jax.set_mesh(mesh)", "jax.sharding.use_mesh is gone in JAX 0.10.2",
        removed_in="0.10.0"),
    "jax.sharding.PositionalSharding": Deprecation(
        "jax.sharding.NamedSharding(mesh, spec)",
        "jax.sharding.PositionalSharding is gone in JAX 0.10.2", removed_in="0.10.0"),
    "jax.experimental.maps.xmap": Deprecation(
        "jax.shard_map", "xmap was removed in JAX 0.4.31", removed_in="0.4.31"),
    "jax.experimental.maps.Mesh": Deprecation(
        "jax.sharding.Mesh or jax.make_mesh", "jax.experimental.maps was removed in JAX 0.4.31",
        removed_in="0.4.31"),
}


def canonical(name: str) -> str:
    """The canonical spelling of a qualified name (``jax.P`` -> PartitionSpec)."""
    if name in ALIASES:
        return ALIASES[name]
    # jax.sharding.PartitionSpec.UNCONSTRAINED etc.: canonicalise the prefix
    head, _, tail = name.rpartition(".")
    if head and head in ALIASES:
        return ALIASES[head] + "." + tail
    return name
