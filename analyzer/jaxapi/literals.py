"""Which containers the source writes out whole: the tuples, lists and dicts whose
structure a check may rely on.

The interpreter does not follow ``d["k"] = v``, ``xs.append(v)`` or a helper that fills
a dict, so a container it holds may lack entries the program has. A structure check
(``in_shardings`` against the arguments, ``out_shardings`` against the outputs) trusts a
container only where the source states it: a literal at the use, or a name bound exactly
once, to a literal, and never changed in place.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Set, Tuple

import libcst as cst

from ..syntax import visit_all
from ..values import MUTATING_METHODS  # noqa: F401  (relevance reads it from here too)

LITERALS = (cst.Tuple, cst.List, cst.Dict)


def literal_item(lit: Optional[cst.CSTNode], key: Any) -> Optional[cst.BaseExpression]:
    """The written expression of entry ``key`` (an index, or a string dict key) of the
    literal tuple/list/dict ``lit``; None when ``lit`` is not one, or a ``*`` makes the
    index uncertain."""
    if isinstance(lit, (cst.Tuple, cst.List)) and isinstance(key, int):
        elements = lit.elements
        if key < len(elements) and not any(isinstance(e, cst.StarredElement) for e in elements):
            return elements[key].value
        return None
    if isinstance(lit, cst.Dict):
        for e in lit.elements:
            if isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString) \
                    and e.key.evaluated_value == key:
                return e.value
    return None


class Literals:
    """The names of one module bound once to a literal container and never changed."""

    def __init__(self, module: cst.Module):
        bindings: Dict[str, list] = {}
        changed: Set[str] = set()
        collector = _Collector(bindings, changed)
        visit_all(module, collector)
        # a function that changes its parameter in place may change any container
        # handed to it
        self.bound: Dict[str, cst.BaseExpression] = {} if collector.params & changed else {
            n: b[0] for n, b in bindings.items()
            if n not in changed and len(b) == 1 and isinstance(b[0], LITERALS)}

    def literal(self, node: Optional[cst.CSTNode]) -> Optional[cst.BaseExpression]:
        """The literal container ``node`` is, or names; None if it is not one."""
        for _ in range(8):  # a = b = (...) chains, never cycles
            if isinstance(node, LITERALS):
                return node
            if isinstance(node, cst.Name) and node.value in self.bound:
                node = self.bound[node.value]
                continue
            return None
        return None

    def child(self, node: Optional[cst.CSTNode], key: Any) -> Optional[cst.BaseExpression]:
        """The expression of entry ``key`` (an index, or a dict key) of the literal at
        ``node``; None when the source does not state it plainly."""
        return literal_item(self.literal(node), key)

    def states_whole(self, node: Optional[cst.CSTNode]) -> bool:
        """Whether ``node`` is a literal container (or names one) with no ``*``/``**``."""
        lit = self.literal(node)
        if not isinstance(lit, LITERALS):
            return False
        return not any(isinstance(e, (cst.StarredElement, cst.StarredDictElement))
                       for e in lit.elements)


# the last few modules analyzed (an import analyzes another module in between)
_CACHE: List[Tuple[cst.Module, Literals]] = []


def literals_of(module: cst.Module) -> Literals:
    for m, found in _CACHE:
        if m is module:
            return found
    found = Literals(module)
    _CACHE.insert(0, (module, found))
    del _CACHE[4:]
    return found


def _base(e: cst.BaseExpression) -> Optional[str]:
    while isinstance(e, (cst.Subscript, cst.Attribute)):
        e = e.value
    return e.value if isinstance(e, cst.Name) else None


class _Collector:
    """Every binding of a name (by name, whatever its scope) and every in-place change
    (``syntax.visit_all``: in no particular order, which none of these depend on)."""

    def __init__(self, bindings: Dict[str, list], changed: Set[str]):
        self.bindings = bindings
        self.changed = changed
        self.params: Set[str] = set()  # parameter names of the module's functions

    def bind(self, target: cst.BaseExpression, value: Any) -> None:
        if isinstance(target, cst.Name):
            self.bindings.setdefault(target.value, []).append(value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for e in target.elements:
                self.bind(e.value, None)
        elif isinstance(target, cst.StarredElement):
            self.bind(target.value, None)
        else:  # x[k] = v, x.attr = v
            name = _base(target)
            if name is not None:
                self.changed.add(name)

    def visit_Assign(self, node: cst.Assign) -> None:
        if isinstance(node.value, cst.Name):  # b = a: a change of b changes a
            self.changed.add(node.value.value)
        for t in node.targets:
            self.bind(t.target, node.value if len(node.targets) == 1 else None)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self.bind(node.target, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        name = _base(node.target)
        if name is not None:
            self.changed.add(name)

    def visit_Del(self, node: cst.Del) -> None:
        name = _base(node.target)
        if name is not None:
            self.changed.add(name)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self.bind(node.target, None)

    def visit_For(self, node: cst.For) -> None:
        self.bind(node.target, None)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self.bind(node.target, None)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self.bind(node.asname.name, None)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None:
            self.bind(node.name.name, None)

    def visit_Param(self, node: cst.Param) -> None:
        self.bind(node.name, None)
        if node.name.value not in ("self", "cls"):
            self.params.add(node.name.value)

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        target = node.asname.name if node.asname is not None else node.name
        if isinstance(target, cst.Name):
            self.bind(target, None)

    def visit_Global(self, node: cst.Global) -> None:
        for n in node.names:
            self.bind(n.name, None)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        for n in node.names:
            self.bind(n.name, None)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.bind(node.name, None)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.bind(node.name, None)

    def visit_Call(self, node: cst.Call) -> None:
        f = node.func
        if isinstance(f, cst.Attribute) and f.attr.value in MUTATING_METHODS:
            name = _base(f.value)
            if name is not None:
                self.changed.add(name)

