"""A project as the unit of analysis: whatever subset of its files is checked, the answer
is the whole project's, for those files.

A file's analysis evaluates the functions it calls, in other modules too, under the
contexts it gives them (its meshes, its arguments), and reports what that proves where
it happens: a ``model.py`` that divides by a mesh only ``train.py`` passes in has its
findings found by ``train.py``'s analysis. So checking ``model.py`` alone (as pre-commit
does with the files staged) must analyse the project's files that import it, directly or
through other modules (``importers``), and keep what lands in ``model.py``. A finding
the checked file's own analysis places in a module it calls is kept too: the call that
causes it is in the checked file (its notes name the call, through each hop).

``Workspace`` answers for a project (its config and its Python files); the application
runs the analyses (cached, in budgeted workers) and hands their findings to
``restrict``. ``Workspace.check`` does all of it in this process, for library users.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import (Callable, Dict, FrozenSet, Iterable, List, Mapping, MutableMapping, Optional,
                    Sequence, Set, Tuple)

from .config import Config
from .ftypes import Finding
from .precheck import imported_names
from .project import Project, module_name_for
from .sources import SourceError, Unreadable, decode_source, read_source

# what a file's import statements name, by its path: (size, mtime in ns, its module name)
# of the text they were read from, and the dotted names. A caller may keep it between
# runs (the cache directory does), so a warm run reads no file to find the importers of
# another; the names are resolved to files afresh each run (a module may have appeared).
ImportsMemo = MutableMapping[str, Tuple[int, int, str, Tuple[str, ...]]]


@dataclass(frozen=True)
class ProjectFiles:
    """The project's files as an analysis takes them (iterating gives the paths), and
    which of them another project file imports: such a file is parsed whole once, for
    its own check and for its importers' (``Project.shared_parse``), not once reduced to
    what its own findings need (``relevance``) and once whole."""

    paths: Tuple[str, ...]
    imported: FrozenSet[str] = frozenset()

    def __iter__(self):
        return iter(self.paths)

    def __len__(self) -> int:
        return len(self.paths)


class Workspace:
    """The project: ``config`` and its Python ``files``, with the import graph between
    them, read from their text (``precheck.imported_names``: every name an import
    statement may bind, resolved as the interpreter resolves them)."""

    def __init__(self, config: Config, files: Iterable[str],
                 memo: Optional[ImportsMemo] = None,
                 unsaved: Optional[Mapping[str, str]] = None) -> None:
        self.config = config
        # the text of files an editor holds unsaved (absolute path -> text): their import
        # statements are read there, not on disk (and never memoised)
        self._unsaved = dict(unsaved or {})
        self.files: List[str] = list(dict.fromkeys(os.path.abspath(f) for f in files))
        self._project = Project(config)
        for f in self.files:
            self._project.add_file(f)
        self._memo: ImportsMemo = memo if memo is not None else {}
        self._tops = {name.partition(".")[0] for name in self._project.modules}
        self._namespaces: Dict[str, bool] = {}
        self._importers: Optional[Dict[str, Set[str]]] = None

    def imports_of(self, path: str) -> Tuple[str, ...]:
        """The project files ``path``'s import statements resolve to (absolute paths)."""
        path = os.path.abspath(path)
        out = set()
        modules = self._project.modules
        for name in self._imported_names(path):
            # a project file is found by its module name; on disk only under a namespace
            # package (a directory with no __init__.py, whose files' module names do not
            # start with it). Most names are other libraries' or attributes: none is
            # looked for on disk. A library the analysis models (jax in jax's own tree)
            # is never read as project code: importing it is no edge.
            if not self._project.may_be_project_module(name):
                continue
            target = modules.get(name)
            if target is None and "." in name and self._is_namespace(name.partition(".")[0]):
                target = self._project.path_of(name)
            if target is not None and os.path.abspath(target) != path:
                out.add(os.path.abspath(target))
        return tuple(sorted(out))

    def _is_namespace(self, top: str) -> bool:
        found = self._namespaces.get(top)
        if found is None:
            found = self._namespaces[top] = top not in self._tops and \
                bool(self._project.namespace_bases(top))
        return found

    def _imported_names(self, path: str) -> Tuple[str, ...]:
        if path in self._unsaved:
            module = module_name_for(path, self._project.package_dirs)
            return tuple(sorted(imported_names(self._unsaved[path], module,
                                               os.path.basename(path) == "__init__.py")))
        try:
            st = os.stat(path)
        except OSError:
            return ()
        module = module_name_for(path, self._project.package_dirs)
        known = self._memo.get(path)
        if known is not None and tuple(known[:3]) == (st.st_size, st.st_mtime_ns, module):
            return tuple(known[3])
        names: Tuple[str, ...] = ()
        if not path.lower().endswith(".ipynb"):  # a notebook is checked, never imported
            try:
                text = decode_source(read_source(path))
            except (Unreadable, SourceError):
                text = ""
            if "import" in text:
                names = tuple(sorted(imported_names(text, module,
                                                    os.path.basename(path) == "__init__.py")))
        self._memo[path] = (st.st_size, st.st_mtime_ns, module, names)
        return names

    def _graph(self) -> Dict[str, Set[str]]:
        """File -> the project files that import it."""
        if self._importers is None:
            self._importers = {}
            for f in self.files:
                for target in self.imports_of(f):
                    self._importers.setdefault(target, set()).add(f)
        return self._importers

    def project_files(self) -> ProjectFiles:
        """The files, with those another imports (``ProjectFiles``)."""
        return ProjectFiles(tuple(self.files), frozenset(self._graph()))

    def importers(self, paths: Iterable[str]) -> List[str]:
        """The project files that import one of ``paths``, directly or through other
        project modules (not ``paths`` themselves), in the project's order."""
        self._graph()
        assert self._importers is not None
        start = {os.path.abspath(p) for p in paths}
        seen: Set[str] = set()
        todo = list(start)
        while todo:
            for f in self._importers.get(todo.pop(), ()):
                if f not in seen and f not in start:
                    seen.add(f)
                    todo.append(f)
        return [f for f in self.files if f in seen]

    def check(self, paths: Sequence[str]) -> List[Finding]:
        """The project's findings for ``paths``, analysed here, with no cache or budget
        (the CLI adds both): each of ``paths`` and each of its importers analysed once."""
        from .engine import check_file
        project = Project(self.config)
        for f in self.files:
            project.add_file(f)
        wanted = list(paths)
        results = {p: check_file(p, self.config, project)
                   for p in wanted + self.importers(wanted)}
        return restrict(results, wanted)


