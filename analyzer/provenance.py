"""Where an abstract value came from, when that explains its type: the result of a
reduction over some axes, the gradient of an invariant primal, a spec built by a helper.
Warnings about collectives need such a reason, not just a type.

Values are frozen and compared by identity, so the record is a weak map from the value
itself: it lasts as long as the value does, and a value derived from it (``x * 2``) is
a new value with no recorded origin.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, replace
from typing import Iterator, Optional, Set, Tuple

import libcst as cst

from .syntax import subtree
from .values import ArrayVal, DictVal, ShardingVal, SpecVal, TupleVal, Value


@dataclass(frozen=True)
class Origin:
    kind: str  # "reduced" (by a collective), "gradient"
    node: Optional[cst.CSTNode]  # the reduction, the grad call
    axes: frozenset  # the manual axes the value is invariant over because of it


_ORIGINS: "weakref.WeakKeyDictionary[ArrayVal, Origin]" = weakref.WeakKeyDictionary()


def note(value: Value, origin: Origin) -> None:
    if isinstance(value, ArrayVal):
        _ORIGINS[value] = origin


def origin_of(value: Value) -> Optional[Origin]:
    return _ORIGINS.get(value) if isinstance(value, ArrayVal) else None


def leaves(value: Value, path: Tuple[object, ...] = ()) -> Iterator[Tuple[Tuple[object, ...], Value]]:
    """The leaves of a tree of tuples, lists and dicts, with their paths."""
    if isinstance(value, TupleVal):
        for i, item in enumerate(value.items):
            yield from leaves(item, path + (i,))
    elif isinstance(value, DictVal):
        for k, item in value.items:
            yield from leaves(item, path + (k,))
    else:
        yield path, value


def built_by_helper(value: Value, call: cst.CSTNode, helper: cst.CSTNode) -> Value:
    """The value a helper function returns, as its caller sees it: a spec the helper
    built (its P(...) is inside the helper) is attributed to the call, which decides it
    through its arguments; the P(...) is kept as ``built_at`` for a related location."""
    if not _has_spec(value):
        return value
    inside: Set[int] = {id(n) for n in subtree(helper)}
    return _relocated(value, call, inside)


def _has_spec(v: Value) -> bool:
    if isinstance(v, (SpecVal, ShardingVal)):
        return True
    if isinstance(v, TupleVal):
        return any(_has_spec(x) for x in v.items)
    if isinstance(v, DictVal):
        return any(_has_spec(x) for _, x in v.items)
    return False


def _relocated(v: Value, call: cst.CSTNode, inside: Set[int]) -> Value:
    if isinstance(v, SpecVal) and v.node is not None and id(v.node) in inside:
        return replace(v, node=call, built_at=v.built_at or v.node)
    if isinstance(v, ShardingVal) and isinstance(v.spec, SpecVal):
        spec = _relocated(v.spec, call, inside)
        return v if spec is v.spec else replace(v, spec=spec)
    if isinstance(v, TupleVal):
        items = tuple(_relocated(x, call, inside) for x in v.items)
        return v if all(a is b for a, b in zip(items, v.items)) else TupleVal(items, v.is_list)
    if isinstance(v, DictVal):
        pairs = tuple((k, _relocated(x, call, inside)) for k, x in v.items)
        return v if all(a[1] is b[1] for a, b in zip(pairs, v.items)) else DictVal(pairs)
    return v
