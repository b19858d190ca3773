"""Small readings of libcst syntax shared by the interpreter, the API models and rules."""

from __future__ import annotations

import dataclasses
from typing import Callable, Dict, Iterator, List, Optional, Tuple

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
# whitespace and comments: about half of all nodes, never what an analysis asks about
LAYOUT = frozenset({"SimpleWhitespace", "ParenthesizedWhitespace", "TrailingWhitespace",
                    "EmptyLine", "Newline", "Comment"})
# a field value's type -> 1: a node to walk, 2: a tuple or list, 0: neither; one table
# walking every node, one leaving the layout nodes out
_KINDS: Tuple[Dict[type, int], Dict[type, int]] = ({}, {})


def node_fields(cls: type) -> Tuple[str, ...]:
    """The dataclass fields of a libcst node class, read once."""
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


def is_layout(cls: type) -> bool:
    """A libcst whitespace or comment node class (``LAYOUT``)."""
    return cls.__name__ in LAYOUT and cls.__module__.startswith("libcst.")


def _kind(t: type, layout: bool) -> int:
    if issubclass(t, cst.CSTNode):
        kind = 1 if layout or not is_layout(t) else 0
    else:
        kind = 2 if issubclass(t, (tuple, list)) else 0
    _KINDS[layout][t] = kind
    return kind


def walk(root: cst.CSTNode, layout: bool = True,
         stop: Optional[cst.CSTNode] = None) -> Iterator[cst.CSTNode]:
    """``root`` and every node inside it, in no particular order; ``layout=False`` leaves
    out whitespace and comments (but ``root``); ``stop`` is given but not entered. Read
    from the nodes' dataclass fields: libcst's ``children`` rebuilds each node it visits,
    several times slower (use it where the order matters). Field values are told apart
    by their type, looked up once (``isinstance`` against libcst's abstract base is slow)."""
    stack = [root]
    pop, push, kinds = stack.pop, stack.append, _KINDS[layout]
    while stack:
        n = pop()
        yield n
        if n is stop:
            continue
        for name in node_fields(type(n)):
            v = getattr(n, name)
            kind = kinds.get(type(v))
            if kind is None:
                kind = _kind(type(v), layout)
            if kind == 1:
                push(v)
            elif kind == 2:
                for x in v:
                    kind = kinds.get(type(x))
                    if kind == 1 or (kind is None and _kind(type(x), layout) == 1):
                        push(x)


def string_value(node: cst.SimpleString) -> object:
    """``node.evaluated_value``, without its cost where the literal has no prefix and no
    escape (almost every string in sharding code: ``"data"``): libcst evaluates each with
    ``ast.literal_eval``, a parse and a compile of its own (a fifth of a check's time
    on real code)."""
    v = node.value
    if "\\" not in v and v[:1] in ("'", '"'):
        q = 3 if v[:3] in ('"""', "'''") else 1
        return v[q:-q]
    return node.evaluated_value


