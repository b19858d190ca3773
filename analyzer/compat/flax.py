"""Flax's sharding API that later Flax releases removed: old code that spells one fails
with ImportError or AttributeError on a current Flax.

The profiles are keyed by JAX version; Flax's releases are not tied to JAX's minor
versions, and the analysis cannot know which Flax a project installs. Each entry says the
first Flax release without the name (from Flax's history: ``git tag --contains`` of the
commit that removed it) and what that Flax raises; ``tests/analyzer/test_compat_flax.py``
checks every name is absent from the installed Flax and every replacement present.
Nothing here imports Flax.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict


@dataclass(frozen=True)
class FlaxRemoval:
    replacement: str  # what to use instead, as code spells it ("" where Flax has none)
    note: str  # what happened, for the message
    removed_in: str  # the first Flax release without it
    source: str  # where that is recorded


_NNX_CONSTRAINT = FlaxRemoval(
    "jax.lax.with_sharding_constraint",
    "NNX's with_sharding_constraint wrapper was removed in Flax 0.11.2 (jax.lax's takes the "
    "same value and shardings)", "0.11.2", "flax commit 3aa32309, 'Sharding API improvements'")
_LINEN_SPMD_RULES = "the logical axis rules context moved to flax.core.spmd in Flax 0.10.2; " \
    "flax.linen re-exports it"
_GDA = FlaxRemoval(
    "jax.Array", "GlobalDeviceArray was deleted from Flax in 0.6.7, as from JAX (jax.Array "
    "replaced it)", "0.6.7", "flax commit 95442f8e, 'Delete GDA from flax'")

FLAX_REMOVED: Dict[str, FlaxRemoval] = {
    "flax.nnx.with_sharding_constraint": _NNX_CONSTRAINT,
    "flax.nnx.spmd.with_sharding_constraint": _NNX_CONSTRAINT,
    "flax.nnx.spmd.HasSharding": FlaxRemoval(
        "", "the HasSharding protocol of flax.nnx.spmd was removed in Flax 0.11.2", "0.11.2",
        "flax commit 3aa32309"),
    "flax.linen.spmd.logical_axis_rules": FlaxRemoval(
        "flax.linen.logical_axis_rules", _LINEN_SPMD_RULES, "0.10.2",
        "flax commit 4d3006af, 'Add logical axis global context support for NNX'"),
    "flax.linen.spmd.set_logical_axis_rules": FlaxRemoval(
        "flax.linen.set_logical_axis_rules", _LINEN_SPMD_RULES, "0.10.2",
        "flax commit 4d3006af"),
    "flax.linen.spmd.is_cpu_platform": FlaxRemoval(
        "jax.default_backend() == 'cpu'", "flax.linen.spmd.is_cpu_platform was removed in "
        "Flax 0.11.2", "0.11.2", "flax commit 3aa32309"),
    "flax.nnx.variablelib.UseEagerShardContext": FlaxRemoval(
        "flax.nnx.use_eager_sharding", "UseEagerShardContext was folded into "
        "nnx.use_eager_sharding (itself the context manager) in Flax 0.12.5", "0.12.5",
        "flax commit 972c34e9"),
    "flax.training.checkpoints.GlobalDeviceArray": _GDA,
    "flax.training.orbax_utils.GlobalDeviceArray": _GDA,
    "flax.training.orbax_utils.is_multiprocess_array": FlaxRemoval(
        "flax.training.orbax_utils.is_multi_device_array", "is_multiprocess_array was "
        "renamed is_multi_device_array in Flax 0.6.11", "0.6.11", "flax commit 00a028a4"),
}
