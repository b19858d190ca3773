"""JAX's sharding API by name: canonical names, other spellings, and the history of the
names JAX deprecated or removed. The version profiles pick from these tables; which
names a version deprecates or removes is each profile's to say (checked against JAX).
"""

from __future__ import annotations

from typing import Dict, FrozenSet, Optional

from .profile import Deprecation

# jax.lax's collectives: canonical name -> the position of the axis-name argument (None:
# keyword-only), as JAX 0.10.2's signatures have it. The one table: the interpreter
# models these (jaxapi.collectives), the profiles assume the current ones exist
# (``COLLECTIVES``), and the project's axis check reads the names they are given
# (project_axes). ``tests/analyzer/test_compat.py`` checks it against the installed JAX.
COLLECTIVE_AXIS_ARGUMENT: Dict[str, Optional[int]] = {
    **{f"jax.lax.{n}": 1 for n in (
        "psum", "pmean", "pmax", "pmin", "all_gather", "psum_scatter", "all_to_all",
        "ppermute", "pcast", "pbroadcast", "pshuffle", "pswapaxes",
        "pvary")},  # (pvary: removed in JAX 0.10, still read in older code)
    "jax.lax.ragged_all_to_all": None,
    "jax.lax.axis_index": 0, "jax.lax.axis_size": 0,
}
# The canonical names whose existence the analyzer assumes (it models their semantics):
# the collectives no supported JAX removed (``HISTORY``, below), and these.
COLLECTIVES: FrozenSet[str] = frozenset(n for n in COLLECTIVE_AXIS_ARGUMENT if n != "jax.lax.pvary")
MODELLED: FrozenSet[str] = frozenset({
    "jax.sharding.PartitionSpec", "jax.sharding.NamedSharding", "jax.make_mesh",
    "jax.sharding.Mesh", "jax.sharding.AbstractMesh", "jax.sharding.AxisType",
    "jax.experimental.mesh_utils.create_device_mesh", "jax.set_mesh",
    "jax.sharding.use_abstract_mesh", "jax.shard_map", "jax.jit", "jax.device_put",
    "jax.lax.with_sharding_constraint", "jax.sharding.reshard", "jax.typeof",
    "jax.checkpoint",
}) | COLLECTIVES

# Another spelling -> the canonical name; both name the same object.
ALIASES: Dict[str, str] = {
    "jax.P": "jax.sharding.PartitionSpec",
    "jax.NamedSharding": "jax.sharding.NamedSharding",
    "jax.reshard": "jax.sharding.reshard",
    "jax.sharding.set_mesh": "jax.set_mesh",
    "jax._src.mesh.Mesh": "jax.sharding.Mesh",
    "jax._src.mesh.AbstractMesh": "jax.sharding.AbstractMesh",
    "jax._src.mesh.AxisType": "jax.sharding.AxisType",
    "jax._src.partition_spec.PartitionSpec": "jax.sharding.PartitionSpec",
}

# Spellings older JAX had: canonicalised so that old code still reads as what it meant.
LEGACY_ALIASES: Dict[str, str] = {
    "jax.experimental.shard.reshard": "jax.sharding.reshard",  # module deleted in 0.7.0
    "jax.interpreters.pxla.Mesh": "jax.sharding.Mesh",
    "jax.experimental.PartitionSpec": "jax.sharding.PartitionSpec",
    "jax.experimental.pjit.PartitionSpec": "jax.sharding.PartitionSpec",
    "jax.ad_checkpoint.checkpoint": "jax.checkpoint",  # gone by JAX 0.10.2
}

# `with mesh:` is recorded under this name (a Mesh entered as a context manager).
MESH_ENTER = "jax.sharding.Mesh.__enter__"

