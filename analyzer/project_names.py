"""Reading a project's Python for the names its meshes get (``project_axes``), with
Python's ``ast`` and never JAX: each module's import aliases and the values its names are
bound to (``_Module``), and, across the project (``Resolver``), a parameter's values at
the calls of its function and a config field's values wherever the project writes one.
"""

from __future__ import annotations

import ast
import os
import re
from typing import Dict, Iterator, List, Mapping, Optional, Sequence, Set, Tuple

from .ftypes import Related
from .pyast import parse
from .sources import Unreadable, decode_source, read_source

_JAX_SHARDING = ("Mesh", "AbstractMesh", "NamedSharding", "PartitionSpec", "P", "reshard",
                 "get_abstract_mesh", "set_mesh", "use_mesh")
_SPEC_SUFFIXES = (".PartitionSpec", ".P")
MAX_DEPTH = 4  # names followed to the literal they are bound to
_DEFINITION = re.compile(r"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+(\w+)", re.M)
# each top-level key of the project's YAML/JSON configs that holds a list of strings, with
# each config file's value for it (its own, or its bases'): (the file, the strings)
ConfigValues = Dict[str, List[Tuple[str, List[str]]]]


def read_text(path: str, overlay: Optional[Mapping[str, bytes]]) -> Optional[str]:
    try:
        data = buffer_of(path, overlay)
        if data is None:
            data = read_source(path)
        return decode_source(data)
    except (Unreadable, UnicodeDecodeError, LookupError, SyntaxError, ValueError):
        return None
    except Exception:  # an undecodable file is reported by the per-file check
        return None


def buffer_of(path: str, overlay: Optional[Mapping[str, bytes]]) -> Optional[bytes]:
    """The unsaved content of ``path`` in ``overlay`` (keyed by the path as given, or
    absolute), if any."""
    if not overlay:
        return None
    got = overlay.get(path)
    return got if got is not None else overlay.get(os.path.abspath(path))


