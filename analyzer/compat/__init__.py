"""One place for JAX versions: a profile per supported JAX minor version.

    from shardcheck.analyzer import compat
    compat.profile_for("0.12.0.1").behaviour.one_sided_batch_dim_is_error   # True
    compat.DEFAULT.deprecation("jax.lax.pvary").replacement

Adding a JAX version is one module (``v0_13.py``, often a ``replace`` of the previous
profile) and a line in ``PROFILES``; ``tests/test_compat.py`` then checks it against that
JAX when it is installed. Nothing here imports JAX.
"""

from __future__ import annotations

from typing import Dict, Optional, Tuple

from . import v0_10, v0_11, v0_12
from .flax import FLAX_REMOVED, FlaxRemoval
from .names import HISTORY, MESH_ENTER, MODULES
from .profile import Behaviour, Deprecation, ErrorSignature, JaxProfile, minor_of, release_key

__all__ = ["ALIASES", "Behaviour", "DEFAULT", "DEPRECATED", "Deprecation", "ErrorSignature",
           "FLAX_REMOVED", "FlaxRemoval", "JaxProfile", "MESH_ENTER", "PROFILES",
           "UnsupportedJaxVersion", "canonical", "deprecated_entry", "profile_for"]

# Oldest first.
PROFILES: Tuple[JaxProfile, ...] = (v0_10.PROFILE, v0_11.PROFILE, v0_12.PROFILE)
# shardcheck's analysis follows JAX 0.10.2 (its inference is checked against it).
DEFAULT: JaxProfile = v0_10.PROFILE

# The default profile's spellings (current and legacy) -> canonical names.
ALIASES: Dict[str, str] = {**DEFAULT.legacy_aliases, **DEFAULT.aliases}
# Every API any supported version deprecates or removes; a profile says which, when.
DEPRECATED: Dict[str, Deprecation] = dict(HISTORY)


class UnsupportedJaxVersion(ValueError):
    """A JAX version no profile covers."""


def profile_for(version: Optional[str] = None) -> JaxProfile:
    """The profile of a JAX version (``"0.12"``, ``"0.10.2"``, ``"0.12.0.1"``); the
    default profile for None."""
    if version is None:
        return DEFAULT
    try:
        minor = minor_of(str(version).strip())
    except ValueError:
        minor = None
    for profile in PROFILES:
        if profile.version == minor:
            return profile
    supported = ", ".join(p.version for p in PROFILES)
    raise UnsupportedJaxVersion(
        f"JAX version {version!r} is not supported; shardcheck has profiles for JAX "
        f"{supported} (give a version like \"0.12\" or \"0.10.2\")")


def deprecated_entry(name: str) -> Optional[str]:
    """The entry of ``DEPRECATED`` (or ``FLAX_REMOVED``) that ``name`` falls under: the
    name itself, or the removed module it is in (``jax.experimental.maps.thread_resources``
    is gone with ``jax.experimental.maps``); None when it is current. (An attribute of a
    deprecated object is not another use: ``thread_resources.env`` is reported once.)"""
    if name in DEPRECATED or name in FLAX_REMOVED:
        return name
    parts = name.split(".")
    for i in range(len(parts) - 1, 1, -1):
        head = ".".join(parts[:i])
        if head in MODULES:
            return head
    return None


def canonical(name: str) -> str:
    """The canonical spelling of a qualified name under the default profile."""
    return DEFAULT.canonical(name)


def profiles_since(version: str) -> Tuple[JaxProfile, ...]:
    """The supported profiles from ``version`` on."""
    key = release_key(version)[:2]
    return tuple(p for p in PROFILES if p.key >= key)