def child_nodes(n: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The nodes right inside ``n`` (no whitespace or comments), in no particular order:
    ``walk``'s step, for a walk that keeps state per subtree."""
    kinds = _KINDS[False]
    for name in node_fields(type(n)):
        v = getattr(n, name)
        kind = kinds.get(type(v))
        if kind is None:
            kind = _kind(type(v), False)
        if kind == 1:
            yield v
        elif kind == 2:
            for x in v:
                kind = kinds.get(type(x))
                if kind == 1 or (kind is None and _kind(type(x), False) == 1):
                    yield x


def subtree(root: cst.CSTNode) -> List[cst.CSTNode]:
    """``root`` and every node inside it, in no particular order (``walk``)."""
    return list(walk(root))


def visit_all(root: cst.CSTNode, visitor: object) -> None:
    """Call ``visitor.visit_<Type>(node)`` for ``root`` and every node inside it that has
    one, in no particular order: libcst's ``visit`` for a visitor that neither prunes
    nor depends on the order, several times faster (``walk``). Whitespace and comments
    (``LAYOUT``, half the nodes) are not visited."""
    methods: Dict[type, object] = {}
    for node in walk(root, layout=False):
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


def compound_blocks(stmt: cst.BaseCompoundStatement) -> List[cst.CSTNode]:
    """The bodies a compound statement runs (an if's elif/else, a try's handlers...)."""
    out: List[cst.CSTNode] = [stmt.body] if hasattr(stmt, "body") else []  # not a match
    for name in ("orelse", "finalbody"):
        part = getattr(stmt, name, None)
        if part is not None:
            out.append(part if isinstance(part, cst.If) else part.body)
    out.extend(h.body for h in getattr(stmt, "handlers", ()))
    out.extend(c.body for c in getattr(stmt, "cases", ()))
    return out


def has_yield(node: cst.CSTNode) -> bool:
    """Whether ``node`` holds a ``yield`` of its own, not one of a function, lambda or
    class defined inside it (a generator's body; an expression statement of one)."""
    if isinstance(node, (cst.Name, cst.SimpleString, cst.Integer, cst.Float, cst.Attribute)):
        return False
    if not any(type(n) is cst.Yield for n in walk(node, layout=False)):
        return False  # the common answer, from a hand walk (a libcst visitor is slow)
    finder = _Yields()  # a yield found may be a nested function's
    node.visit(finder)
    return finder.found


class _Yields(cst.CSTVisitor):
    found = False

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.Yield):
            self.found = True
        return not self.found and not isinstance(node, (cst.Lambda, cst.FunctionDef,
                                                        cst.ClassDef))


def import_bindings(node: cst.CSTNode) -> Iterator[Tuple[str, str]]:
    """(the name bound, the dotted name imported) for each name of an import statement:
    ``import a.b`` gives ("a.b", "a.b") (its dotted uses), ``import a.b as c`` ("c",
    "a.b"), ``from a import b as c`` ("c", "a.b"). A star import, a relative one with no
    module, and any other node give nothing."""
    if isinstance(node, cst.Import):
        for a in node.names:
            full = dotted(a.name)
            yield _alias(a) or full, full
    elif isinstance(node, cst.ImportFrom) and node.module is not None \
            and not isinstance(node.names, cst.ImportStar):
        base = dotted(node.module)
        for a in node.names:
            yield _alias(a) or dotted(a.name), f"{base}.{dotted(a.name)}"


def _alias(a: cst.ImportAlias) -> Optional[str]:
    return a.asname.name.value if a.asname is not None and isinstance(a.asname.name, cst.Name) \
        else None


_HOLDS_STATEMENTS = (cst.Module, cst.BaseCompoundStatement, cst.BaseSuite, cst.Else,
                     cst.ExceptHandler, cst.ExceptStarHandler, cst.Finally, cst.MatchCase)


def small_statements(node: cst.CSTNode) -> Iterator[cst.BaseSmallStatement]:
    """The simple statements (``x = v``, ``return``...) in ``node``, nested functions and
    classes included, in the order of the source."""
    if isinstance(node, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
        yield from node.body
    elif isinstance(node, _HOLDS_STATEMENTS):
        for child in node.children:  # in order; few nodes hold statements
            yield from small_statements(child)


def param_names(params: cst.Parameters) -> List[str]:
    """The names a function's parameters bind, ``*args`` and ``**kwargs`` included."""
    every = list(params.posonly_params) + list(params.params) + list(params.kwonly_params)
    every += [p for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)]
    return [p.name.value for p in every]


def enclosing_scope(module: cst.Module, call: cst.CSTNode) -> Optional[cst.CSTNode]:
    """The innermost function of ``module`` whose body holds ``call``, else ``module``
    when its top level does; None when ``module`` does not hold it (a function of
    another module, run from this one) or a class body or lambda does. One walk of the
    module, kept for the last few modules asked about."""
    scopes = _SCOPES.get(id(module))
    if scopes is None or scopes[0] is not module:
        found: Dict[int, cst.CSTNode] = {}
        _scopes_of(module, module, found)
        if len(_SCOPES) >= 64:
            _SCOPES.clear()
        scopes = _SCOPES[id(module)] = (module, found)
    scope = scopes[1].get(id(call))
    return None if scope is _NO_SCOPE else scope


