"""The hand-written walks that replace libcst visitors where those cost most
(``syntax.visit_all``, ``syntax.small_statements``, the attribute counts of
``interp/objects.py``) see what the visitors saw, on every example program of the
project; and ``check``'s analysis, which skips the reasons a
sharding site is unknown, finds the same sites as the map's."""

from __future__ import annotations

import libcst as cst

from shardcheck.analyzer.config import Config
from shardcheck.analyzer.engine import analyze
from shardcheck.analyzer.interp import objects
from shardcheck.analyzer.jaxapi import literals, sites
from shardcheck.analyzer import syntax
from shardcheck.analyzer.syntax import dotted, subtree, visit_all
from test_relevance import PROGRAMS


def _modules():
    out = []
    for name, code in PROGRAMS:
        try:
            out.append((name, cst.parse_module(code)))
        except cst.ParserSyntaxError:
            continue
    return out


MODULES = _modules()


class _Through(cst.CSTVisitor):
    """libcst's own visit, calling a plain collector's ``visit_<Type>`` methods."""

    def __init__(self, collector):
        self.collector = collector

    def on_visit(self, node):
        fn = getattr(self.collector, "visit_" + type(node).__name__, None)
        if fn is not None:
            fn(node)
        return True


def _collected(module, walk):
    bindings, changed = {}, set()
    c = literals._Collector(bindings, changed)
    walk(module, c)
    return ({k: sorted(map(id, v)) for k, v in bindings.items()}, changed, c.params)


def test_subtree_holds_every_node_libcsts_visitor_visits():
    class Every(cst.CSTVisitor):
        def __init__(self):
            self.ids = set()

        def on_visit(self, node):
            self.ids.add(id(node))
            return True

    for name, module in MODULES:
        every = Every()
        module.visit(every)
        assert {id(n) for n in subtree(module)} == every.ids, name


def test_the_literal_collector_sees_what_libcsts_visit_shows_it():
    changed_somewhere = 0
    for name, module in MODULES:
        fast = _collected(module, visit_all)
        slow = _collected(module, lambda m, c: m.visit(_Through(c)))
        assert fast == slow, name
        changed_somewhere += bool(fast[1])
    assert changed_somewhere > 20  # the programs change containers in place


def _assignments_by_visitor(body):
    found = []

    class V(cst.CSTVisitor):
        def visit_Assign(self, node):
            found.append(node)

        def visit_AnnAssign(self, node):
            found.append(node)
    body.visit(V())
    return found


def test_small_statements_come_in_the_visitors_order():
    """``_assigned_reason`` reports the last assignment: the order must be the source's,
    in every function (nested ones, branches, handlers and loops' else included)."""
    bodies = 0
    for name, module in MODULES:
        for body in [module] + [n for n in subtree(module) if isinstance(n, cst.FunctionDef)]:
            ours = [s for s in syntax.small_statements(body)
                    if isinstance(s, (cst.Assign, cst.AnnAssign))]
            assert ours == _assignments_by_visitor(body), name
            bodies += 1
    assert bodies > 400


ORDER = """
def f(flag):
    try:
        x = 1
    except ValueError:
        x = 2
    else:
        x = 3
    finally:
        x = 4
    for i in range(3):
        x = 5
    else:
        x = 6
    if flag:
        x = 7
    elif flag is None:
        x = 8
    else:
        x: int = 9
    with open("f"):
        x = 10
    match flag:
        case 1:
            x = 11
    def g():
        x = 12
    class C:
        x = 13
    while flag: x = 14; y = x
    return x
"""


def test_small_statements_in_every_kind_of_block():
    fn = cst.parse_module(ORDER).body[0]
    values = [s.value.value for s in syntax.small_statements(fn)
              if isinstance(s, (cst.Assign, cst.AnnAssign)) and isinstance(s.value, cst.Integer)]
    assert values == [str(i) for i in range(1, 15)]
    assert sites._last_assignment(fn, "x").count == 14


def _site(s):
    return (s.node, s.kind, s.path, str(s.spec), str(s.mesh), s.logical)