def restrict(results: Mapping[str, List[Finding]], checked: Sequence[str]) -> List[Finding]:
    """The findings of ``checked`` among the findings of each analysed file
    (``results``: a file -> its analysis's findings, wherever they are placed): those
    placed in a checked file, whichever analysis found them, and those a checked file's
    own analysis placed in another module (its calls cause them). One finding per
    mistake: a rule's findings at one span are merged into the first, with the notes of
    each (``merge``). Every file is spelled alike, however it was analysed (an importer
    by its absolute path, a cached result as its run spelled it): a checked file as it was
    given, any other relative to the working directory when the checked files are."""
    names = {os.path.abspath(p): p for p in checked}
    relative = bool(checked) and not os.path.isabs(checked[0])

    def spelled(path: str) -> str:
        full = os.path.abspath(path)
        return names.get(full) or (os.path.relpath(full) if relative else full)

    rank = {os.path.abspath(p): i for i, p in enumerate(checked)}
    kept: List[Finding] = []
    # the analyses in one order however they were run (some answered from a cache): a
    # merged finding keeps the first one's fix and its notes come in that order
    for analysed in sorted(results, key=lambda p: (rank.get(os.path.abspath(p), len(rank)),
                                                   os.path.abspath(p))):
        found = results[analysed]
        own = os.path.abspath(analysed) in names
        for f in found:
            if os.path.abspath(f.filename) in names or own:
                kept.append(_respelled(f, spelled))
    merged = merge(kept)
    return sorted(merged, key=lambda f: (rank.get(os.path.abspath(f.filename), len(rank)),
                                         f.filename, f.row, f.column, f.code, f.message))


def _respelled(f: Finding, spelled: Callable[[str], str]) -> Finding:
    from dataclasses import replace
    related = tuple(r if r.filename == spelled(r.filename) else replace(r, filename=spelled(r.filename))
                    for r in f.related)
    name = spelled(f.filename)
    if name == f.filename and related == f.related:
        return f
    return replace(f, filename=name, related=related)


def merge(findings: Iterable[Finding]) -> List[Finding]:
    """One finding per rule and span: a second finding of the same rule at the same place
    (one spec that two uses check, one helper that two calls reach) adds its notes to the
    first (once each) and is not reported again."""
    from dataclasses import replace
    out: Dict[Tuple[str, int, int, int, int, str], Finding] = {}
    for f in findings:
        key = (os.path.abspath(f.filename), f.row, f.column, f.end_row, f.end_column, f.code)
        first = out.get(key)
        if first is None:
            out[key] = f
            continue
        notes = first.related + tuple(r for r in f.related if r not in first.related)
        # expected (inside assertRaises) only if every way to it is
        expected = first.in_expected_failure and f.in_expected_failure
        if notes != first.related or expected != first.in_expected_failure:
            out[key] = replace(first, related=notes, in_expected_failure=expected)
    return list(out.values())
