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

from sharding_types import ShardingSyntaxError, ShardingType, parse

from . import transfer as tr
from .values import ArrayVal

ANY = "_"


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
            s = v.evaluated_value
        except Exception:
            return None
        return s if isinstance(s, str) else None
    return None


def mismatches(expected: ShardingType, actual: ArrayVal, bindings: Dict[str, int]) -> List[str]:
    """How the *known* parts of ``actual`` contradict ``expected`` (binds named dims)."""
    out: List[str] = []
    if actual.dtype is not None and actual.dtype != expected.dtype:
        out.append(f"dtype: declared {expected.dtype}, inferred {actual.dtype}")
    if expected.weak_type and actual.weak is False:
        out.append("weak type: declared weakly typed (~), inferred strongly typed")
    n = tr.rank(actual)
    if n is not None and n != expected.rank:
        out.append(f"rank: declared {expected.rank} dims, inferred {n}")
        return out
    if n is None:
        return out
    shape = actual.shape or (None,) * n
    for i, d in enumerate(expected.dims):
        size = shape[i]
        if d.name is not None and d.name != ANY:
            if size is not None:
                if d.name in bindings and bindings[d.name] != size:
                    out.append(f"dim {i}: declared {d.name}={bindings[d.name]}, inferred size {size}")
                bindings.setdefault(d.name, size)
        elif d.size is not None and size is not None and d.size != size:
            out.append(f"dim {i}: declared size {d.size}, inferred {size}")
        if actual.dims is not None and tuple(actual.dims[i]) != tuple(d.axes):
            out.append(f"dim {i}: declared {_sharded(d.axes)}, inferred {_sharded(actual.dims[i])}")
    for label, want, got in (("varying", expected.varying, actual.varying),
                             ("unreduced", expected.unreduced, actual.unreduced)):
        if got is not None and set(want) != set(got):
            out.append(f"{label} axes: declared {_set(want)}, inferred {_set(got)}")
    return out


def _sharded(axes) -> str:
    return f"sharded over {tr.fmt_entry(tuple(axes))}" if axes else "replicated"


def _set(axes) -> str:
    return "{" + ", ".join(sorted(axes)) + "}" if axes else "{}"


def from_annotation(t: ShardingType, bindings: Dict[str, int], base: Optional[ArrayVal] = None,
                    node=None) -> ArrayVal:
    """An ArrayVal holding what ``t`` declares; ``base``'s known facts win."""
    shape = tuple(d.size if d.size is not None else bindings.get(d.name or "") for d in t.dims)
    declared = ArrayVal(shape, None, None, node, frozenset(t.varying), dtype=t.dtype,
                        weak=t.weak_type if t.weak_type else None,
                        dims=tuple(d.axes for d in t.dims), unreduced=frozenset(t.unreduced))
    if base is None:
        return declared
    n = tr.rank(base)
    if n is not None and n != t.rank:
        return base
    bshape = base.shape or (None,) * t.rank
    return replace(base,
                   shape=tuple(b if b is not None else s for b, s in zip(bshape, shape)),
                   dtype=base.dtype or t.dtype,
                   weak=base.weak if base.weak is not None else declared.weak,
                   dims=base.dims if base.dims is not None else declared.dims,
                   varying=base.varying if base.varying is not None else declared.varying,
                   unreduced=base.unreduced if base.unreduced is not None else declared.unreduced)