_SCOPES: Dict[int, Tuple[cst.Module, Dict[int, cst.CSTNode]]] = {}


def _scopes_of(node: cst.CSTNode, scope: cst.CSTNode, found: Dict[int, cst.CSTNode]) -> None:
    for child in node.children:
        if isinstance(child, cst.Call):
            found[id(child)] = scope
        if isinstance(child, cst.FunctionDef):
            _scopes_of(child.body, child, found)
            for part in (child.params, *child.decorators):
                _scopes_of(part, scope, found)
        elif isinstance(child, (cst.ClassDef, cst.Lambda)):
            # a class body or a lambda: not a scope a plain assignment there reaches
            _scopes_of(child, _NO_SCOPE, found)
        else:
            _scopes_of(child, scope, found)


_NO_SCOPE = cst.Pass()


def bound_once(scope: cst.CSTNode, name: str,
               accept: Callable[[cst.BaseExpression], bool]) -> Optional[cst.BaseExpression]:
    """The value of the one statement that binds ``name`` in ``scope`` (a function, or
    the module), where that is ``name = value`` with a value ``accept`` takes, and
    nothing else there binds it (a parameter, another assignment, a loop, a ``with``,
    an import, a ``global``, an ``except ... as``, a walrus); None otherwise. Nested
    functions and classes are scopes of their own: their statements are not read."""
    if isinstance(scope, cst.FunctionDef) and name in param_names(scope.params):
        return None
    values: List[Optional[cst.BaseExpression]] = []
    for node in _own_statements(scope.body if isinstance(scope, cst.FunctionDef) else scope):
        if isinstance(node, cst.Assign):
            for t in node.targets:
                if any(n.value == name for n in target_names(t.target)):
                    simple = isinstance(t.target, cst.Name) and len(node.targets) == 1
                    values.append(node.value if simple else None)
        elif _binds(node, name):
            return None
        if len(values) > 1:
            return None
    if len(values) != 1 or values[0] is None or not accept(values[0]):
        return None
    body = scope.body if isinstance(scope, cst.FunctionDef) else scope
    return None if _walrus_binds(body, name) else values[0]


def _own_statements(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The statements in ``node``, compound ones too, not those of a function or class
    defined inside it (which binds its name; its body is a scope of its own)."""
    for child in node.children:
        if isinstance(child, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
            yield child
        if not isinstance(child, (cst.BaseExpression, cst.BaseSmallStatement, cst.FunctionDef,
                                  cst.ClassDef)):
            yield from _own_statements(child)


def _binds(node: cst.CSTNode, name: str) -> bool:
    """Whether a statement other than a plain assignment may bind ``name``."""
    if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
        return node.name.value == name
    if isinstance(node, (cst.AnnAssign, cst.AugAssign)):
        return any(n.value == name for n in target_names(node.target)) \
            or not isinstance(node.target, (cst.Name, cst.Attribute, cst.Subscript))
    if isinstance(node, cst.For):
        return any(n.value == name for n in target_names(node.target)) \
            or not isinstance(node.target, (cst.Name, cst.Tuple, cst.List))
    if isinstance(node, cst.With):
        return any(i.asname is not None for i in node.items)
    if isinstance(node, (cst.Import, cst.ImportFrom)):
        if isinstance(node.names, cst.ImportStar):
            return True
        return any((_alias(a) or dotted(a.name).split(".")[0]) == name for a in node.names)
    if isinstance(node, (cst.Global, cst.Nonlocal)):
        return any(n.name.value == name for n in node.names)
    if isinstance(node, cst.Match):
        return True
    if isinstance(node, cst.Try):
        return any(h.name is not None for h in node.handlers)
    return False


def _walrus_binds(node: cst.CSTNode, name: str) -> bool:
    """Whether ``node`` holds ``(name := ...)`` outside the functions and classes in it."""
    if isinstance(node, cst.NamedExpr):
        return isinstance(node.target, cst.Name) and node.target.value == name
    if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
        return False
    return any(_walrus_binds(c, name) for c in node.children)
