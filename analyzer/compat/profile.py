"""The shape of a JAX version profile: frozen values, no JAX import.

A profile says what one JAX minor version (0.10.x, 0.11.x, ...) is to the analyzer: the
names it exports and their aliases, what it deprecated or removed and what replaces it,
the dtypes an array can have, the texts of the trace-time errors the rules predict, and
the behaviours that changed between versions. ``tests/test_compat.py`` checks the
profile of the installed JAX against JAX itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any, FrozenSet, Mapping, Optional, Tuple


def release_key(version: str) -> Tuple[int, ...]:
    """``"0.12.0.1"`` -> ``(0, 12, 0, 1)``, for ordering releases."""
    parts = version.split(".")
    if len(parts) < 2 or not all(p.isdigit() for p in parts):
        raise ValueError(f"not a JAX version: {version!r} (expected digits like 0.10.2)")
    return tuple(int(p) for p in parts)


def minor_of(version: str) -> str:
    """``"0.10.2"`` -> ``"0.10"``."""
    major, minor = release_key(version)[:2]
    return f"{major}.{minor}"


@dataclass(frozen=True)
class Deprecation:
    """An API that JAX deprecated or removed: what to use instead, and when it happened.

    The versions are the releases JAX's own messages or changelog name; ``None`` where
    they name none. Whether a name is deprecated or removed in a given JAX is the
    profile's to say (``JaxProfile.deprecations`` / ``removals``), checked against JAX.
    """

    replacement: str
    note: str  # the history in words, shown in SC401's message
    removed_in: Optional[str] = None
    deprecated_in: Optional[str] = None
    source: str = ""  # where the version numbers come from


@dataclass(frozen=True)
class ErrorSignature:
    """A trace-time error JAX raises: the exception's class name and a regex over a
    verbatim part of its message."""

    exception: str
    pattern: str

    def matches(self, exception: str, message: str) -> bool:
        return exception == self.exception and re.search(self.pattern, message) is not None


def _doc(text: str) -> Any:
    return field(metadata={"doc": text})


@dataclass(frozen=True)
class Behaviour:
    """What changed between JAX versions, as far as the analyzer and its docs speak of it.

    Each field's ``doc`` says what it means; ``shardcheck explain`` shows the ones a rule
    relies on where the supported versions disagree.
    """

    make_mesh_axis_type: str = _doc(
        "the axis type `jax.make_mesh(sizes, names)` gives its axes")
    mesh_axis_type: str = _doc(
        "the axis type `jax.sharding.Mesh(devices, names)` gives its axes")
    abstract_mesh_axis_type: str = _doc(
        "the axis type `jax.sharding.AbstractMesh(sizes, names)` gives its axes")
    make_mesh_sizes_keyword: str = _doc(
        "the keyword name of `jax.make_mesh`'s first parameter (the axis sizes)")
    make_mesh_rejects_repeated_names: bool = _doc(
        "whether `jax.make_mesh` rejects repeated axis names (otherwise it silently "
        "builds a mesh with fewer axes)")
    shard_map_check_vma_default: bool = _doc(
        "the default of `jax.shard_map`'s `check_vma`")
    one_sided_batch_dim_is_error: bool = _doc(
        "whether a `dot_general`/`einsum` batch dim sharded on one operand and replicated "
        "on the other is an error (otherwise the result is sharded like the sharded side)")
    shard_map_checks_partial_manual_in_specs: bool = _doc(
        "whether `jax.shard_map` with `axis_names=` naming only some mesh axes checks "
        "`in_specs` against each input's sharding over those axes, where they are Explicit "
        "(otherwise only a shard_map manual over every mesh axis checks, and a partial one "
        "reshards the input silently)")
    unit_slice_replicated: bool = _doc(
        "whether a slice, `dynamic_slice` or pad whose result has no dim longer than 1 is "
        "replicated (otherwise a sharded dim cut to length 1 is rejected like any length "
        "its axes' size does not divide)")
    aval_varying_attribute: str = _doc(
        "the attribute of a `jax.typeof` value that holds its varying/unreduced/reduced axes")

    @classmethod
    def doc(cls, name: str) -> str:
        return next(f.metadata["doc"] for f in fields(cls) if f.name == name)

    @classmethod
    def names(cls) -> Tuple[str, ...]:
        return tuple(f.name for f in fields(cls))


def _frozen(mapping: Optional[Mapping]) -> Mapping:
    return MappingProxyType(dict(mapping or {}))


@dataclass(frozen=True, eq=False)
class JaxProfile:
    """One JAX minor version as the analyzer knows it."""

    version: str  # the minor version, "0.10"
    release: str  # the release the data was checked on, "0.10.2"
    # canonical API names the analyzer models; each exists in this version
    names: FrozenSet[str]
    aliases: Mapping[str, str]  # another spelling -> the canonical name; both exist here
    # spellings of older JAX, canonicalised to read old code; absent from this version
    legacy_aliases: Mapping[str, str]
    deprecations: Mapping[str, Deprecation]  # still there, with a DeprecationWarning
    removals: Mapping[str, Deprecation]  # gone: using them fails
    dtypes: FrozenSet[str]  # as str(jax.typeof(x)) names them, for arrays on device
    errors: Mapping[str, ErrorSignature]
    behaviour: Behaviour

    def __post_init__(self) -> None:
        for name in ("aliases", "legacy_aliases", "deprecations", "removals", "errors"):
            object.__setattr__(self, name, _frozen(getattr(self, name)))

    @property
    def key(self) -> Tuple[int, ...]:
        return release_key(self.version)

    def canonical(self, name: str) -> str:
        """The canonical spelling of a qualified name (``jax.P`` -> PartitionSpec); a
        name's attribute (``jax.P.UNCONSTRAINED``) follows its prefix."""
        found = self.aliases.get(name) or self.legacy_aliases.get(name)
        if found is not None:
            return found
        head, _, tail = name.rpartition(".")
        found = (self.aliases.get(head) or self.legacy_aliases.get(head)) if head else None
        return f"{found}.{tail}" if found is not None else name

    def status(self, name: str) -> Optional[str]:
        """``"removed"``, ``"deprecated"`` or None (current, or unknown to the profile)."""
        if name in self.removals:
            return "removed"
        if name in self.deprecations:
            return "deprecated"
        return None

    def deprecation(self, name: str) -> Optional[Deprecation]:
        return self.removals.get(name) or self.deprecations.get(name)

    def fact(self, name: str) -> Any:
        """A behaviour flag's value or an error signature, by name (None if absent)."""
        if name in Behaviour.names():
            return getattr(self.behaviour, name)
        return self.errors.get(name)

    def __repr__(self) -> str:
        return f"JaxProfile({self.version!r}, checked on {self.release})"
