"""Which statements of a file can matter to a finding: the pre-check's argument
(``precheck``), applied to the statements of a file that does use the sharding
vocabulary.

A large module often uses the vocabulary in a few functions only (a kernel library
with one ``shard_map``, a test file with one mesh). The rest can hold no finding, and
libcst's parse of it is most of a check's time. So ``check`` blanks it: the lines of
each statement that is neither *relevant* nor an import are left out (``kept``; a blank
line is no token, so the program is the one with those lines emptied, ``blanked``), and
libcst parses the rest. What is kept keeps its columns, and ``kept`` gives each line's
row in the file, so findings, fixes and suppression comments (read from the original
text) are placed where they were.

The statements judged are the module's, and a class's members (a method, a class
attribute) one by one. One is relevant when

- it reaches the sharding vocabulary: an attribute chain on an imported name spells it
  (``jax.sharding.NamedSharding``, ``nn.with_logical_constraint``: the pre-check's
  words at the start of a word of the identifier, so ``make_mesh`` counts and
  ``upcast`` or ``self.partitioned_dims`` do not), or a keyword or string annotation
  does (``out_sharding=``, ``"Sharded[...]"``), or it reads a name an import of the
  vocabulary bound (``PS`` of ``from jax.sharding import PartitionSpec as PS``), an
  import from a project module that reaches the vocabulary bound
  (``precheck.project_reaches``), or a logical-constraint wrapper the configuration
  declares; after a ``from <library> import *``, a plain name that spells it counts too;
- or it shares a module-level name with a relevant statement, either way round: it
  defines what a relevant one reads (the value) or reads what a relevant one defines
  (a caller, whose arguments the callee's analysis uses);
- or it shares an attribute name that some statement stores or a class defines
  (``self.mesh = ...`` elsewhere, a method called on an instance), so that the count
  of an attribute's assignments and a method's callers are what they were; a relevant
  ``getattr(x, name)`` with a computed name shares every such attribute;
- or it is a member of a relevant class that runs without being named (a special
  method, ``__init__``, ``setUp``, ``setup``); a class with a relevant member is relevant.

Imports are always kept (they are cheap, and bind what relevant code reads), and so is
a statement that sets attributes by name (``setattr``, ``x.__dict__[k] = v``): the
check's count of an attribute's assignments reads every statement (``interp/set_up.py``).
Nothing else can reach a relevant statement's values or be reached by them, so blanking
it changes no finding (``tests/test_relevance.py`` shows each channel above matters and
compares findings with and without blanking). What reads the whole text is given the
whole text (the device count a file sets, suppression comments). A file this cannot
judge (a ``from <project module> import *``, source the running Python cannot parse) is
parsed whole, as is one with little to blank (``WORTH``). Type parameter syntax newer
than the running Python (3.12's lists on 3.11, 3.13's defaults on 3.12) is read through
``pyast``'s stand-in; the names a list reads count as read by the statement it is in.
"""

from __future__ import annotations

import ast
import io
import re
from typing import TYPE_CHECKING, Dict, FrozenSet, Iterable, List, Optional, Set, Tuple

from . import pyast
from .interp.set_up import SET_UP_METHODS
from .jaxapi.literals import MUTATING_METHODS
from .precheck import TRIGGERS, project_reaches

if TYPE_CHECKING:
    from .project import Project

# Identifiers through which code sets attributes the source does not spell as such
# (``setattr``, ``x.__dict__[k] = v``): one makes the check's count of every attribute's
# assignments unknown (``interp/set_up.py``), so a statement spelling one is kept.
_SETS_BY_NAME = frozenset({"setattr", "__setattr__", "__dict__"})
_CONTEXTS = frozenset({ast.Load, ast.Store, ast.Del})
_SPECIAL = frozenset(getattr(ast, name) for name in (
    "FunctionDef", "AsyncFunctionDef", "ClassDef", "Lambda", "ListComp", "SetComp", "DictComp",
    "GeneratorExp", "Global", "Import", "ImportFrom", "NamedExpr", "ExceptHandler", "MatchAs",
    "MatchStar", "MatchMapping", "arg", "keyword", "AnnAssign") if hasattr(ast, name))
# the imported names whose fix (codemods.py) needs `jax` to name nothing else in the file
_MOVED = frozenset({"shard_map", "pjit"})
_SET_UP = frozenset(SET_UP_METHODS + ("setUpClass",))
_WORD = re.compile(r"[^\W\d]\w*")
# Blanking pays only when much is blanked: above this share of lines kept, parse whole.
WORTH = 0.8
ENABLED = True  # False: every file is parsed whole (the tests compare the two)


