"""The runtime half of ``shardcheck confirm``: a program's source, and the source of the
project's own modules it imports, instrumented in memory so that ``jax.typeof`` of every
assigned array is recorded where it was assigned.

The files on disk are never changed, and no bytecode is read from or written to
``__pycache__`` for an instrumented module (a cached ``.pyc`` holds the code without the
record calls; a written one would hold them for the user's next run).

A module is the project's when its file lies under one of the directories the driver is
given (the project's root and the source roots of the files confirm was given) and
not in an environment: a ``site-packages`` or ``dist-packages`` directory, the running
interpreter's standard library, or a hidden directory below the project's (``.venv``,
``.tox``). JAX and shardcheck itself are never instrumented, wherever they lie.
"""

from __future__ import annotations

import ast
import importlib.abc
import importlib.machinery
import os
import sys
from typing import Any, Callable, Iterable, List, Optional, Sequence, Tuple

# top-level packages never instrumented: JAX, and the recorder that instrumentation calls
NEVER = frozenset({"jax", "jaxlib", "shardcheck", "sharding_types"})
_ENVIRONMENTS = frozenset({"site-packages", "dist-packages"})


def _names(target: ast.AST) -> List[ast.Name]:
    if isinstance(target, ast.Name):
        return [target]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for e in target.elts for n in _names(e)]
    return []


class _Instrument(ast.NodeTransformer):
    def __init__(self, file: Optional[str] = None):
        # the key's first item: the file, where a run records several files' types
        self.prefix = f"{file!r}, " if file is not None else ""

    def body(self, stmts: List[ast.stmt]) -> List[ast.stmt]:
        out: List[ast.stmt] = []
        for s in stmts:
            s = self.visit(s)
            out.append(s)
            targets: List[ast.AST] = []
            if isinstance(s, ast.Assign):
                targets = list(s.targets)
            elif isinstance(s, ast.AnnAssign) and s.value is not None:
                targets = [s.target]
            for t in targets:
                for n in _names(t):
                    call = ast.parse(f"__sc_record__(({self.prefix}{n.lineno}, "
                                     f"{n.col_offset + 1}, {n.id!r}), {n.id})").body[0]
                    out.append(ast.copy_location(call, s))
        return out

    def generic_visit(self, node: ast.AST) -> ast.AST:
        for attr in ("body", "orelse", "finalbody"):
            val = getattr(node, attr, None)
            if isinstance(val, list) and val and isinstance(val[0], ast.stmt):
                setattr(node, attr, self.body(val))
        for h in getattr(node, "handlers", []) or []:
            h.body = self.body(h.body)
        for c in getattr(node, "cases", []) or []:
            c.body = self.body(c.body)
        return node


def instrumented(path: str, keyed: bool = False):
    """``path`` compiled with a record call after every assignment, each under the key
    (line, column, name), or with ``keyed`` (file, line, column, name), the file being
    ``path``'s real path. The source is read as Python reads it (its coding cookie)."""
    with open(path, "rb") as fh:
        tree = ast.parse(fh.read(), filename=path)
    tree.body = _Instrument(os.path.realpath(path) if keyed else None).body(tree.body)
    ast.fix_missing_locations(tree)
    return compile(tree, path, "exec")


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def environment_dirs() -> List[str]:
    """Where this interpreter's standard library and installed packages live: never the
    project's. Not its whole prefix: a project may sit below it (``/usr/src/app`` with
    a system Python in ``/usr``)."""
    import site
    import sysconfig
    found = {sysconfig.get_path(key) for key in ("stdlib", "platstdlib", "purelib", "platlib")}
    try:
        found.update(site.getsitepackages())
        found.add(site.getusersitepackages())
    except AttributeError:  # a virtualenv's old site.py lacks them
        pass
    return sorted(os.path.realpath(d) for d in found if d)


class ProjectImporter(importlib.abc.MetaPathFinder):
    """A ``sys.meta_path`` finder, first in the list: a module the other finders find
    in a file of the project (``inside``, not in an environment) is loaded instrumented,
    recording into ``record``; ``loaded`` lists (module name, real path) in import order."""

    def __init__(self, record: Callable[[Any, Any], Any], inside: Iterable[str],
                 outside: Sequence[str] = ()):
        self.record = record
        self.inside = sorted({os.path.realpath(d) for d in inside})
        self.outside = list(outside) or environment_dirs()
        self.loaded: List[Tuple[str, str]] = []

    def is_project_file(self, path: str) -> bool:
        real = os.path.realpath(path)
        if not real.endswith(".py") or any(_under(real, d) for d in self.outside):
            return False
        for folder in self.inside:
            if _under(real, folder):
                below = os.path.relpath(os.path.dirname(real), folder).split(os.sep)
                return not any(p.startswith(".") and p not in (".", "..") or p in _ENVIRONMENTS
                               for p in below)
        return False

    def find_spec(self, fullname: str, path: Optional[Sequence[str]] = None, target: Any = None):
        if fullname.partition(".")[0] in NEVER:
            return None
        spec = None
        for finder in sys.meta_path:  # the others, in the order the import system asks them
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find(fullname, path, target)
            if spec is not None:
                break
        if spec is not None and spec.origin and \
                isinstance(spec.loader, importlib.machinery.SourceFileLoader) and \
                self.is_project_file(spec.origin):
            spec.loader = _InstrumentedLoader(fullname, spec.origin, self)
        return spec  # the spec found; None lets the import system go on as without us


class _InstrumentedLoader(importlib.machinery.SourceFileLoader):
    """Loads a project module from its source, instrumented; never through a ``.pyc``."""

    def __init__(self, fullname: str, path: str, importer: ProjectImporter):
        super().__init__(fullname, path)
        self.importer = importer

    def get_code(self, fullname: str):
        return instrumented(self.path, keyed=True)

    def exec_module(self, module) -> None:
        module.__dict__["__sc_record__"] = self.importer.record
        self.importer.loaded.append((module.__name__, os.path.realpath(self.path)))
        super().exec_module(module)