# Every deprecated or removed API the analyzer knows, with its history.
HISTORY: Dict[str, Deprecation] = {
    "jax.experimental.shard_map.shard_map": Deprecation(
        "jax.shard_map", "jax.experimental.shard_map is deprecated in JAX 0.8.0; "
        "jax.shard_map takes mesh= as a keyword (optional under jax.set_mesh) and "
        "check_vma= instead of check_rep=", deprecated_in="0.8.0",
        source="JAX's warning: 'jax.experimental.shard_map is deprecated in v0.8.0'"),
    "jax.experimental.pjit.pjit": Deprecation(
        "jax.jit", "jax.experimental.pjit.pjit is deprecated (JAX 0.8, Oct 2025); jax.jit "
        "takes the same in_shardings=/out_shardings=", deprecated_in="0.8.0",
        source="jax/experimental/pjit.py: '# Added Oct 13, 2025'"),
    "jax.lax.pvary": Deprecation(
        "jax.lax.pcast(x, axis_name, to='varying')",
        "jax.lax.pvary was deprecated in JAX 0.8.2 and removed in JAX 0.10.0",
        removed_in="0.10.0", deprecated_in="0.8.2",
        source="JAX 0.10.2's AttributeError: 'jax.lax.pvary was deprecated in JAX v0.8.2 "
               "and removed in JAX v0.10.0'"),
    "jax.device_put_replicated": Deprecation(
        "jax.device_put(x, NamedSharding(mesh, P()))",
        "jax.device_put_replicated was removed in JAX 0.10.0", removed_in="0.10.0",
        source="JAX 0.10.2's jax/__init__.py: '# Removed for v0.10.0'"),
    "jax.device_put_sharded": Deprecation(
        "jax.device_put(x, NamedSharding(mesh, spec))",
        "jax.device_put_sharded was removed in JAX 0.10.0", removed_in="0.10.0",
        source="JAX 0.10.2's jax/__init__.py: '# Removed for v0.10.0'"),
    "jax.sharding.use_mesh": Deprecation(
        "jax.set_mesh(mesh)", "jax.sharding.use_mesh was removed in JAX 0.7.1 in favour of "
        "jax.set_mesh", removed_in="0.7.1", source="JAX changelog, 0.7.1"),
    "jax.sharding.PositionalSharding": Deprecation(
        "jax.sharding.NamedSharding(mesh, spec)",
        "jax.sharding.PositionalSharding was removed from JAX; a NamedSharding names the "
        "mesh axes each dimension is split over",
        source="no release recorded; absent from every supported release"),
    "jax.experimental.pjit.with_sharding_constraint": Deprecation(
        "jax.lax.with_sharding_constraint",
        "jax.experimental.pjit.with_sharding_constraint was removed from JAX (it lives in "
        "jax.lax)",
        source="no release recorded; JAX 0.10.2 raises ImportError"),
    "jax.experimental.maps": Deprecation(
        "jax.shard_map", "the module jax.experimental.maps was removed with xmap in JAX "
        "0.4.31; its Mesh is jax.sharding.Mesh (or jax.make_mesh)",
        removed_in="0.4.31", source="JAX changelog, 0.4.31"),
    "jax.experimental.maps.xmap": Deprecation(
        "jax.shard_map", "xmap was removed in JAX 0.4.31", removed_in="0.4.31",
        source="JAX changelog, 0.4.31"),
    "jax.experimental.maps.Mesh": Deprecation(
        "jax.sharding.Mesh or jax.make_mesh", "jax.experimental.maps was removed in JAX 0.4.31",
        removed_in="0.4.31", deprecated_in="0.4.1",
        source="JAX changelog: deprecated in 0.4.1, the module removed with xmap in 0.4.31"),
    "jax.experimental.gda_serialization": Deprecation(
        "jax.experimental.array_serialization", "jax.experimental.gda_serialization was "
        "deprecated in JAX 0.4.9 and renamed jax.experimental.array_serialization (its "
        "functions take a jax.Array's sharding, not a GlobalDeviceArray's mesh and axes)",
        deprecated_in="0.4.9",
        source="JAX changelog, 0.4.9; JAX 0.10.2 raises ModuleNotFoundError"),
    "jax.experimental.global_device_array": Deprecation(
        "jax.Array (jax.make_array_from_callback)", "GlobalDeviceArray was removed when "
        "jax.Array replaced it (JAX 0.4.1 made jax.Array the default)",
        source="JAX changelog, 0.4.1; JAX 0.10.2 raises ModuleNotFoundError"),
    MESH_ENTER: Deprecation(
        "with jax.set_mesh(mesh):", "a Mesh as context manager is deprecated; it also sets "
        "the mesh only for pjit-style Auto sharding",
        source="JAX changelog: in the first release after 0.10.0; 0.10.2 warns"),
    "jax.interpreters.pxla.thread_resources": Deprecation(
        "jax.sharding.get_abstract_mesh()", "jax.interpreters.pxla.thread_resources is "
        "deprecated as of JAX 0.8.2; set the mesh with jax.set_mesh and read it with "
        "jax.sharding.get_abstract_mesh()", deprecated_in="0.8.2",
        source="JAX's warning: 'deprecated as of JAX v0.8.2'"),
    "jax.lax.psend": Deprecation(
        "jax.lax.ppermute(x, axis_name, perm)", "jax.lax.psend is deprecated in JAX 0.12.0 "
        "(JAX names no replacement; jax.lax.ppermute sends and receives along a "
        "permutation in one collective)", deprecated_in="0.12.0",
        source="jax.lax.psend's docstring: '.. deprecated:: 0.12.0'"),
    "jax.lax.precv": Deprecation(
        "jax.lax.ppermute(x, axis_name, perm)", "jax.lax.precv is deprecated in JAX 0.12.0 "
        "(JAX names no replacement; jax.lax.ppermute sends and receives along a "
        "permutation in one collective)", deprecated_in="0.12.0",
        source="jax.lax.precv's docstring: '.. deprecated:: 0.12.0'"),
}


# The entries of HISTORY that are modules: every name in them goes with them.
MODULES = frozenset({"jax.experimental.maps", "jax.experimental.gda_serialization",
                     "jax.experimental.global_device_array"})


def pick(*names: str) -> Dict[str, Deprecation]:
    """The history entries of ``names`` (a profile's deprecations or removals)."""
    return {n: HISTORY[n] for n in names}

assert COLLECTIVES == frozenset(COLLECTIVE_AXIS_ARGUMENT) - frozenset(HISTORY), \
    "a collective removed from JAX is read (COLLECTIVE_AXIS_ARGUMENT), not assumed"
