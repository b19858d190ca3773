"""Which attributes a ``setattr`` call can set, read from the source around it.

An attribute set by name could be any attribute, so a class (or module) with one used to
make every attribute's count of assignments unknown, and with it every attribute read of
its instances: one ``setattr(self, f"layer_{i}", layer)`` in an NNX module hid the
``self.mesh`` its ``__init__`` stores. The name is often plain from the source:

- a string literal: ``setattr(self, "mesh", m)`` sets ``mesh``;
- an f-string that starts with text: ``setattr(self, f"layer_{i}", ...)`` sets only
  names starting with ``layer_``;
- the variable of a ``for`` loop over string literals (also ``zip(names, ...)`` and
  ``enumerate(names)``), where the loop's body never rebinds it, and ``names`` is a
  literal, or a name or class attribute (``cls._keys``, ``self._keys``) every
  assignment of which under the same class or module is a literal of strings.

A class attribute a subclass in another module overrides is read as this module writes
it: a subclass that lists in it an attribute its base's methods read is not followed.
Anything else sets any attribute (``None``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, FrozenSet, List, Optional

import libcst as cst

from ..syntax import dotted, target_names, walk

SET_BY_NAME = ("setattr", "object.__setattr__")


@dataclass(frozen=True)
class NamesSet:
    """The attributes one ``setattr`` can set: these names, and any name that starts
    with one of these prefixes."""

    names: FrozenSet[str] = frozenset()
    prefixes: FrozenSet[str] = frozenset()

    def may_set(self, attr: str) -> bool:
        return attr in self.names or any(attr.startswith(p) for p in self.prefixes)


def names_set(call: cst.Call, loops: Dict[int, FrozenSet[str]]) -> Optional[NamesSet]:
    """What ``setattr(obj, key, value)`` can set (None: any attribute); ``loops``: the
    names each ``setattr`` under the same root takes from its loop (``loop_names``)."""
    if len(call.args) < 2:
        return None
    key = call.args[1].value
    if isinstance(key, cst.SimpleString):
        value = key.evaluated_value
        return NamesSet(names=frozenset({value})) if isinstance(value, str) else None
    if isinstance(key, cst.FormattedString) and key.parts \
            and isinstance(key.parts[0], cst.FormattedStringText) and key.parts[0].value \
            and "{" not in key.parts[0].value and "\\" not in key.parts[0].value:
        return NamesSet(prefixes=frozenset({key.parts[0].value}))
    names = loops.get(id(call))
    return NamesSet(names=names) if names is not None else None


def loop_names(root: cst.CSTNode) -> Dict[int, FrozenSet[str]]:
    """For each ``setattr`` under ``root`` whose name is the variable of a ``for`` loop
    over string literals (see the module's docstring): the names it takes."""
    out: Dict[int, FrozenSet[str]] = {}
    loops = [n for n in walk(root) if isinstance(n, cst.For)]
    if not loops:
        return out
    for loop in loops:
        var, iterable = _loop_variable(loop)
        if var is None or iterable is None:
            continue
        calls = [n for n in walk(loop.body) if isinstance(n, cst.Call)
                 and dotted(n.func) in SET_BY_NAME and len(n.args) >= 2
                 and isinstance(n.args[1].value, cst.Name) and n.args[1].value.value == var]
        if not calls or any(var in _bound_names(n) for n in walk(loop.body)):
            continue
        names = _string_literals(iterable, root)
        if names is not None:
            for c in calls:
                out[id(c)] = names
    return out


def _loop_variable(loop: cst.For):
    """The loop's variable holding the names, and what it iterates over: ``for k in X``,
    ``for k, v in zip(X, ...)``, ``for i, k in enumerate(X)``."""
    target, it = loop.target, loop.iter
    if isinstance(target, cst.Name):
        return target.value, it
    if not (isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == 2
            and isinstance(it, cst.Call) and it.args):
        return None, None
    func = dotted(it.func)
    first, second = (e.value for e in target.elements)
    if func == "zip" and isinstance(first, cst.Name):
        return first.value, it.args[0].value
    if func == "enumerate" and len(it.args) == 1 and isinstance(second, cst.Name):
        return second.value, it.args[0].value
    return None, None


def _string_literals(e: cst.BaseExpression, root: cst.CSTNode) -> Optional[FrozenSet[str]]:
    """The strings of a literal list/tuple/set of string literals, or of a name or class
    attribute whose every assignment under ``root`` is one; else None."""
    own = _literal_strings(e)
    if own is not None:
        return own
    if isinstance(e, cst.Name):
        name = e.value
    elif isinstance(e, cst.Attribute) and (
            isinstance(e.value, cst.Name) and e.value.value in ("self", "cls")
            or dotted(e.value) == "type(self)"
            or isinstance(e.value, cst.Call) and dotted(e.value.func) == "type"):
        name = e.attr.value
    else:
        return None
    found: set = set()
    for n in walk(root):
        if isinstance(n, cst.Attribute) and n.attr.value == name and _is_target(n, root):
            return None  # assigned on an instance or object too
        if name in _bound_names(n):
            value = n.value if isinstance(n, (cst.Assign, cst.AnnAssign)) else None
            strings = _literal_strings(value) if value is not None else None
            if strings is None:
                return None
            found |= strings
    return frozenset(found) if found else None


def _literal_strings(e: Optional[cst.BaseExpression]) -> Optional[FrozenSet[str]]:
    if not isinstance(e, (cst.List, cst.Tuple, cst.Set)):
        return None
    out = set()
    for el in e.elements:
        if not (isinstance(el, cst.Element) and isinstance(el.value, cst.SimpleString)):
            return None
        v = el.value.evaluated_value
        if not isinstance(v, str):
            return None
        out.add(v)
    return frozenset(out)


def _bound_names(n: cst.CSTNode) -> FrozenSet[str]:
    """The plain names ``n`` binds, if it is a binding form (assignment, loop or
    comprehension target, parameter, ``as`` name, import, walrus, ``global``)."""
    if isinstance(n, cst.Assign):
        return frozenset(x.value for t in n.targets for x in target_names(t.target))
    if isinstance(n, (cst.AnnAssign, cst.AugAssign, cst.For, cst.CompFor, cst.NamedExpr)):
        return frozenset(x.value for x in target_names(n.target))
    if isinstance(n, cst.Param):
        return frozenset({n.name.value})
    if isinstance(n, cst.AsName):
        return frozenset(x.value for x in target_names(n.name))
    if isinstance(n, cst.ImportAlias):
        return frozenset({(dotted(n.name) or "").split(".")[0]})
    if isinstance(n, (cst.Global, cst.Nonlocal)):
        return frozenset(item.name.value for item in n.names)
    return frozenset()


def _is_target(attr: cst.Attribute, root: cst.CSTNode) -> bool:
    """Whether ``attr`` is assigned (a target of ``=``, ``: T =``, ``+=``, ``for``,
    ``with ... as``) somewhere under ``root``."""
    for n in walk(root):
        targets: List[cst.BaseExpression]
        if isinstance(n, cst.AssignTarget):
            targets = [n.target]
        elif isinstance(n, (cst.AnnAssign, cst.AugAssign, cst.For)):
            targets = [n.target]
        elif isinstance(n, cst.AsName):
            targets = [n.name]
        else:
            continue
        while targets:
            t = targets.pop()
            if t is attr:
                return True
            if isinstance(t, (cst.Tuple, cst.List)):
                targets.extend(el.value for el in t.elements)
    return False
