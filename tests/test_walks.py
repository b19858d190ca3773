"""The hand-written walks that replace libcst visitors where those cost most
(``syntax.visit_all``, ``sites._small_statements``) see what the visitors saw, on every
example program of the project; and ``check``'s analysis, which skips the reasons a
sharding site is unknown, finds the same sites as the map's."""

from __future__ import annotations

import libcst as cst

from shardcheck.analyzer.config import Config
from shardcheck.analyzer.engine import analyze
from shardcheck.analyzer.jaxapi import literals, sites
from shardcheck.analyzer.syntax import subtree, visit_all
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
            ours = [s for s in sites._small_statements(body)
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
    values = [s.value.value for s in sites._small_statements(fn)
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