_SPELLS: Dict[str, bool] = {}
_TRIGGER = re.compile("|".join(re.escape(t) for t in TRIGGERS))


def spells(identifier: str) -> bool:
    """Whether one identifier spells the sharding vocabulary: a pre-check word at the
    start of one of its words (its start, after ``_`` or a digit, or a capital after a
    small letter: ``NamedSharding``, not ``UPCAST``), or ``P`` itself (``jax.P``)."""
    known = _SPELLS.get(identifier)
    if known is None:
        known = identifier == "P" or at_word_start(_TRIGGER, identifier)
        if len(_SPELLS) < 100_000:
            _SPELLS[identifier] = known
    return known


def at_word_start(words: "re.Pattern[str]", identifier: str) -> bool:
    """Whether ``words`` (lower case) matches ``identifier`` at the start of one of its
    words: its start, after ``_`` or a digit, or a capital after a small letter."""
    return any(
        i == 0 or m.group()[0] == "_" or identifier[i - 1] in "_0123456789"
        or (identifier[i].isupper() and identifier[i - 1].islower())
        for m in words.finditer(identifier.lower()) for i in (m.start(),))


class _Unit:
    """A statement (or several sharing a line) as the closure sees it."""

    __slots__ = ("start", "end", "names", "attrs", "roots", "spelled", "seed", "inert",
                 "imports", "parent", "members", "always", "any_attr", "bound", "changed",
                 "literals", "params")

    def __init__(self, start: int, end: int, parent: Optional[_Unit] = None) -> None:
        self.start, self.end = start, end  # 1-based lines, inclusive
        self.names: Set[str] = set()  # every plain name it reads or binds
        self.attrs: Set[str] = set()  # every attribute name it reads or stores
        self.roots: Set[str] = set()  # the base names of attribute chains that spell
        self.spelled: Set[str] = set()  # the plain names that spell
        self.seed = False  # relevant by itself
        self.inert = False  # sets attributes by name: kept, but links nothing
        self.imports = False  # holds an import run at module scope
        self.parent = parent  # the class a member belongs to
        self.members: List[_Unit] = []  # a class's members
        self.always = False  # a member that runs unnamed (special or set-up method)
        self.any_attr = False  # reads an attribute by a computed name (getattr(x, name))
        # for the check's literal containers (jaxapi/literals.py), which count a name's
        # bindings and in-place changes across every scope of the module:
        self.bound: Set[str] = set()  # names it binds, in any scope (parameters too)
        self.changed: Set[str] = set()  # names it changes in place (x[k] = v, x.append)
        self.literals: Set[str] = set()  # names it binds to a tuple, list, dict or name
        self.params: Set[str] = set()  # its functions' parameters (but self and cls)


