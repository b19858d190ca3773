"""What a file's analysis read of a module it imports: the module's statements that the
names it looked up there reach, as a digest (``slice_digest``).

An importer's result depends on module ``m`` only through the names it looks up there
(``from m import f``, ``m.f``): a lookup reads the value ``m``'s top level gave the
name. As the interpreter models Python, that value is made by the statements that bind
the name: an assignment to it or into its attribute or item (which rebinds the name
to its value with that part replaced: values are never changed in place, so a method
call or a call it is passed to changes nothing it holds), ``def``, ``class``,
``import``, ``del``, and a function that declares it ``global`` (it may rebind it when
called). Those statements read what they mention (a function's body reads the
module-level names it mentions at each call). The slice of a set of names is the
closure of that relation over ``m``'s top-level statements, with the statements that
run for their effect besides (a call written as a statement, a ``__future__`` import)
and what they read. A result that read ``f`` still holds after an edit outside ``f``'s
slice (a comment, a function nothing in the slice reads, a new definition): the cache
compares the slice's digest, not the file's (``Dependencies.names``). A star import
(``from m import *``) reads the slice of every public name of ``m`` (``STAR``): an
edit of a comment or of a private helper no public statement reads leaves it alone, a
new public definition does not.

A statement that may bind names no one can read off it (``from x import *``, and
reflection: ``globals()``, ``vars()``, ``locals()``, ``exec``/``eval``, a module
``__getattr__``, ``__dict__``, ``sys.modules``, ``setattr``/``delattr``,
``__import__``/``importlib.import_module``) is in every slice, with what it reads. A name
read through reflection (``globals()["X"]``) is not followed: the interpreter does not
follow it either, so no result depends on it. The digest holds each kept statement's
lines and rows, so a finding or note placed in the module (their rows) is placed where
it was, and every comment that names ``shardcheck`` or ``noqa``. It is None where
``ast`` cannot read the module: no edit of it is then known to leave the result alone.
"""

from __future__ import annotations

import ast
import hashlib
import io
import re
from typing import Dict, FrozenSet, Iterable, List, Optional, Set, Tuple

from . import pyast

# names and attributes through which code reaches a module's names without naming them
_REFLECTION = frozenset({"globals", "vars", "locals", "exec", "eval", "__getattr__",
                         "__dict__", "modules", "setattr", "delattr", "__import__",
                         "import_module", "__builtins__"})
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DIRECTIVE = re.compile(r"shardcheck|noqa", re.IGNORECASE)


# what ``from m import *`` reads of ``m``: every name it binds that does not start with
# "_" (the interpreter copies those), and ``__all__``; a new public definition is in it
STAR = "*"


def _public(names: Set[str]) -> bool:
    return any(not n.startswith("_") or n == "__all__" for n in names)


class _Unit:
    __slots__ = ("start", "end", "mentions", "makes", "acts")

    def __init__(self, start: int, end: int, mentions: Set[str], makes: Set[str],
                 acts: bool) -> None:
        self.start, self.end, self.mentions, self.acts = start, end, mentions, acts
        self.makes = makes  # the module-level names it binds


