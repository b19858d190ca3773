"""JAX 0.11.x, checked on 0.11.2.

Against 0.10: `AbstractMesh` axes default to Explicit, `make_mesh`'s sizes keyword is
`axis_sizes`, a batch dim sharded on one operand only is an error, a slice cut to length
1 in every dim is replicated rather than rejected, float6 arrays exist,
and several errors are worded anew (errors.FROM_0_11).
"""

from __future__ import annotations

from dataclasses import replace

from . import errors, names, v0_10
from .profile import JaxProfile

PROFILE = JaxProfile(
    version="0.11",
    release="0.11.2",
    names=names.MODELLED,
    aliases=names.ALIASES,
    legacy_aliases=names.LEGACY_ALIASES,
    deprecations=names.pick(*v0_10.DEPRECATED),
    removals=names.pick(*v0_10.REMOVED),
    dtypes=v0_10.DTYPES | {"float6_e2m3fn", "float6_e3m2fn"},
    errors={**errors.COMMON, **errors.FROM_0_11},
    behaviour=replace(
        v0_10.PROFILE.behaviour,
        abstract_mesh_axis_type="Explicit",
        make_mesh_sizes_keyword="axis_sizes",
        one_sided_batch_dim_is_error=True,
        unit_slice_replicated=True,  # jax-ml/jax 424937b, first in jax-v0.11.0
    ),
)