class _Scan:
    """Reads each unit: its names and attributes, and what the module binds."""

    def __init__(self, project: Optional[Project], module_name: str, is_package: bool) -> None:
        self.project, self.module_name, self.is_package = project, module_name, is_package
        self.module_binds: Set[str] = set()  # names bound at module scope, not by imports
        self.attr_binds: Set[str] = set()  # attribute names stored or defined in a class
        self.vocabulary: Set[str] = set()  # names imports of the vocabulary bind
        self.imported: Dict[str, List[str]] = {}  # name -> dotted names an import read
        self.moved = False  # imports an API whose SC401 fix moves it under `jax.`
        self.stars = False  # a `from <library> import *`: plain names may be its
        self.project_stars = False

    def unit(self, unit: _Unit, nodes: Iterable[ast.AST], scope: str) -> None:
        for node in nodes:
            self._walk(unit, node, scope)

    def _walk(self, unit: _Unit, node: ast.AST, scope: str) -> None:
        """Every node under ``node``; ``scope``: what a plain name binds in ("module",
        "class" or "function"). A hand-written walk: ``ast.walk`` took twice as long."""
        stack: List[Tuple[ast.AST, str]] = [(node, scope)]
        pop, push = stack.pop, stack.append
        while stack:
            n, sc = pop()
            t = type(n)
            if t is ast.Name:
                unit.names.add(n.id)  # type: ignore[attr-defined]  # an ast.Name
                if spells(n.id):  # type: ignore[attr-defined]
                    unit.spelled.add(n.id)  # type: ignore[attr-defined]
                if type(n.ctx) is not ast.Load:  # type: ignore[attr-defined]
                    self._bind(n.id, sc)  # type: ignore[attr-defined]
                    unit.bound.add(n.id)  # type: ignore[attr-defined]
                    if sc == "class":  # a class attribute: `Axes.MODEL` reads it
                        unit.attrs.add(n.id)  # type: ignore[attr-defined]
                continue
            if t is ast.Attribute:
                self._attribute(unit, n)  # type: ignore[arg-type]  # an ast.Attribute
                push((n.value, sc))  # type: ignore[attr-defined]
                continue
            if t is ast.Constant:
                continue
            if t is ast.Call:
                self._call(unit, n)  # type: ignore[arg-type]  # an ast.Call
            elif t is ast.Assign or t is ast.AugAssign or t is ast.Subscript or t is ast.Delete:
                self._changes(unit, n)
            elif t in _SPECIAL:
                sc = self._special(unit, n, sc, push)
                if not sc:
                    continue
            for field in t._fields:
                v = getattr(n, field)
                if type(v) is list:
                    for c in v:
                        if isinstance(c, ast.AST) and type(c) not in _CONTEXTS:
                            push((c, sc))
                elif isinstance(v, ast.AST) and type(v) not in _CONTEXTS:
                    push((v, sc))

    def _special(self, unit: _Unit, n: ast.AST, sc: str, push) -> str:
        """What one node of the rarer kinds (``_SPECIAL``) binds or spells; the scope its
        children are in, or "" when they are pushed here or need no walk."""
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            unit.names.add(n.name)
            unit.bound.add(n.name)
            self._bind(n.name, sc)
            if sc == "class":  # a method (or nested class): `obj.name` reads it
                unit.attrs.add(n.name)
            inner = "class" if isinstance(n, ast.ClassDef) else "function"
            body = {id(s) for s in n.body}
            for child in ast.iter_child_nodes(n):
                # decorators, bases, defaults and annotations run in the outer scope
                push((child, inner if id(child) in body else sc))
            if not isinstance(n, ast.ClassDef):
                self._annotation(unit, n.returns)
            return ""
        if isinstance(n, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
                          ast.GeneratorExp)):
            return "function"
        if isinstance(n, (ast.Global, ast.Nonlocal)):
            unit.names.update(n.names)
            unit.bound.update(n.names)
            if isinstance(n, ast.Global):
                self.module_binds.update(n.names)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            self._import(unit, n, sc)
            return ""
        elif isinstance(n, ast.NamedExpr) and isinstance(n.target, ast.Name):
            self.module_binds.add(n.target.id)  # binds outside a comprehension, too
        elif isinstance(n, ast.ExceptHandler) and n.name:
            unit.names.add(n.name)
            unit.bound.add(n.name)
            self._bind(n.name, sc)
        elif type(n).__name__ in ("MatchAs", "MatchStar", "MatchMapping"):
            bound = getattr(n, "rest" if type(n).__name__ == "MatchMapping" else "name")
            if bound:
                unit.names.add(bound)
                self._bind(bound, sc)
        elif isinstance(n, ast.arg):
            unit.names.add(n.arg)
            unit.bound.add(n.arg)
            if n.arg not in ("self", "cls"):
                unit.params.add(n.arg)
            self._annotation(unit, n.annotation)
        elif isinstance(n, ast.keyword):
            if n.arg and spells(n.arg):
                unit.seed = True  # out_sharding=, in_shardings=, nnx's sharding=
        elif isinstance(n, ast.AnnAssign):
            self._annotation(unit, n.annotation)
            if isinstance(n.target, ast.Name) and isinstance(
                    n.value, (ast.Tuple, ast.List, ast.Dict, ast.Name)):
                unit.literals.add(n.target.id)
        return sc

    def _changes(self, unit: _Unit, n: ast.AST) -> None:
        """What an assignment or subscript changes or binds, as the literal containers'
        collector counts it."""
        if isinstance(n, ast.Assign):
            if isinstance(n.value, ast.Name):  # b = a: a change of b changes a
                unit.changed.add(n.value.id)
            if isinstance(n.value, (ast.Tuple, ast.List, ast.Dict, ast.Name)):
                unit.literals.update(t.id for t in n.targets if isinstance(t, ast.Name))
        elif isinstance(n, ast.AugAssign):
            base = _base(n.target)
            if base is not None:
                unit.changed.add(base)
        elif isinstance(n, ast.Delete):  # `del a, b` is one tuple there: no base
            base = _base(n.targets[0]) if len(n.targets) == 1 else None
            if base is not None:
                unit.changed.add(base)
        elif isinstance(n, ast.Subscript) and type(n.ctx) is ast.Store:
            base = _base(n)
            if base is not None:
                unit.changed.add(base)

    def _attribute(self, unit: _Unit, n: ast.Attribute) -> None:
        unit.attrs.add(n.attr)
        if not isinstance(n.ctx, ast.Load):
            self.attr_binds.add(n.attr)
        if isinstance(n.ctx, ast.Store):
            changed = _base(n)
            if changed is not None:
                unit.changed.add(changed)
        if n.attr in _SETS_BY_NAME:
            unit.inert = True
        if spells(n.attr):
            base: ast.AST = n.value
            while True:  # the chain's base: jax of jax.sharding.NamedSharding
                if isinstance(base, ast.Attribute):
                    base = base.value
                elif isinstance(base, ast.Call):
                    base = base.func
                elif isinstance(base, ast.Subscript):
                    base = base.value
                else:
                    break
            if isinstance(base, ast.Name):
                unit.roots.add(base.id)

    def _call(self, unit: _Unit, n: ast.Call) -> None:
        if isinstance(n.func, ast.Attribute) and n.func.attr in MUTATING_METHODS:
            base = _base(n.func.value)
            if base is not None:
                unit.changed.add(base)
        if not isinstance(n.func, ast.Name):
            return
        if n.func.id == "setattr":
            unit.inert = True
        elif n.func.id == "getattr" and len(n.args) >= 2:
            key = n.args[1]  # getattr(x, "name"): x.name; getattr(x, name): any
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                unit.attrs.add(key.value)
            else:
                unit.any_attr = True
        elif n.func.id in ("__import__", "import_module"):
            unit.seed = True

    def _bind(self, name: str, scope: str) -> None:
        if scope == "module":
            self.module_binds.add(name)
        elif scope == "class":
            self.attr_binds.add(name)

    def _annotation(self, unit: _Unit, a: Optional[ast.AST]) -> None:
        """A string annotation's words count as names it reads (``"Sharded[...]"``)."""
        if a is None:
            return
        for c in ast.walk(a):
            if isinstance(c, ast.Constant) and isinstance(c.value, str):
                words = _WORD.findall(c.value)
                unit.names.update(words)
                if any(spells(w) for w in words):
                    unit.seed = True

    def _import(self, unit: _Unit, n: ast.AST, scope: str) -> None:
        from .project import relative_base
        if scope == "module":
            unit.imports = True
        base = ""
        if isinstance(n, ast.ImportFrom):
            base = n.module or ""
            if n.level:
                base = relative_base(self.module_name, n.level, base, self.is_package)
        for alias in n.names:  # type: ignore[attr-defined]  # Import and ImportFrom
            if alias.name == "*":
                if self.project is not None and base and self.project.has_module(base):
                    self.project_stars = True
                self.stars = True
                continue
            if isinstance(n, ast.Import):
                bound = alias.asname or alias.name.split(".")[0]
                dotted = [alias.name]
            else:
                bound = alias.asname or alias.name
                dotted = [base, f"{base}.{alias.name}"] if base else [alias.name]
            unit.names.add(bound)
            unit.bound.add(bound)
            if alias.name in _MOVED:
                self.moved = True
            if any(spells(w) for d in dotted for w in d.split(".")):
                self.vocabulary.add(bound)
            self.imported.setdefault(bound, []).extend(dotted)

    def _reaches(self, dotted: List[str], attributes: FrozenSet[str]) -> bool:
        if self.project is None:
            return False
        names = {".".join(d.split(".")[:i]) for d in dotted if d
                 for i in range(1, d.count(".") + 2)}
        return project_reaches(self.project, names, attributes)


