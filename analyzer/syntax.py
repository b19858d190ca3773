"""Small readings of libcst syntax shared by the interpreter, the API models and rules."""

from __future__ import annotations

import dataclasses
from typing import Dict, List, Optional, Tuple

import libcst as cst


def dotted(node: cst.CSTNode) -> str:
    """``a.b.c`` for a Name/Attribute chain; "" for anything else (``f().b`` included)."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = dotted(node.value)
        return f"{base}.{node.attr.value}" if base else ""
    return ""


def root_name(node: cst.CSTNode) -> Optional[str]:
    """The name an attribute chain starts from (``config.shd_config``: ``config``)."""
    while isinstance(node, cst.Attribute):
        node = node.value
    return node.value if isinstance(node, cst.Name) else None


_FIELDS: Dict[type, Tuple[str, ...]] = {}
_KINDS: Dict[type, int] = {}  # a field value's type -> 1: a libcst node, 2: a tuple or list


def node_fields(cls: type) -> Tuple[str, ...]:
    """The dataclass fields of a libcst node class, read once."""
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


def _kind(t: type) -> int:
    kind = _KINDS[t] = 1 if issubclass(t, cst.CSTNode) else 2 if issubclass(t, (tuple, list)) else 0
    return kind


def subtree(root: cst.CSTNode) -> List[cst.CSTNode]:
    """``root`` and every node inside it, in no particular order. Read from the nodes'
    dataclass fields: libcst's ``children`` rebuilds each node it visits, several times
    slower (use it where the order matters). Field values are told apart by their
    type, looked up once (``isinstance`` against libcst's abstract base is slow)."""
    out: List[cst.CSTNode] = []
    stack = [root]
    pop, push, kinds = stack.pop, stack.append, _KINDS
    while stack:
        n = pop()
        out.append(n)
        for name in node_fields(type(n)):
            v = getattr(n, name)
            kind = kinds.get(type(v))
            if kind is None:
                kind = _kind(type(v))
            if kind == 1:
                push(v)
            elif kind == 2:
                for x in v:
                    kind = kinds.get(type(x))
                    if kind == 1 or (kind is None and _kind(type(x)) == 1):
                        push(x)
    return out


def visit_all(root: cst.CSTNode, visitor: object) -> None:
    """Call ``visitor.visit_<Type>(node)`` for ``root`` and every node inside it that has
    one, in no particular order: libcst's ``visit`` for a visitor that neither prunes
    nor depends on the order, several times faster (``subtree``)."""
    methods: Dict[type, object] = {}
    for node in subtree(root):
        cls = type(node)
        fn = methods.get(cls, methods)
        if fn is methods:
            fn = methods[cls] = getattr(visitor, "visit_" + cls.__name__, None)
        if fn is not None:
            fn(node)  # type: ignore[operator]  # a visit_<Type> method


def keyword_argument(call: cst.CSTNode, keyword: str) -> Optional[cst.Arg]:
    """The ``keyword=...`` argument of ``call`` (None when not passed that way)."""
    if isinstance(call, cst.Call):
        for a in call.args:
            if a.keyword is not None and a.keyword.value == keyword:
                return a
    return None


def none_test(test: cst.BaseExpression) -> Optional[Tuple[cst.BaseExpression, bool]]:
    """(``x``, True) for ``x is None``, (``x``, False) for ``x is not None``; else None."""
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        c = test.comparisons[0]
        if isinstance(c.operator, (cst.Is, cst.IsNot)) and isinstance(c.comparator, cst.Name) \
                and c.comparator.value == "None":
            return test.left, isinstance(c.operator, cst.Is)
    return None


def target_names(t: cst.CSTNode) -> List[cst.Name]:
    """The names an assignment target binds: ``x``, or each name of ``a, (b, c)``."""
    if isinstance(t, cst.Name):
        return [t]
    if isinstance(t, (cst.Tuple, cst.List)):
        return [n for el in t.elements for n in target_names(el.value)]
    return []
