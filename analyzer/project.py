"""The checked tree as modules, so names imported from another module resolve.

A module's top-level definitions are evaluated once per process (no events, no
function bodies) and memoised. Each file's result records which project modules it
read, so the cache can tell when an imported module changed.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Dict, Optional, Set, Tuple

from .positions import node_positions

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

    def path_of(self, name: str) -> Optional[str]:
        if name in self.modules:
            return self.modules[name]
        rel = name.replace(".", os.sep)
        for root in self.roots:
            for cand in (os.path.join(root, rel + ".py"), os.path.join(root, rel, "__init__.py")):
                if os.path.isfile(cand):
                    self.modules[name] = cand
                    return cand
        return None

    def has_module(self, name: str) -> bool:
        if not name or name.split(".")[0] in ("jax", "jaxlib", "numpy", "flax", "functools"):
            return False
        return self.path_of(name) is not None

    def module_env(self, name: str, requester=None):
        path = self.path_of(name)
        if path is None:
            return None
        self.used.add(path)
        if name in self._envs:
            return self._envs[name]
        if name in self._loading:
            return None
        self._loading.add(name)
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
        self._envs[name] = env
        return env

    def locate(self, node: cst.CSTNode) -> Optional[Tuple[str, Any, str]]:
        """The file, position and source text of a node of a module read through an
        import (None when no read module holds it)."""
        for name, (path, module, text) in list(self.parsed.items()):
            positions = self._positions.get(name)
            if positions is None:
                positions = node_positions(module)
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