def blanked(text: str, project: Optional[Project] = None, module_name: str = "",
            is_package: bool = False, wrappers: Iterable[str] = ()) -> Optional[str]:
    """``text`` with every statement that cannot matter to a finding blanked (see the
    module's docs), or None when it is to be parsed whole: little to blank, or a file
    this cannot judge. ``wrappers``: the last names of the declared logical-constraint
    wrappers."""
    judged = _judged(text, project, module_name, is_package, wrappers)
    if judged is None:
        return None
    lines, blank = judged
    return "".join(line[len(line.rstrip("\r\n")):] if blank[i] else line
                   for i, line in enumerate(lines, 1))


def kept(text: str, project: Optional[Project] = None, module_name: str = "",
         is_package: bool = False, wrappers: Iterable[str] = ()) -> Optional[Tuple[str, List[int]]]:
    """``blanked``'s text with the blanked lines left out, and the row in ``text`` of
    each of its lines (``rows[i]`` is line ``i + 1``'s); None as for ``blanked``.
    Leaving them out is the same program as blanking them (a blank line is no token,
    and a line ending in ``\\`` is never followed by a blanked one in a file that
    parses), but libcst need not build an empty line for each: on a 5,400-line file
    with 196 lines kept, the parse took a sixth of the time."""
    judged = _judged(text, project, module_name, is_package, wrappers)
    if judged is None:
        return None
    lines, blank = judged
    rows = [i for i in range(1, len(lines) + 1) if not blank[i]]
    return "".join(lines[i - 1] for i in rows), rows


