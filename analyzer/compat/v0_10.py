"""JAX 0.10.x, checked on 0.10.2: the version shardcheck's analysis follows."""

from __future__ import annotations

from . import errors, names
from .profile import Behaviour, JaxProfile

# Names str(jax.typeof(x)) prints for arrays on device (numpy's and ml_dtypes' names).
DTYPES = frozenset("""
bool int2 int4 int8 int16 int32 int64 uint2 uint4 uint8 uint16 uint32 uint64
float16 bfloat16 float32 float64 complex64 complex128 float0
float4_e2m1fn float8_e3m4 float8_e4m3 float8_e4m3b11fnuz float8_e4m3fn float8_e4m3fnuz
float8_e5m2 float8_e5m2fnuz float8_e8m0fnu
""".split())

DEPRECATED = ("jax.experimental.shard_map.shard_map", "jax.experimental.pjit.pjit",
              names.MESH_ENTER, "jax.interpreters.pxla.thread_resources")
REMOVED = ("jax.lax.pvary", "jax.device_put_replicated", "jax.device_put_sharded",
           "jax.sharding.use_mesh", "jax.sharding.PositionalSharding",
           "jax.experimental.maps.xmap", "jax.experimental.maps.Mesh", "jax.experimental.maps",
           "jax.experimental.pjit.with_sharding_constraint",
           "jax.experimental.gda_serialization", "jax.experimental.global_device_array")

PROFILE = JaxProfile(
    version="0.10",
    release="0.10.2",
    names=names.MODELLED,
    aliases=names.ALIASES,
    legacy_aliases=names.LEGACY_ALIASES,
    deprecations=names.pick(*DEPRECATED),
    removals=names.pick(*REMOVED),
    dtypes=DTYPES,
    errors={**errors.COMMON, **errors.UP_TO_0_10},
    behaviour=Behaviour(
        make_mesh_axis_type="Explicit",
        mesh_axis_type="Auto",
        abstract_mesh_axis_type="Auto",
        make_mesh_sizes_keyword="axis_shapes",
        make_mesh_rejects_repeated_names=False,
        shard_map_check_vma_default=True,
        one_sided_batch_dim_is_error=False,
        unit_slice_replicated=False,
        shard_map_checks_partial_manual_in_specs=False,
        aval_varying_attribute="mat",
    ),
)
