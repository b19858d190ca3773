"""The canonical names of the JAX APIs the handlers of this package model, and the
tables of API families (collectives, constructors) they register for.

Which names each JAX version exports, aliases, deprecates or removes is in the version
profiles (analyzer/compat), checked against JAX by tests/test_compat.py.
"""

from __future__ import annotations

from typing import Dict, Optional

from ..compat.names import COLLECTIVE_AXIS_ARGUMENT

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
PARTIAL = "functools.partial"

SHARD_MAPS = (SHARD_MAP, SHARD_MAP_EXPERIMENTAL)
# Library transforms whose handler models them as decorators too (``@nnx.jit def f`` is
# ``f = nnx.jit(f)``; ``@nnx.jit(static_argnums=0)`` a partial of it): each family adds
# the names it models
DECORATOR_CALLS: set = set()
JITS = (JIT, PJIT)
MESH_CONTEXTS = (SET_MESH, USE_ABSTRACT_MESH, "jax.sharding.use_mesh")

# Collectives: canonical name -> index of the positional axis-name argument (None:
# keyword-only); the table is compat's, which the profiles and project_axes read too
COLLECTIVES: Dict[str, Optional[int]] = dict(COLLECTIVE_AXIS_ARGUMENT)

# Array constructors whose shape the source states: name -> index of the shape argument.
ARRAY_CONSTRUCTORS: Dict[str, int] = {}
for _mod in ("jax.numpy", "numpy"):
    for _n in ("zeros", "ones", "empty", "full"):
        ARRAY_CONSTRUCTORS[f"{_mod}.{_n}"] = 0
for _n in ("normal", "uniform", "bernoulli", "truncated_normal", "randint", "categorical",
           "gumbel", "laplace", "logistic", "rademacher", "bits", "exponential", "cauchy"):
    ARRAY_CONSTRUCTORS[f"jax.random.{_n}"] = 1
ARANGES = ("jax.numpy.arange", "numpy.arange")

# NNX variables, and the metadata keys that declare their sharding:
# ``nnx.Param(v, out_sharding=names)`` (``sharding=`` and ``sharding_names=`` before flax
# 0.12 renamed them; 0.12 still accepts both, with a deprecation warning)
NNX_VARIABLES = ("flax.nnx.Param", "flax.nnx.Variable", "flax.nnx.variablelib.Param",
                 "flax.nnx.variablelib.Variable")
NNX_SHARDING_KEYS = ("out_sharding", "sharding", "sharding_names")