def _judged(text: str, project: Optional[Project], module_name: str, is_package: bool,
            wrappers: Iterable[str]) -> Optional[Tuple[List[str], List[bool]]]:
    """(``text``'s lines, whether each row is blanked: ``blank[row]``), or None to parse
    it whole."""
    parsed = pyast.parse(text)
    if parsed is None:
        return None
    lines = io.StringIO(text, newline="").readlines()  # rows as ast counts them
    scan = _Scan(project, module_name, is_package)
    units = _units(parsed.tree, scan.module_binds)
    try:
        for unit, nodes, scope in units:
            scan.unit(unit, nodes, scope)
    except RecursionError:
        return None
    _erased(units, parsed.erased)
    if scan.project_stars:
        return None
    attributes = frozenset(a for u, _, _ in units for a in u.attrs)
    # imported (at any depth: a function's own import too) from what may carry a sharding
    carrying = {name for name, dotted in scan.imported.items()
                if scan._reaches(dotted, attributes)}
    named = scan.vocabulary | carrying
    wrapped = set(wrappers)
    imported = set(scan.imported)
    for u, _, _ in units:
        u.seed = u.seed or bool(u.names & named) or bool((u.names | u.attrs) & wrapped) \
            or bool(u.roots & imported) or (scan.stars and bool(u.spelled))
    kept = _closure([u for u, _, _ in units], scan.module_binds, scan.attr_binds, scan.moved)
    blank = [False] * (len(lines) + 2)
    count = 0
    for u, _, _ in units:
        if u not in kept:
            count += u.end - u.start + 1
            for i in range(u.start, u.end + 1):
                blank[i] = True
    if not lines or len(lines) - count > WORTH * len(lines):
        return None
    return lines, blank


def _erased(units: List[Tuple[_Unit, List[ast.AST], str]], erased: Dict[int, Set[str]]) -> None:
    """The units holding the type parameter lists ``pyast``'s stand-in erased (syntax
    newer than the running Python) read what the lists read, and one spelling the
    vocabulary (a bound ``T: Mesh``) makes its unit relevant. Each such unit is kept
    (linking nothing, unless relevant): CPython rejects the file on the older Python,
    and ``sources.parse_source`` accepts it only when the kept statements hold syntax
    newer than the running Python, as the whole file's do; a malformed list then fails
    libcst's parse of the kept statements, and the whole file is read as before."""
    for row, names in erased.items():
        for unit, _, _ in units:
            if unit.start <= row <= unit.end:
                unit.names |= names
                unit.seed = unit.seed or any(spells(n) for n in names)
                unit.inert = True
                break


def _base(e: ast.AST) -> Optional[str]:
    """The name under ``x[k].attr``: what an in-place change changes."""
    while isinstance(e, (ast.Subscript, ast.Attribute)):
        e = e.value
    return e.id if isinstance(e, ast.Name) else None


