"""The runtime layer's annotations, read statically.

``Sharded[jax.Array, "float32[B@data,D]"]`` on a parameter, ``assert_sharding(x, "...")``
and ``check_shardings`` return annotations are sharding types the source *declares*.
The analyzer uses them as entry types where it knows nothing better, and compares them
with what it infers (``sharding-annotation-mismatch``). Only the known parts of an
inferred type are compared: an unknown part never gives a finding.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Dict, List, Optional

import libcst as cst

from sharding_types import ShardingSyntaxError, ShardingType, mismatch_reasons, parse

from .syntax import string_value
from .values import ArrayVal


def parse_or_none(text: Optional[str]) -> Optional[ShardingType]:
    if text is None:
        return None
    try:
        return parse(text)
    except ShardingSyntaxError:
        return None


def annotation_text(ann: Optional[cst.BaseExpression], resolve) -> Optional[str]:
    """The type string of ``Sharded[X, "..."]``, ``Sharded["..."]`` or
    ``Annotated[X, "..."]``; ``resolve`` maps an expression to its qualified name."""
    if not isinstance(ann, cst.Subscript):
        return None
    head = resolve(ann.value)
    if head not in ("sharding_types.Sharded", "typing.Annotated", "typing_extensions.Annotated"):
        return None
    last = ann.slice[-1].slice
    if not isinstance(last, cst.Index):
        return None
    v = last.value
    if isinstance(v, cst.Call) and resolve(v.func) == "sharding_types.parse" and v.args:
        v = v.args[0].value
    if isinstance(v, cst.SimpleString):
        try:
            s = string_value(v)
        except Exception:
            return None
        return s if isinstance(s, str) else None
    return None


def mismatches(expected: ShardingType, actual: ArrayVal, bindings: Dict[str, int]) -> List[str]:
    """How the *known* parts of ``actual`` contradict ``expected`` (binds named dims):
    ``sharding_types.mismatch_reasons`` in partial mode, worded declared/inferred."""
    return mismatch_reasons(expected, actual, bindings, partial=True, words=("declared", "inferred"))


def from_annotation(t: ShardingType, bindings: Dict[str, int], base: Optional[ArrayVal] = None,
                    node=None) -> ArrayVal:
    """An ArrayVal holding what ``t`` declares; ``base``'s known facts win."""
    shape = tuple(d.size if d.size is not None else bindings.get(d.name or "") for d in t.dims)
    declared = ArrayVal(shape, None, None, node, frozenset(t.varying), dtype=t.dtype,
                        weak=t.weak_type if t.weak_type else None,
                        dims=tuple(d.axes for d in t.dims), unreduced=frozenset(t.unreduced),
                        reduced=frozenset(t.reduced), memory_space=t.memory_space)
    if base is None:
        return declared
    n = base.rank
    if n is not None and n != t.rank:
        return base
    bshape = base.shape or (None,) * t.rank
    return replace(base,
                   shape=tuple(b if b is not None else s for b, s in zip(bshape, shape)),
                   dtype=base.dtype or t.dtype,
                   weak=base.weak if base.weak is not None else declared.weak,
                   dims=base.dims if base.dims is not None else declared.dims,
                   varying=base.varying if base.varying is not None else declared.varying,
                   unreduced=base.unreduced if base.unreduced is not None else declared.unreduced,
                   reduced=base.reduced if base.reduced is not None else declared.reduced,
                   memory_space=base.memory_space or declared.memory_space)