class SliceIndex:
    """A module's top-level statements, each with the names it mentions and binds, for
    the digests of slices of it."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = io.StringIO(text, newline="").readlines()  # rows as ast counts them
        self.units: List[_Unit] = []
        self.parsed = False
        parsed = pyast.parse(text)
        if parsed is None:
            return
        self.parsed = True
        for stmt in parsed.tree.body:
            mentions, acts = _read(stmt)  # acts: None where it may bind any name
            start = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", ())])
            end = stmt.end_lineno or stmt.lineno
            for row, names in parsed.erased.items():  # what blanked type parameters read
                if start <= row <= end:
                    mentions |= names
            self.units.append(_Unit(start, end, mentions, _binds(stmt), acts is not False))
        self.directives = [(i, line) for i, line in enumerate(self.lines, 1)
                           if "#" in line and _DIRECTIVE.search(line)]

    def digest(self, names: Iterable[str]) -> Optional[str]:
        """The digest of the slice ``names`` reach (None: the module does not parse)."""
        if not self.parsed:
            return None
        h = hashlib.sha256()
        for u in self._closure(frozenset(names)):
            h.update(f"{u.start}:{u.end}\0".encode())
            h.update("".join(self.lines[u.start - 1:u.end]).encode("utf-8", "surrogatepass"))
        for row, line in self.directives:
            h.update(f"#{row}\0{line}".encode("utf-8", "surrogatepass"))
        return h.hexdigest()

    def _closure(self, names: FrozenSet[str]) -> List[_Unit]:
        wanted: Set[str] = set(names)
        star = STAR in wanted
        kept = [False] * len(self.units)
        grew = True
        while grew:
            grew = False
            for i, u in enumerate(self.units):
                if not kept[i] and (u.acts or u.makes & wanted or (star and _public(u.makes))):
                    kept[i] = grew = True
                    wanted |= u.mentions
        return [u for u, k in zip(self.units, kept) if k]


def _read(stmt: ast.stmt) -> Tuple[Set[str], Optional[bool]]:
    """(the names a top-level statement mentions anywhere in it, whether it runs for an
    effect; None where it may bind any name: a star import, reflection)."""
    mentions: Set[str] = set()
    any_name = False
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name):
            any_name = any_name or node.id in _REFLECTION
            mentions.add(node.id)
        elif isinstance(node, ast.Attribute):
            any_name = any_name or node.attr in _REFLECTION
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            any_name = any_name or node.name in _REFLECTION  # a module __getattr__
            mentions.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                any_name = any_name or alias.name == "*"
                mentions.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            mentions.update(node.names)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            # a string annotation (a forward reference) names what it names
            mentions.update(_IDENTIFIER.findall(node.value))
    return mentions, (None if any_name else _acts(stmt))


def _acts(stmt: ast.stmt) -> bool:
    """Whether a top-level statement runs for an effect: a ``__future__`` import, or a
    call written as a statement (in a compound statement's blocks too)."""
    if isinstance(stmt, ast.ImportFrom):
        return stmt.module == "__future__"
    if isinstance(stmt, ast.Expr):
        return not isinstance(stmt.value, ast.Constant)  # a docstring does nothing
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return False
    for field in ("body", "orelse", "finalbody", "handlers", "cases"):
        for child in getattr(stmt, field, None) or ():
            inner = child.body if isinstance(child, (ast.ExceptHandler, ast.match_case)) \
                else [child]
            if any(isinstance(s, ast.stmt) and _acts(s) for s in inner):
                return True
    return False


def _binds(stmt: ast.stmt) -> Set[str]:
    """The module-level names a top-level statement binds: what it stores to or deletes
    as it runs (a name, or the name an attribute or item it stores into starts from),
    defines or imports, names an exception; and the names the functions it defines
    declare ``global``."""
    out: Set[str] = set()
    todo: List[Tuple[ast.AST, bool]] = [(stmt, True)]  # (node, runs at the top level)
    while todo:
        n, top = todo.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if top:
                out.add(n.name)
            todo.extend((c, False) for c in ast.iter_child_nodes(n))
            continue
        if isinstance(n, ast.Global):
            out.update(n.names)
        elif not top:
            pass
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            out.update(a.asname or a.name.split(".")[0] for a in n.names)
        elif isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            out.add(n.id)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            out.add(n.name)
        elif isinstance(n, (ast.Attribute, ast.Subscript)) and \
                isinstance(n.ctx, (ast.Store, ast.Del)):
            root = _root(n)
            if root:
                out.add(root)
        elif isinstance(n, ast.Lambda):
            todo.extend((c, False) for c in ast.iter_child_nodes(n))
            continue
        todo.extend((c, top) for c in ast.iter_child_nodes(n))
    return out


def _root(e: ast.expr) -> str:
    """The name an attribute or item chain starts from ("" for another expression)."""
    while isinstance(e, (ast.Attribute, ast.Subscript)):
        e = e.value
    return e.id if isinstance(e, ast.Name) else ""


class SliceDigests:
    """Slice digests of the files of a run, each file's statements read once per
    content (``key``: the content's hash); at most ``limit`` contents kept (a long-lived
    process forgets the oldest)."""

    def __init__(self, limit: int = 0) -> None:
        self._indexes: Dict[str, SliceIndex] = {}
        self._limit = limit

    def digest_of(self, data: bytes, names: Iterable[str]) -> Optional[str]:
        """The digest of the slice of ``names`` in a file holding ``data`` (None where
        it does not decode)."""
        from .dependencies import content_hash
        from .sources import SourceError, decode_source
        try:
            text = decode_source(data)
        except SourceError:
            return None
        return self.digest(content_hash(data), text, names)

    def digest(self, key: str, text: str, names: Iterable[str]) -> Optional[str]:
        index = self._indexes.get(key)
        if index is None:
            if self._limit and len(self._indexes) >= self._limit:
                del self._indexes[next(iter(self._indexes))]
            index = self._indexes[key] = SliceIndex(text)
        return index.digest(names)
