"""The checked tree as modules, so names imported from another module resolve.

A module's top-level definitions are evaluated once per process (no events, no
function bodies) and memoised. Each file's check records what its result depends on
(``dependencies``): the project modules it read, with the hash of the content read, and
each place an import was looked for and not found, so the cache can tell when an
imported module changed or a module it looked for appeared.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Dict, FrozenSet, List, Optional, Set, Tuple

from .dependencies import CHANGED, Dependencies, content_hash, hash_file
from .positions import Positions

if TYPE_CHECKING:  # a Project resolves imports for the precheck without libcst
    import libcst as cst


class PackageDirs(Dict[str, bool]):
    """Whether each directory is a package (holds ``__init__.py``), one stat each: a
    project's thousand files sit in a few dozen directories. Kept for one run (a
    ``Project``'s life): a package made since is seen by the next."""

    def __missing__(self, d: str) -> bool:
        got = self[d] = os.path.isfile(os.path.join(d, "__init__.py"))
        return got


def module_name_for(path: str, packages: Optional[Dict[str, bool]] = None) -> str:
    """Dotted module name: walk up while the directory is a package (``packages``: a
    ``PackageDirs`` to ask, for many files of one tree)."""
    return _place(path, packages)[0]


def _place(path: str, packages: Optional[Dict[str, bool]] = None) -> Tuple[str, str]:
    """(the module name of ``path``, the directory its top-level package sits in)."""
    is_package = packages.__getitem__ if packages is not None else \
        (lambda d: os.path.isfile(os.path.join(d, "__init__.py")))
    path = os.path.abspath(path)
    parts = [os.path.splitext(os.path.basename(path))[0]]
    d = os.path.dirname(path)
    while is_package(d):
        parts.append(os.path.basename(d))
        nd = os.path.dirname(d)
        if nd == d:
            break
        d = nd
    if parts[0] == "__init__":
        parts = parts[1:]
    return ".".join(reversed(parts)), d


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
    return _place(path)[1]


# The top-level packages whose APIs ``jaxapi`` models by name (the runtime layer,
# ``sharding_types``, included), never read as project code.
_MODELLED_LIBRARIES = frozenset({"jax", "jaxlib", "numpy", "flax", "functools",
                                 "sharding_types"})


