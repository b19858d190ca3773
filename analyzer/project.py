"""The checked tree as modules, so names imported from another module resolve.

A module's top-level definitions are evaluated once per process (no events, no
function bodies) and memoised. Each file's result records which project modules it
read, so the cache can tell when an imported module changed.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Dict, FrozenSet, List, Optional, Set, Tuple

from .positions import Positions

if TYPE_CHECKING:  # a Project resolves imports for the precheck without libcst
    import libcst as cst


def module_name_for(path: str) -> str:
    """Dotted module name: walk up while the directory is a package."""
    path = os.path.abspath(path)
    parts = [os.path.splitext(os.path.basename(path))[0]]
    d = os.path.dirname(path)
    while os.path.isfile(os.path.join(d, "__init__.py")):
        parts.append(os.path.basename(d))
        nd = os.path.dirname(d)
        if nd == d:
            break
        d = nd
    if parts[0] == "__init__":
        parts = parts[1:]
    return ".".join(reversed(parts))


def relative_base(module_name: str, level: int, base: str, is_package: bool) -> str:
    """The absolute module ``from <level dots><base> import ...`` names in module
    ``module_name``: one dot is the module's own package (the module itself when it is
    a package's ``__init__``), each further dot one package up."""
    pkg = module_name.split(".") if module_name else []
    drop = level - (1 if is_package else 0)
    pkg = pkg[: max(0, len(pkg) - drop)]
    return ".".join(pkg + ([base] if base else []))


def source_root_for(path: str) -> str:
    """The directory a module's top-level package sits in."""
    d = os.path.dirname(os.path.abspath(path))
    while os.path.isfile(os.path.join(d, "__init__.py")):
        nd = os.path.dirname(d)
        if nd == d:
            break
        d = nd
    return d


class Project:
    def __init__(self, config=None):
        self.config = config
        self.roots: Set[str] = set()
        self.modules: Dict[str, str] = {}  # module name -> path
        self._missing: Set[str] = set()  # names no project file holds
        self._namespace_bases: Dict[str, List[str]] = {}
        self._deps: Dict[str, FrozenSet[str]] = {}  # module -> the files reading it read
        self._resolving: Set[Tuple[str, str]] = set()
        self._envs: Dict[str, object] = {}
        self._loading: Set[str] = set()
        self.used: Set[str] = set()  # paths read for the file being checked
        # each module read: (path, parsed module, source text), so that a finding at one
        # of its nodes (in a function the checked file calls) is placed in its own file
        self.parsed: Dict[str, Tuple[str, cst.Module, str]] = {}
        self._positions: Dict[str, Any] = {}

    def add_file(self, path: str) -> None:
        if path.lower().endswith(".ipynb"):  # checked, never imported
            return
        self.roots.add(source_root_for(path))
        self.modules.setdefault(module_name_for(path), os.path.abspath(path))
        self._missing.clear()  # a new root may hold what was looked for
        self._namespace_bases.clear()

    def path_of(self, name: str) -> Optional[str]:
        if name in self.modules:
            return self.modules[name]
        if name in self._missing:
            return None
        rel = name.replace(".", os.sep)
        for root in self.roots:
            for cand in (os.path.join(root, rel + ".py"), os.path.join(root, rel, "__init__.py")):
                if os.path.isfile(cand):
                    self.modules[name] = cand
                    return cand
        found = self._in_namespace_package(name)
        if found is None:
            self._missing.add(name)
        else:
            self.modules[name] = found
        return found

    def _in_namespace_package(self, name: str) -> Optional[str]:
        """``name``'s file under a namespace package (PEP 420: a directory with no
        ``__init__.py``, as ``inference`` in ``from inference import parallel``)."""
        if "." not in name:
            return None  # the namespace package itself: no file to read
        rel = name.replace(".", os.sep)
        for d in self.namespace_bases(name.split(".")[0]):
            for cand in (os.path.join(d, rel + ".py"), os.path.join(d, rel, "__init__.py")):
                if os.path.isfile(cand):
                    return cand
        return None

    def namespace_bases(self, top: str) -> List[str]:
        """The directories that hold a namespace package ``top``: a source root, or a
        directory above one up to the project's root (where the project runs with that
        directory on ``sys.path``)."""
        if top not in self._namespace_bases:
            limit = os.path.abspath(self.config.root) if self.config is not None else None
            found: List[str] = []
            for root in sorted(self.roots):
                d = root
                while True:
                    pkg = os.path.join(d, top)
                    if d not in found and os.path.isdir(pkg) and \
                            not os.path.isfile(os.path.join(pkg, "__init__.py")):
                        found.append(d)
                    if limit is None or d == limit or \
                            not d.startswith(limit.rstrip(os.sep) + os.sep):
                        break
                    d = os.path.dirname(d)
            self._namespace_bases[top] = found
        return self._namespace_bases[top]

    def is_package(self, name: str) -> bool:
        """Whether module ``name`` is a package (its file an ``__init__.py``)."""
        path = self.path_of(name) if name else None
        return path is not None and os.path.basename(path) == "__init__.py"

    def has_module(self, name: str) -> bool:
        if not name or name.split(".")[0] in ("jax", "jaxlib", "numpy", "flax", "functools"):
            return False
        return self.path_of(name) is not None

    def module_env(self, name: str, requester=None):
        """The top-level definitions of project module ``name`` (read once per process),
        None when it is no project module or is being read. Every file it read, itself
        included, is added to ``used``: a cached result goes stale when one changes."""
        path = self.path_of(name)
        if path is None:
            return None
        if name in self._envs:
            self.used.update(self._deps.get(name, (path,)))
            return self._envs[name]
        self.used.add(path)
        if name in self._loading:
            return None
        self._loading.add(name)
        outer, self.used = self.used, {path}  # what reading it reads, for every reader
        try:
            from .config import Config
            from .engine import analyze
            from .sources import decode_source, parse_source, read_source
            # as a checked file is read: never blocks on a FIFO, and what CPython rejects
            # (deep nesting that would crash libcst's parser) raises instead
            text = decode_source(read_source(path))
            module = parse_source(text, path)
            self.parsed[name] = (path, module, text)
            env = analyze(module, name, self.config or Config(), self, definitions_only=True,
                          path=path).env
        except Exception:
            env = None
        finally:
            self._loading.discard(name)
            self._deps[name] = frozenset(self.used)
            self.used = outer | self.used
        self._envs[name] = env
        return env

    def imported(self, module: str, name: str) -> Any:
        """``name`` as project module ``module`` defines it (``from module import
        name``, read when it is used: see ``interp.state.LazyImport``); unknown where
        re-exports go round in a circle (Python raises ImportError there)."""
        from .values import UNKNOWN
        key = (module, name)
        if key in self._resolving:
            return UNKNOWN
        self._resolving.add(key)
        try:
            menv = self.module_env(module)
            return menv.lookup(name) if menv is not None else UNKNOWN
        finally:
            self._resolving.discard(key)

    def locate(self, node: cst.CSTNode) -> Optional[Tuple[str, Any, str]]:
        """The file, position and source text of a node of a module read through an
        import (None when no read module holds it)."""
        for name, (path, module, text) in list(self.parsed.items()):
            positions = self._positions.get(name)
            if positions is None:
                positions = Positions(module, text)  # parsed whole: the text read
                self._positions[name] = positions
            r = positions.get(node)
            if r is not None:
                return path, r, text
        return None

    def text_of(self, path: str) -> str:
        """The source text of a read module's file ("" if none was read)."""
        path = os.path.abspath(path)
        for p, _, text in self.parsed.values():
            if os.path.abspath(p) == path:
                return text
        return ""
