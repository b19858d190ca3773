"""The layout shows the design (issue 37): the analysis (``shardcheck.analyzer``) imports
nothing of the application, and no module imports another that imports it back, except
in the one circle the interpreter's narrow interface is to close (issue 38), which may
not grow.

The graph is read from the source (every ``import``, at the top or inside a function;
not those under ``if TYPE_CHECKING:``, which never run)."""

from __future__ import annotations

import ast
import os
import pathlib
import subprocess
import sys
from typing import Dict, List, Set

ROOT = pathlib.Path(__file__).resolve().parent.parent
# installed package -> its directory in the repository
PACKAGES = {"shardcheck": "shardcheck", "shardcheck.analyzer": "analyzer",
            "shardcheck.plugin": "plugin", "sharding_types": "sharding_types"}
APPLICATION = ("shardcheck.check", "shardcheck.output", "shardcheck.confirm",
               "shardcheck.integrations", "shardcheck.cli", "shardcheck.installed_code")
# the circle through the engine, the project and the interpreter (jaxapi's handlers reach
# back into the interpreter through it): issue 38's ApiContext closes it
ALLOWED_CIRCLE = {
    "shardcheck.analyzer.engine", "shardcheck.analyzer.precheck",
    "shardcheck.analyzer.project", "shardcheck.analyzer.relevance",
    "shardcheck.analyzer.interp.model", "shardcheck.analyzer.interp.statements",
    # objects and set_up import each other (a class's set-up reads its lineage)
    "shardcheck.analyzer.interp.objects", "shardcheck.analyzer.interp.set_up",
}


def _modules() -> Dict[str, pathlib.Path]:
    out = {}
    for package, folder in PACKAGES.items():
        base = ROOT / folder
        for path in base.rglob("*.py"):
            rel = path.relative_to(base).with_suffix("").parts
            if folder == "shardcheck" and rel[0] in ("analyzer", "plugin"):
                continue  # an editable install's links, where present
            parts = rel[:-1] if rel[-1] == "__init__" else rel
            out[".".join((package,) + parts)] = path
    return out


def _type_checking_only(tree: ast.AST) -> Set[int]:
    skipped: Set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(n) for n in ast.walk(node))
    return skipped


def _nearest(name: str, modules: Dict[str, pathlib.Path]) -> str:
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name


def import_graph() -> Dict[str, Set[str]]:
    modules = _modules()
    graph: Dict[str, Set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text())
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        skipped = _type_checking_only(tree)
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            targets: List[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                source = node.module or ""
                if node.level:
                    base = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                    source = ".".join(base + ([node.module] if node.module else []))
                targets = [f"{source}.{a.name}" if f"{source}.{a.name}" in modules else source
                           for a in node.names]
            for t in targets:
                found = _nearest(t, modules)
                if found and found != name:
                    graph[name].add(found)
    return graph


def circles(graph: Dict[str, Set[str]]) -> List[Set[str]]:
    """The strongly connected components of more than one module (Tarjan's, iterative)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    found: List[Set[str]] = []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    component = set()
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        component.add(w)
                        if w == v:
                            break
                    if len(component) > 1:
                        found.append(component)
    return found


def test_no_import_circle_but_the_interpreters_which_does_not_grow():
    found = circles(import_graph())
    others = [sorted(c) for c in found if not c <= ALLOWED_CIRCLE]
    assert others == [], others


def test_the_circle_finder_finds_a_circle():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]


def test_the_analysis_imports_nothing_of_the_application():
    graph = import_graph()
    crossing = sorted((m, t) for m, ts in graph.items() if m.startswith("shardcheck.analyzer")
                      for t in ts if t.startswith(APPLICATION) or t == "shardcheck._version")
    assert crossing == []


def test_importing_the_analyzer_loads_no_application_module():
    probe = ("import sys, shardcheck.analyzer, shardcheck.analyzer.engine\n"
             "print(sorted(m for m in sys.modules if m.startswith('shardcheck')\n"
             "             and not m.startswith('shardcheck.analyzer')))\n")
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                       cwd=os.path.dirname(ROOT), check=True)
    assert r.stdout.strip() == "['shardcheck', 'shardcheck._version']"
