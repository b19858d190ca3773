"""JAX 0.12.x, checked on 0.12.0.1.

Against 0.11: `jax.lax.psend` and `jax.lax.precv` are deprecated, and a `shard_map`
manual over only some mesh axes checks its `in_specs` against the inputs' shardings.
"""

from __future__ import annotations

from dataclasses import replace

from . import names, v0_10, v0_11
from .profile import JaxProfile

PROFILE = JaxProfile(
    version="0.12",
    release="0.12.0.1",
    names=names.MODELLED,
    aliases=names.ALIASES,
    legacy_aliases=names.LEGACY_ALIASES,
    deprecations=names.pick(*v0_10.DEPRECATED, "jax.lax.psend", "jax.lax.precv"),
    removals=names.pick(*v0_10.REMOVED),
    dtypes=v0_11.PROFILE.dtypes,
    errors=dict(v0_11.PROFILE.errors),
    behaviour=replace(v0_11.PROFILE.behaviour, shard_map_checks_partial_manual_in_specs=True),
)