class Module:
    """One module's ``ast`` with its import aliases and the assignments of its names."""

    def __init__(self, path: str, text: str, tree: ast.Module, project_tops: Set[str]):
        self.path, self.text, self.tree = path, text, tree
        self.project_tops = project_tops
        self.aliases: Dict[str, str] = {}
        self._parents: Optional[Dict[int, ast.AST]] = None
        self.calls: List[ast.Call] = []
        self.imported_tops: Set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                self.calls.append(node)
            elif isinstance(node, ast.Import):
                for a in node.names:
                    self.imported_tops.add(a.name.split(".")[0])
                    if a.asname:
                        self.aliases[a.asname] = a.name
                    else:
                        top = a.name.split(".")[0]
                        self.aliases[top] = top
            elif isinstance(node, ast.ImportFrom):
                if node.module and not node.level:
                    self.imported_tops.add(node.module.split(".")[0])
                if node.level:  # the project's own module
                    for a in node.names:
                        self.aliases[a.asname or a.name] = f".{a.name}"
                    continue
                for a in node.names:
                    if a.name == "*":
                        if node.module in ("jax.sharding", "jax"):
                            for n in _JAX_SHARDING:
                                self.aliases.setdefault(n, f"{node.module}.{n}")
                        continue
                    self.aliases[a.asname or a.name] = f"{node.module}.{a.name}"
        for node in tree.body:  # P = jax.sharding.PartitionSpec
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                    isinstance(node.targets[0], ast.Name):
                q = self.qual(node.value)
                if q is not None and q.split(".")[0] == "jax":
                    self.aliases[node.targets[0].id] = q

    @property
    def parents(self) -> Dict[int, ast.AST]:
        """Each node's parent, by the node's id (built on first use)."""
        if self._parents is None:
            self._parents = {}
            for node in ast.walk(self.tree):
                for child in ast.iter_child_nodes(node):
                    self._parents[id(child)] = node
        return self._parents

    def qual(self, expr: ast.AST) -> Optional[str]:
        if isinstance(expr, ast.Name):
            return self.aliases.get(expr.id)
        if isinstance(expr, ast.Attribute):
            base = self.qual(expr.value)
            return f"{base}.{expr.attr}" if base is not None else None
        return None

    def is_jax(self, q: Optional[str]) -> bool:
        return q is not None and q.split(".")[0] == "jax"

    def is_spec(self, call: ast.AST) -> bool:
        if not isinstance(call, ast.Call):
            return False
        q = self.qual(call.func)
        return self.is_jax(q) and q is not None and q.endswith(_SPEC_SUFFIXES)

    def scope_of(self, node: ast.AST) -> List[ast.AST]:
        """The functions enclosing ``node``, innermost first, then the module."""
        out: List[ast.AST] = []
        p = self.parents.get(id(node))
        while p is not None:
            if isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                out.append(p)
            p = self.parents.get(id(p))
        out.append(self.tree)
        return out

    def bound_values(self, name: ast.Name) -> Optional[List[ast.AST]]:
        """What ``name`` is assigned in its innermost scope that assigns it (nested
        functions' bodies aside); None when it is a parameter there, bound otherwise
        (a loop, a ``with``, an augmented assignment, an import), or never assigned."""
        for scope in self.scope_of(name):
            values: List[ast.AST] = []
            other = False
            if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                a = scope.args
                params = a.posonlyargs + a.args + a.kwonlyargs + \
                    [x for x in (a.vararg, a.kwarg) if x is not None]
                if any(p.arg == name.id for p in params):
                    return None
            for node in _own_nodes(scope):
                if isinstance(node, ast.Assign):
                    for t in node.targets:
                        if isinstance(t, ast.Name) and t.id == name.id:
                            values.append(node.value)
                        elif any(isinstance(n, ast.Name) and n.id == name.id and
                                 isinstance(n.ctx, ast.Store) for n in ast.walk(t)):
                            other = True
                elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) \
                        and node.target.id == name.id and node.value is not None:
                    values.append(node.value)
                elif isinstance(node, ast.Name) and node.id == name.id and \
                        isinstance(node.ctx, ast.Store) and \
                        not isinstance(self.parents.get(id(node)), (ast.Assign, ast.AnnAssign)):
                    other = True
                elif isinstance(node, (ast.Import, ast.ImportFrom)) and any(
                        (a.asname or a.name).split(".")[0] == name.id for a in node.names):
                    other = True
                elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                        and node.name == name.id:
                    other = True
            if other:
                return None
            if values:
                return values
        return None