class Project:
    def __init__(self, config=None):
        self.config = config
        self.roots: Set[str] = set()
        self.package_dirs = PackageDirs()  # for this project's life (a run, a task)
        self.modules: Dict[str, str] = {}  # module name -> path
        # module name -> the candidate files its look-up found empty (all of them for a
        # name no project file holds)
        self._passed: Dict[str, Tuple[str, ...]] = {}
        self._namespace_layout: Dict[str, Tuple[List[str], List[str]]] = {}
        self._walk: Optional[List[str]] = None
        self._candidate_files: Dict[str, Tuple[str, ...]] = {}  # ``_candidates``, per name
        # module -> the files reading it read, the candidates it found empty, and the
        # names it looked up in other modules (not the module itself: its readers record
        # it, whole or by the names they look up in it)
        self._deps: Dict[str, Tuple[FrozenSet[str], FrozenSet[str],
                                    Dict[str, FrozenSet[str]]]] = {}
        self._resolving: Set[Tuple[str, str]] = set()
        self._envs: Dict[str, object] = {}
        self._loading: Set[str] = set()
        # what the result of the file being checked depends on (``dependencies``): the
        # paths read, and the candidate files of imports looked for and not found
        self.used: Set[str] = set()
        self.absent: Set[str] = set()
        # the modules the check only looked names up in (``imported``): path -> the names
        self.names_used: Dict[str, Set[str]] = {}
        self.hashes: Dict[str, str] = {}  # absolute path -> the hash of the content read
        # each module read: (path, parsed module, source text), so that a finding at one
        # of its nodes (in a function the checked file calls) is placed in its own file
        self.parsed: Dict[str, Tuple[str, cst.Module, str]] = {}
        self._positions: Dict[str, Any] = {}
        # the files another project file imports (``workspace.ProjectFiles``), each parsed
        # whole once for its own check and its importers' (None: not known)
        self.imported_files: Optional[FrozenSet[str]] = None
        self._env_modules: Dict[int, str] = {}  # id of a module's top-level Env -> its name
        self._shared: Dict[str, Tuple[str, cst.Module]] = {}
        # the unsaved buffers of an editor's open documents (absolute path -> their bytes),
        # read instead of their files: the language server's analyses see what the user sees
        self.overlay: Dict[str, bytes] = {}

    def add_file(self, path: str) -> None:
        if path.lower().endswith(".ipynb"):  # checked, never imported
            return
        name, root = _place(path, self.package_dirs)
        if root not in self.roots:
            self.roots.add(root)
            # a new root may hold what was looked for
            self._passed = {n: c for n, c in self._passed.items() if n in self.modules}
        self.modules.setdefault(name, os.path.abspath(path))
        self._namespace_layout.clear()
        self._candidate_files.clear()
        self._walk = None

    def path_of(self, name: str) -> Optional[str]:
        """The file of project module ``name``, None if no project file holds it. The
        candidate files looked at and found empty before the answer are added to
        ``absent`` on every call (a memoised answer too): the result depends on them."""
        passed = self._passed.get(name)
        if passed is not None:
            self.absent.update(passed)
            return self.modules.get(name)
        if name in self.modules:  # a checked file's module
            return self.modules[name]
        looked: List[str] = []
        found = None
        for cand in self._candidates(name):
            if os.path.isfile(cand):
                found = self.modules[name] = cand
                break
            looked.append(cand)
        self._passed[name] = tuple(looked)
        self.absent.update(looked)
        return found

    def record_lookup(self, name: str) -> None:
        """Add to ``absent`` what the look-up of module ``name`` found empty, without
        looking again: ``path_of``'s record, or, for a name the caller found in no
        directory listing (``precheck``), every candidate file."""
        if name in self._passed:
            self.absent.update(self._passed[name])
        elif name not in self.modules and self.may_be_project_module(name):
            self.absent.update(self._candidates(name))

    def _candidates(self, name: str) -> Tuple[str, ...]:
        """The files that may hold module ``name``, in the order ``path_of`` looks:
        ``name.py`` and ``name/__init__.py`` in each source root, then, for a dotted
        name, in each directory above a root that holds its top package as a namespace
        package (PEP 420: a directory with no ``__init__.py``, as ``inference`` in ``from
        inference import parallel``) or holds no directory of that name (making one would
        make it such a package; a regular package there is no search root). Kept per
        name until a file is added (a project of many roots has many: a precheck of one
        file asks for the same few names again and again)."""
        got = self._candidate_files.get(name)
        if got is not None:
            return got
        rel = name.replace(".", os.sep)
        bases: List[str] = list(self.roots)
        if "." in name:  # a namespace package itself holds no file to read
            namespaces, unmade = self._layout(name.split(".")[0])
            bases += namespaces + unmade
        found: Dict[str, None] = {}
        for d in bases:
            found[os.path.join(d, rel + ".py")] = None
            found[os.path.join(d, rel, "__init__.py")] = None
        got = self._candidate_files[name] = tuple(found)
        return got

    def namespace_bases(self, top: str) -> List[str]:
        """The directories that hold a namespace package ``top``: a source root, or a
        directory above one up to the project's root (where the project runs with that
        directory on ``sys.path``)."""
        return self._layout(top)[0]

    def _layout(self, top: str) -> Tuple[List[str], List[str]]:
        """(the directories of ``_walk`` holding ``top`` as a namespace package, those
        holding nothing named ``top``)."""
        if top not in self._namespace_layout:
            namespaces: List[str] = []
            unmade: List[str] = []
            for d in self._walk_dirs():
                pkg = os.path.join(d, top)
                if not os.path.isdir(pkg):
                    unmade.append(d)
                elif not os.path.isfile(os.path.join(pkg, "__init__.py")):
                    namespaces.append(d)
            self._namespace_layout[top] = (namespaces, unmade)
        return self._namespace_layout[top]

    def _walk_dirs(self) -> List[str]:
        """Each source root and the directories above it up to the project's root."""
        if self._walk is None:
            limit = os.path.abspath(self.config.root) if self.config is not None else None
            self._walk = []
            for root in sorted(self.roots):
                d = root
                while True:
                    if d not in self._walk:
                        self._walk.append(d)
                    if limit is None or d == limit or \
                            not d.startswith(limit.rstrip(os.sep) + os.sep):
                        break
                    d = os.path.dirname(d)
        return self._walk

    def is_package(self, name: str) -> bool:
        """Whether module ``name`` is a package (its file an ``__init__.py``)."""
        path = self.path_of(name) if name else None
        return path is not None and os.path.basename(path) == "__init__.py"

    def has_module(self, name: str) -> bool:
        return self.may_be_project_module(name) and self.path_of(name) is not None

    @staticmethod
    def may_be_project_module(name: str) -> bool:
        """Whether ``name`` is looked for in the project at all: the libraries the
        analysis models are not, even where a checkout of one is in the project (its
        own repository, whose examples import it)."""
        return bool(name) and name.split(".")[0] not in _MODELLED_LIBRARIES

    def module_env(self, name: str, requester=None, looked_up: Optional[str] = None):
        """The top-level definitions of project module ``name`` (read once per process),
        None when it is no project module or is being read. What the result depends on
        is recorded: the module itself, whole (``used``), or only through the name
        ``looked_up`` in it (``names_used``: the cache then compares what that name's
        slice of the module is, ``slices``); and whatever reading it read."""
        path = self.path_of(name)
        if path is None:
            return None
        if name in self._envs:
            used, absent, names = self._deps.get(name, ((), (), {}))
            self.used.update(used)
            self.absent.update(absent)
            for p, ns in names.items():
                self.names_used.setdefault(p, set()).update(ns)
            env = self._envs[name]
            self._read_module(path, looked_up if env is not None else None)
            return env
        if name in self._loading:  # a circle: what it gives depends on the whole order
            self.used.add(path)
            return None
        self._loading.add(name)
        # what reading it reads, for every reader
        outer, self.used = self.used, set()
        outer_absent, self.absent = self.absent, set()
        outer_names, self.names_used = self.names_used, {}
        try:
            from .config import Config
            from .engine import analyze
            from .sources import decode_source
            # as a checked file is read: never blocks on a FIFO, and what CPython rejects
            # (deep nesting that would crash libcst's parser) raises instead
            text = decode_source(self.read(path))
            module = self.shared_parse(path, text)
            self.parsed[name] = (path, module, text)
            env = analyze(module, name, self.config or Config(), self, definitions_only=True,
                          path=path).env
            self._env_modules[id(env)] = name
        except Exception:
            env = None
        finally:
            self._loading.discard(name)
            self.used.discard(path)
            self.names_used.pop(path, None)
            self._deps[name] = (frozenset(self.used), frozenset(self.absent),
                                {p: frozenset(ns) for p, ns in self.names_used.items()})
            self.used = outer | self.used
            self.absent = outer_absent | self.absent
            for p, read in self.names_used.items():
                outer_names.setdefault(p, set()).update(read)
            self.names_used = outer_names
        self._envs[name] = env
        # a module that could not be read gives nothing, whatever is looked up in it
        self._read_module(path, looked_up if env is not None else None)
        return env

    def _read_module(self, path: str, looked_up: Optional[str]) -> None:
        if looked_up is None:
            self.used.add(path)
        else:
            self.names_used.setdefault(path, set()).add(looked_up)

    def shares_parse(self, path: str) -> bool:
        """Whether ``path``'s check parses it whole, as its importers do (``shared_parse``)."""
        return self.imported_files is not None and os.path.abspath(path) in self.imported_files

    def shared_parse(self, path: str, text: str) -> cst.Module:
        """``text`` (``path``'s) parsed whole, once per process for this text: a module
        one file checks and others import is parsed once, in whichever order they come."""
        key = os.path.abspath(path)
        hit = self._shared.get(key)
        if hit is not None and hit[0] == text:
            from .sources import remember
            remember(hit[1], text)  # its check asks what it was parsed from
            return hit[1]
        from .sources import parse_source
        module = parse_source(text, path)
        self._shared[key] = (text, module)
        return module

    def read(self, path: str) -> bytes:
        """The bytes of a project file the check reads (``sources.read_source``, or its
        buffer in ``overlay``), their hash kept as the content the check read: the cache stores a result only while
        each file it read still has that content. Two reads of one file in this process
        that saw two contents keep ``CHANGED``, which no content matches."""
        from .sources import read_source
        key = os.path.abspath(path)
        data = self.overlay.get(key)
        if data is None:
            data = read_source(path)
        digest = content_hash(data)
        if self.hashes.setdefault(key, digest) != digest:
            self.hashes[key] = CHANGED
        return data

    def start_recording(self) -> None:
        """Forget what the previous file's check depended on: a file's check begins."""
        self.used = set()
        self.absent = set()
        self.names_used = {}

    def dependencies(self, checked: str) -> Dependencies:
        """What the result of the file ``checked`` depends on, recorded since
        ``start_recording``: each other file read, with the hash of the content read (a
        file read other than through ``read`` is hashed now), and each candidate found
        empty."""
        me = os.path.abspath(checked)
        files = {p: self.hashes.get(os.path.abspath(p)) or hash_file(p)
                 for p in self.used if os.path.abspath(p) != me}
        whole = {os.path.abspath(p) for p in files} | {me}
        names = {p: (self.hashes.get(os.path.abspath(p)) or hash_file(p), tuple(sorted(ns)), None)
                 for p, ns in self.names_used.items() if os.path.abspath(p) not in whole}
        return Dependencies(files, frozenset(self.absent), names)

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
            menv = self.module_env(module, looked_up=name)
            return menv.lookup(name) if menv is not None else UNKNOWN
        finally:
            self._resolving.discard(key)

    def module_of_scope(self, scope: Any) -> Optional[str]:
        """The project module whose top level ``scope`` (an interpreter ``Env``) is, or
        encloses: where a function defined there was read."""
        while scope is not None:
            name = self._env_modules.get(id(scope))
            if name is not None:
                return name
            scope = getattr(scope, "parent", None)
        return None

    def locate(self, node: cst.CSTNode, module: Optional[str] = None
               ) -> Optional[Tuple[str, Any, str]]:
        """The file, position and source text of a node of a module read through an
        import (None when no read module holds it). ``module``: the one that holds it,
        when the caller knows (``module_of_scope``): the others are not looked through,
        each a walk of its whole tree the first time."""
        modules = [module] if module in self.parsed else list(self.parsed)
        for name in modules:
            path, module_, text = self.parsed[name]
            positions = self._positions.get(name)
            if positions is None:
                positions = Positions(module_, text)  # parsed whole: the text read
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
