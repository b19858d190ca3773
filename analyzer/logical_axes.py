"""Flax's logical-axis-name resolution, as the installed flax 0.12 does it; no JAX, no flax.

Linen (``flax/linen/spmd.py``: ``logical_to_mesh_axes``, ``with_logical_constraint``)
walks the rules in order; a rule gives its mesh axes to the first dim with that logical
name when that dim has none yet and none of those mesh axes is used by another dim
already. A rule may map to None (replicated); that still claims the dim. A logical name
with no applicable rule is unsharded (``with_logical_constraint``'s default fallback).

NNX (``flax/core/spmd.py``: ``composite_rules``, ``from_sharding_rules``, ``apply_rules``;
``flax/nnx/spmd.py``: ``get_var_pspec``) looks each entry up in a dict built from the
rules (the last rule for a name wins) and keeps an entry with no rule as it is, so a
logical name with no rule reaches JAX as a mesh axis name. No mesh axis is skipped.

Entries are None, a str (a logical or mesh axis name), a tuple of str, or ``UNCONSTRAINED``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union


class _Unconstrained:
    """``PartitionSpec.UNCONSTRAINED``: it prints as JAX prints it."""

    def __repr__(self) -> str:
        return "UNCONSTRAINED"

    __str__ = __repr__


class _Unassigned:
    """A logical name no rule gave mesh axes to (flax's ``_unassigned_axis``)."""

    def __repr__(self) -> str:
        return "UnassignedAxis"

    def __bool__(self) -> bool:
        return False


UNCONSTRAINED: Any = _Unconstrained()
UNASSIGNED: Any = _Unassigned()

MeshAxes = Union[None, str, Tuple[str, ...], _Unconstrained]
Rule = Tuple[str, MeshAxes]
Rules = Tuple[Rule, ...]
Entry = Union[None, str, Tuple[str, ...], _Unconstrained, _Unassigned]


class LogicalAxisError(ValueError):
    """What flax raises for a table or names it cannot resolve (its message verbatim)."""


def normalize_mesh_axes(v: Any) -> MeshAxes:
    """A rule's right-hand side as flax sees its leaves: a list (YAML) is a tuple."""
    if isinstance(v, list):
        return tuple(v)
    return v  # None, str, tuple or UNCONSTRAINED as given


def normalize_rules(rules: Iterable[Sequence[Any]]) -> Rules:
    return tuple((r[0], normalize_mesh_axes(r[1])) for r in rules)


def _mesh_leaves(v: Any) -> List[Any]:
    """``jax.tree_util.tree_leaves`` of an entry: None is an empty tree."""
    if v is None:
        return []
    if isinstance(v, (tuple, list)):
        return [leaf for i in v for leaf in _mesh_leaves(i)]
    return [v]


def _assignment_free(new: MeshAxes, existing: Sequence[Entry]) -> bool:
    wanted = {a for a in _mesh_leaves(new) if a is not UNCONSTRAINED}
    used = {a for e in existing for a in _mesh_leaves(e)}
    return not (wanted & used)


def linen_resolve(names: Sequence[Any], rules: Rules) -> Tuple[Entry, ...]:
    """flax.linen.spmd._logical_to_mesh_axes: UNASSIGNED where no rule applied."""
    counts = Counter(names)
    dups = tuple(k for k, v in counts.items() if v > 1 and isinstance(k, str))
    if dups:
        raise LogicalAxisError(
            f"Unsupported: Dimensions {dups} occur more than once in array names.")
    result: List[Entry] = [UNASSIGNED if isinstance(n, str) else n for n in names]
    for logical, mesh_axes in rules:
        if logical in names:
            pos = list(names).index(logical)
            if _assignment_free(mesh_axes, result) and result[pos] is UNASSIGNED:
                result[pos] = mesh_axes
    return tuple(result)


def linen_logical_to_mesh_axes(names: Sequence[Any], rules: Rules) -> Tuple[Entry, ...]:
    """``nn.logical_to_mesh_axes(names, rules)``: the entries of the PartitionSpec."""
    return tuple(None if e is UNASSIGNED else e for e in linen_resolve(names, rules))


def linen_unassigned(names: Sequence[Any], rules: Rules) -> Tuple[str, ...]:
    """The logical names no rule gave a mesh assignment (replicated silently)."""
    return tuple(n for n, e in zip(names, linen_resolve(names, rules)) if e is UNASSIGNED)


def composite_rules(context: Rules, local: Rules) -> Rules:
    """flax.core.spmd.composite_rules: local rules over the context's; a name mapped two
    different ways is an error."""
    if not context and not local:
        return ()
    if context and not local:
        return context
    if local and not context:
        return local
    merged: Dict[Any, MeshAxes] = dict(context)
    for alias, value in local:
        if alias in merged and merged[alias] != value:
            raise LogicalAxisError(
                f"Inconsistent logical axis annotations for {alias}: "
                f"{_flax_str(merged[alias])} vs {_flax_str(value)}")
        merged[alias] = value
    return tuple(merged.items())


def _flax_str(v: Any) -> str:
    return str(v)


def nnx_var_pspec(sharding: Optional[Sequence[Any]], context: Rules,
                  local: Optional[Rules]) -> Tuple[Entry, ...]:
    """``nnx.get_partition_spec`` of a Variable with ``out_sharding=sharding`` (and
    ``sharding_rules=local`` where given), under ``nn.logical_axis_rules(context)``."""
    if not sharding:
        return ()
    if context or local is not None:
        table = dict(composite_rules(context, local or ()))
        return tuple(table[str(s)] if (s and str(s) in table) else s for s in sharding)
    return tuple(sharding)


def nnx_apply_rules(sharding: Sequence[Any], context: Rules,
                    local: Optional[Rules]) -> Tuple[Entry, ...]:
    """flax.core.spmd.apply_rules: the spec an NNX Variable is eagerly sharded with."""
    table: Dict[Any, Any] = {}
    if context or local:
        table = dict(composite_rules(context, local or ()))
    return tuple(table.get(a, a) if _hashable(a) else a for a in sharding)


def _hashable(a: Any) -> bool:
    try:
        hash(a)
    except TypeError:
        return False
    return True


@dataclass(frozen=True)
class Resolution:
    """A logical spec resolved to mesh axes: ``entries`` (as P(...) takes them), the
    logical ``names`` it came from, and the names no rule matched."""

    entries: Tuple[Entry, ...]
    names: Tuple[Any, ...]
    unmatched: Tuple[str, ...] = ()


def resolve_linen(names: Sequence[Any], rules: Rules) -> Resolution:
    return Resolution(linen_logical_to_mesh_axes(names, rules), tuple(names),
                      linen_unassigned(names, rules))