def _own_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of ``scope``'s body, not those of the functions and classes it defines
    (their names are)."""
    stack = list(ast.iter_child_nodes(scope)) if not isinstance(scope, ast.Lambda) else []
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(ast.iter_child_nodes(node))


class Resolver:
    """The axis names an expression gives a mesh, followed across the project: a name to
    the literals it is bound to, a parameter to the arguments of its function's calls,
    a config attribute (``config.mesh_axes``) to every value the project writes for that
    field (class defaults, attribute assignments, keyword arguments, YAML keys)."""

    def __init__(self, texts: Dict[str, str], tops: Set[str],
                 config_values: Optional[ConfigValues] = None):
        self.texts = texts  # every project file's text, by path
        self.tops = tops
        self.config_values = config_values or {}
        self._calls: Optional[Dict[str, List[Tuple[Module, ast.Call]]]] = None
        self._fields: Dict[str, Optional[List[str]]] = {}
        # each value of a config field written: (where, its strings), by field
        self.field_values: Dict[str, List[Tuple[str, List[str]]]] = {}
        self.fields_read: List[str] = []  # by the resolutions since the caller cleared it
        self._parsed: Dict[str, Optional[Module]] = {}
        self._defined: Optional[Set[str]] = None
        self._looked_for: Dict[str, bool] = {}  # defined_in_project, name by name

    def strings(self, m: Module, expr: ast.AST, depth: int = 0) -> Optional[List[str]]:
        """The axis names ``expr`` gives a mesh, if they are known here."""
        if depth > MAX_DEPTH:
            return None
        if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
            return [expr.value]
        if isinstance(expr, (ast.Tuple, ast.List)):
            return self._all(m, expr.elts, depth)
        if isinstance(expr, ast.Name):
            values = m.bound_values(expr)
            if values:
                return self._all(m, values, depth)
            return self._parameter(m, expr, depth)
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and \
                expr.func.id in ("tuple", "list") and len(expr.args) == 1 and not expr.keywords:
            return self.strings(m, expr.args[0], depth + 1)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
            left = self.strings(m, expr.left, depth + 1)
            right = self.strings(m, expr.right, depth + 1)
            return None if left is None or right is None else left + right
        if isinstance(expr, ast.Attribute) and not isinstance(expr.value, ast.Call):
            return self.field(expr.attr, depth)
        return None

    def _all(self, m: Module, exprs: Sequence[ast.AST], depth: int) -> Optional[List[str]]:
        out: List[str] = []
        for e in exprs:
            got = self.strings(m, e, depth + 1)
            if got is None:
                return None
            out += [g for g in got if g not in out]
        return out

    def _parameter(self, m: Module, name: ast.Name, depth: int) -> Optional[List[str]]:
        """A parameter's names: the arguments every call of its function in the project
        passes (or its default where a call passes none); None without a call."""
        scopes = m.scope_of(name)
        fn = scopes[0]
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        params = fn.args.posonlyargs + fn.args.args
        index = next((i for i, p in enumerate(params) if p.arg == name.id), None)
        kwonly = next((i for i, p in enumerate(fn.args.kwonlyargs) if p.arg == name.id), None)
        if index is None and kwonly is None:
            return None
        default: Optional[ast.AST] = None
        if index is not None:
            first_default = len(params) - len(fn.args.defaults)
            if index >= first_default:
                default = fn.args.defaults[index - first_default]
        elif kwonly is not None:
            default = fn.args.kw_defaults[kwonly]
        method = isinstance(m.parents.get(id(fn)), ast.ClassDef) and bool(params) and \
            params[0].arg in ("self", "cls")
        calls = self.calls_of(fn.name)
        if not calls:
            return None
        out: List[str] = []
        for caller, call in calls:
            arg: Optional[ast.AST] = None
            kw = next((k for k in call.keywords if k.arg == name.id), None)
            if any(k.arg is None for k in call.keywords) or \
                    any(isinstance(a, ast.Starred) for a in call.args):
                return None
            if kw is not None:
                arg = kw.value
            elif index is not None:
                at = index - (1 if method and isinstance(call.func, ast.Attribute) else 0)
                if 0 <= at < len(call.args):
                    arg = call.args[at]
            if arg is None:
                arg, caller = default, m
            if arg is None:
                return None
            got = self.strings(caller, arg, depth + 1)
            if got is None:
                return None
            out += [g for g in got if g not in out]
        return out

    def defined_in_project(self, function: str) -> bool:
        """Whether a function or class named ``function`` is defined in the project."""
        if self._defined is None:
            # the first few names are looked for one by one (a substring search skips
            # most files), past that every definition is read once
            if len(self._looked_for) < 8:
                if function not in self._looked_for:
                    one = re.compile(rf"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+"
                                     rf"{re.escape(function)}\b", re.M)
                    self._looked_for[function] = any(
                        function in text and one.search(text) is not None
                        for text in self.texts.values())
                return self._looked_for[function]
            self._defined = set()
            for text in self.texts.values():
                self._defined.update(_DEFINITION.findall(text))
        return function in self._defined

    def calls_of(self, function: str) -> List[Tuple[Module, ast.Call]]:
        """The calls in the project of a callable named ``function`` (``f(...)``,
        ``x.f(...)``), and, as a call with no arguments, any other mention of it (passed
        on, stored): then the parameter is not known."""
        if self._calls is None:
            self._calls = {}
        if function not in self._calls:
            found: List[Tuple[Module, ast.Call]] = []
            word = re.compile(rf"\b{re.escape(function)}\b")
            for path, text in self.texts.items():
                if not word.search(text):
                    continue
                m = self.module(path)
                if m is None:
                    continue
                callees = set()
                for call in m.calls:
                    f = call.func
                    if (isinstance(f, ast.Name) and f.id == function) or \
                            (isinstance(f, ast.Attribute) and f.attr == function):
                        found.append((m, call))
                        callees.add(id(f))
                for node in ast.walk(m.tree):  # mentioned, not called: not known
                    if isinstance(node, (ast.Name, ast.Attribute)) and id(node) not in callees \
                            and (node.id if isinstance(node, ast.Name) else node.attr) == function \
                            and isinstance(node.ctx, ast.Load):
                        found.append((m, ast.Call(func=node, args=[ast.Starred(
                            value=ast.Name(id="_", ctx=ast.Load()), ctx=ast.Load())], keywords=[])))
            self._calls[function] = found
        return self._calls[function]

    def module(self, path: str) -> Optional[Module]:
        if path not in self._parsed:
            parsed = parse(self.texts[path])
            self._parsed[path] = None if parsed is None else Module(
                path, self.texts[path], parsed.tree, self.tops)
        return self._parsed[path]

    def field(self, attr: str, depth: int = 0) -> Optional[List[str]]:
        """Every value the project writes for a config field ``attr``: YAML keys, class
        defaults, attribute assignments, keyword arguments; None when one is not known
        or none is written."""
        self.fields_read.append(attr)
        if attr in self._fields:
            return self._fields[attr]
        self._fields[attr] = None  # while it is computed: a cycle is not known
        out: List[str] = []
        values = 0
        written_values = self.field_values.setdefault(attr, [])
        for where, names in self.config_values.get(attr, []):
            values += 1
            written_values.append((where, list(names)))
            out += [n for n in names if n not in out]
        word = re.compile(rf"\b{re.escape(attr)}\b")
        for path, text in self.texts.items():
            if not word.search(text):
                continue
            m = self.module(path)
            if m is None:
                return None
            for node in ast.walk(m.tree):
                written: Optional[ast.AST] = None
                if isinstance(node, ast.Attribute) and node.attr == attr and \
                        not isinstance(node.ctx, ast.Load):
                    parent = m.parents.get(id(node))
                    if not isinstance(parent, (ast.Assign, ast.AnnAssign)) or parent.value is None:
                        return None
                    written = parent.value
                elif isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(
                        m.parents.get(id(node)), ast.ClassDef):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    if not any(isinstance(t, ast.Name) and t.id == attr for t in targets):
                        continue
                    if node.value is None:
                        continue  # a field with no default: its value comes as a keyword
                    written = node.value
                elif isinstance(node, ast.keyword) and node.arg == attr:
                    written = node.value
                elif isinstance(node, ast.Constant) and node.value == attr:
                    parent = m.parents.get(id(node))
                    if not (isinstance(parent, ast.Dict) and node in parent.keys):
                        return None  # getattr(config, "mesh_axes"), a flag's name
                    written = parent.values[parent.keys.index(node)]
                if written is None:
                    continue
                got = self.strings(m, written, depth + 1)
                if got is None:
                    return None
                values += 1
                written_values.append((f"{path}:{getattr(written, 'lineno', 1)}", got))
                out += [g for g in got if g not in out]
        self._fields[attr] = out if values else None
        return self._fields[attr]


def distinct_paths(paths: Sequence[str]) -> List[str]:
    """``paths`` without a second name for one file."""
    seen: Set[str] = set()
    out = []
    for p in paths:
        key = os.path.realpath(p)
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


def shown_path(path: str) -> str:
    """A path as a finding's message shows it: relative to the working directory when it
    is under it."""
    rel = os.path.relpath(os.path.abspath(path))
    return path if rel.startswith("..") else rel


def _split_place(where: str) -> Tuple[str, Optional[int]]:
    """``path:row`` (a Python file's line) or ``path`` (a config file) split."""
    path, _, row = where.rpartition(":")
    return (path, int(row)) if row.isdigit() else (where, None)


def shown_place(where: str) -> str:
    """A config file, or a Python file's line, as a message names it."""
    path, row = _split_place(where)
    return f"{shown_path(path)}:{row}" if row is not None else shown_path(path)


def related_place(where: str, note: str) -> Related:
    """A config file (its first line), or a Python file's line, as a finding's note."""
    path, row = _split_place(where)
    line = row if row is not None else 1
    return Related(note, path, line, 1, line, 1)