def _units(tree: ast.Module, binds: Set[str]) -> List[Tuple[_Unit, List[ast.AST], str]]:
    """The module's statements, and each class's members apart from its header (whose
    name is added to ``binds``)."""
    out: List[Tuple[_Unit, List[ast.AST], str]] = []
    for unit, stmts in _grouped(tree.body, None):
        cls = stmts[0] if len(stmts) == 1 and isinstance(stmts[0], ast.ClassDef) else None
        if cls is None or not cls.body or cls.body[0].lineno <= cls.lineno:
            out.append((unit, list(stmts), "module"))
            continue
        # the header: decorators, name, bases and keywords
        header: List[ast.AST] = [*cls.decorator_list, *cls.bases, *cls.keywords]
        unit.names.add(cls.name)
        binds.add(cls.name)
        out.append((unit, header, "module"))
        members = _grouped(cls.body, unit)
        unit.end = members[0][0].start - 1  # to the line before the first member
        for member, mstmts in members:
            unit.members.append(member)
            member.always = any(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
                s.name in _SET_UP or (s.name.startswith("__") and s.name.endswith("__")))
                for s in mstmts)
            out.append((member, list(mstmts), "class"))
    return out


def _grouped(body: List[ast.stmt], parent: Optional[_Unit]):
    """Statements as units: those sharing a line (``a = 1; b = 2``) are one."""
    out: List[Tuple[_Unit, List[ast.stmt]]] = []
    for stmt in body:
        start = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", ())])
        end = stmt.end_lineno or stmt.lineno
        if out and start <= out[-1][0].end:
            out[-1][0].end = max(end, out[-1][0].end)
            out[-1][1].append(stmt)
        else:
            out.append((_Unit(start, end, parent), [stmt]))
    return out


def _closure(units: List[_Unit], names: Set[str], attrs: Set[str], moved: bool) -> Set[_Unit]:
    """The kept units: the relevant ones (seeds, then every unit sharing a module-level
    name or a bound attribute name with one, transitively, with each relevant member's
    class and each relevant class's unnamed members), the inert ones (with their class)
    and the imports."""
    by_key: Dict[str, List[_Unit]] = {}
    keys: Dict[_Unit, List[str]] = {}
    todo: List[_Unit] = []
    for u in units:
        if u.seed:
            todo.append(u)
        ks = [n for n in u.names & names] + \
            ["." + a for a in u.attrs & attrs if not (a.startswith("__") and a.endswith("__"))]
        keys[u] = ks
        for k in ks:
            by_key.setdefault(k, []).append(u)
    relevant: Set[_Unit] = set()
    done: Set[str] = set()
    while todo:
        u = todo.pop()
        if u in relevant:
            continue
        relevant.add(u)
        if u.parent is not None:
            todo.append(u.parent)
        todo.extend(m for m in u.members if m.always)
        if u.members and not any(m in relevant or m.always for m in u.members):
            todo.append(u.members[0])  # a class body holds a statement
        for key in (list(by_key) if u.any_attr else keys[u]):
            if key not in done and (key in keys[u] or key.startswith(".")):
                done.add(key)
                todo.extend(by_key[key])
    kept = set(relevant)
    kept.update(u for u in units if u.imports)
    for u in _counted(units, relevant) | {u for u in units if u.inert or (moved and "jax" in u.names)}:
        if u not in relevant:  # kept, linking nothing (with its class: a body is never empty)
            kept.add(u)
            if u.parent is not None:
                kept.add(u.parent)
    return kept


def _counted(units: List[_Unit], relevant: Set[_Unit]) -> Set[_Unit]:
    """The units the check's literal containers count (``jaxapi/literals.py``). It
    trusts none when some function changes a name of a parameter in place: then one
    such parameter and one such change are kept (the smallest units that hold them). Else
    it trusts a name bound once, to a tuple, list or dict (or a name of one), and never
    changed in place, counting across every scope: so every binding and change of a
    name a relevant unit binds so (or reads, bound so anywhere) is kept, through chains."""
    params: Dict[str, List[_Unit]] = {}
    changes: Dict[str, List[_Unit]] = {}
    for u in units:
        for n in u.params:
            params.setdefault(n, []).append(u)
        for n in u.changed:
            changes.setdefault(n, []).append(u)
    if params.keys() & changes.keys():
        def size(u: _Unit) -> int:
            return u.end - u.start
        pair = min(((min(params[n], key=size), min(changes[n], key=size))
                    for n in params.keys() & changes.keys()),
                   key=lambda p: size(p[0]) + size(p[1]))
        return set(pair)
    literal = set().union(*(u.literals for u in units))
    names = set().union(*(u.literals | (u.names & literal) for u in relevant))
    out: Set[_Unit] = set()
    while True:
        found = {u for u in units if (u.bound | u.changed | u.literals) & names} - out
        if not found:
            return out
        out |= found
        names |= set().union(*(u.names & literal for u in found))