def test_check_finds_the_maps_sites_without_their_reasons():
    """The same sites, specs and meshes either way; without ``explain``, the reasons
    ``unknown_reason`` gives are not worked out (a logical site's own stays)."""
    config = Config()
    unexplained = 0
    for name, module in MODULES:
        full = analyze(module, "m", config).events.sites
        model = analyze(module, "m", config, explain=False).events.sites
        assert [_site(s) for s in full] == [_site(s) for s in model], name
        for a, b in zip(full, model):
            assert sites.UNEXPLAINED not in (a.reason or ""), name
            if sites.UNEXPLAINED in (b.reason or ""):
                assert a.spec is None and a.reason, name
                unexplained += 1
            else:
                assert a.reason == b.reason, name
    assert unexplained > 10


class _AttributeTargets(cst.CSTVisitor):
    """The libcst visitor the attribute counts were read with before (objects.py)."""

    def __init__(self, me=None):
        self.me, self.counts, self.on_self, self.dynamic = me, {}, set(), False

    def _target(self, t):
        if isinstance(t, cst.Attribute):
            self.counts[t.attr.value] = self.counts.get(t.attr.value, 0) + 1
            if isinstance(t.value, cst.Name) and t.value.value == self.me:
                self.on_self.add(t.attr.value)
        elif isinstance(t, (cst.Tuple, cst.List)):
            for el in t.elements:
                self._target(el.value)

    def visit_AssignTarget(self, node):
        self._target(node.target)

    def visit_AnnAssign(self, node):
        self._target(node.target)

    def visit_AugAssign(self, node):
        self._target(node.target)

    def visit_Call(self, node):
        # a literal name counts as that name; any other (set_by_name.py tells more, in
        # loops and by prefixes: tests/analyzer/interp/test_set_by_name.py) as any name
        if dotted(node.func) in ("setattr", "object.__setattr__"):
            key = node.args[1].value if len(node.args) >= 2 else None
            if isinstance(key, cst.SimpleString):
                self.counts[key.evaluated_value] = self.counts.get(key.evaluated_value, 0) + 1
                self.on_self.add(key.evaluated_value)
            else:
                self.counts[""] = self.counts.get("", 0) + 2
                self.dynamic = self.dynamic or key is not None


ATTRIBUTES = """
class A(Base):
    x: int = 0

    def __init__(self, mesh, n):
        self.mesh = mesh
        self.a, (other.b, [self.c, *self.d]) = 1, (2, [3, 4])
        self.e: int = n
        self.e += 1
        for self.f in range(3):
            pass
        setattr(self, "g", 1)
        object.__setattr__(self, name, 2)

        def inner(me):
            me.h = 3
            self.i = lambda: 4

    def __getattr__(self, k):
        return k

    @staticmethod
    def nothing():
        setattr(x)
"""


def test_attribute_counts_are_what_libcsts_visitor_counted():
    """``objects.attribute_assignments`` and ``_assigned_on_self`` (a hand-written walk, once
    per class) against the visitor they replace, on every class of every example program."""
    modules = MODULES + [("attributes", cst.parse_module(ATTRIBUTES))]
    classes = [n for _, m in modules for n in subtree(m) if isinstance(n, cst.ClassDef)]
    assert len(classes) > 20
    for cls in classes:
        old = _AttributeTargets()
        cls.visit(old)
        assert objects.attribute_assignments(cls) == old.counts, cls.name.value
        on_self, opaque = set(), False
        for s in cls.body.body:
            if isinstance(s, cst.FunctionDef) and s.params.params:
                v = _AttributeTargets(s.params.params[0].name.value)
                s.body.visit(v)
                on_self |= v.on_self
                opaque = opaque or v.dynamic or s.name.value in ("__getattr__", "__getattribute__")
        assert objects._assigned_on_self(cls) == (on_self, opaque), cls.name.value
    counts = objects.attribute_assignments(classes[-1])
    assert counts == {"mesh": 1, "a": 1, "b": 1, "c": 1, "d": 1, "e": 2, "g": 1, "h": 1, "i": 1,
                      "": 4}
    assert objects._assigned_on_self(classes[-1]) == (
        {"mesh", "a", "c", "d", "e", "g", "i"}, True)
