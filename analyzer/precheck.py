"""Which files can hold a finding at all: a sound pre-check on the text, before libcst.

Most files of a JAX project use no sharding API, and analysing them in full costs as
much as analysing the ones that do. Every finding past the file-level ones (syntax,
read and suppression problems, which the engine still reports for every file) rests on
a value only the sharding vocabulary makes: a mesh, a ``PartitionSpec`` or sharding, a
sharded array, a collective, a ``shard_map``, an annotation of the runtime layer, or the
use of a deprecated sharding API. Arrays without a sharding, transforms and ``jit``
without ``*_shardings`` never conflict (``tests/test_precheck.py`` checks that every
name the analyzer models outside those neutral families matches ``TRIGGERS``).

Such a value reaches a file only two ways, both visible in its text:

- the file spells the API: a name from it appears in the text (an import, an attribute
  chain, a keyword such as ``out_sharding=``), so one of ``TRIGGERS`` does, or the
  ``jax.P`` alias of ``PartitionSpec`` does;
- the file imports a module of the checked project whose definitions carry one: the
  interpreter resolves ``import``/``from ... import`` (relative ones too) and attribute
  chains on imported modules (``pkg.sub.f``) to project modules, whose own text and
  imports are then judged the same way, transitively.

A logical-constraint wrapper the configuration declares counts as the vocabulary
(``declared_words``). A file with neither is not parsed by libcst: its findings are
exactly the file-level ones. The imported modules consulted are recorded in
``project.used``, so the cache re-checks the file when one of them changes.
"""

from __future__ import annotations

import os
import bisect
import re
import sys
import weakref
from typing import TYPE_CHECKING, Dict, FrozenSet, List, Optional, Set

from . import manifest
from .project import relative_base

if TYPE_CHECKING:
    from .project import Project

# Lower-case words no registry lists, each standing for an open class of names: every
# name of the sharding vocabulary the registries do list is found by ``TRIGGERS``, which
# ``registry_manifest`` derives from them and these (generated into ``manifest.py``).
OPEN_WORDS = (
    "mesh",  # mesh=, mesh_utils, a project's own make_*_mesh helpers
    "shard",  # *_sharding(s)= keywords, sharding_types, Sharded, a project's shard_* helpers
    "partition",  # Flax's partitioning modules, partition_spec=, a project's partition rules
    "logical",  # Flax's logical-axis names, and a project's own wrappers of them
    "_with_axes",  # flax.linen.partitioning's t5x-style names (param_with_axes, ...)
)
TRIGGERS = manifest.PRECHECK_WORDS
# ``jax.P`` (``from jax import P``): the one short alias of the vocabulary.
_P_ALIAS = re.compile(r"P(?!\w)")  # not preceded by a word character either (checked apart:
# a pattern that starts with a look-behind is searched for 30x slower)

# No leading \b: a literal first lets the regex engine skip ahead (20x faster); what an
# identifier ending in "from"/"import" adds is only more names to look up.
_FROM = re.compile(r"from\s*(\.*)\s*([\w.]*)\s*import\b\s*(\(|[^\n;]*)")
_IMPORT = re.compile(r"import\s+([\w.]+(?:\s+as\s+\w+)?(?:\s*,\s*[\w.]+(?:\s+as\s+\w+)?)*)")
_WORD = re.compile(r"[^\W\d]\w*")
_ATTRIBUTE = re.compile(r"\.\s*([^\W\d]\w*)")


def spells_sharding_api(text: str) -> bool:
    """Whether ``text`` spells a name of the sharding vocabulary (``TRIGGERS``, ``jax.P``)."""
    low = text.lower()
    if any(t in low for t in TRIGGERS):
        return True
    if "jax" not in text:
        return False
    return any(m.start() == 0 or not (text[m.start() - 1].isalnum() or text[m.start() - 1] == "_")
               for m in _P_ALIAS.finditer(text))


def imported_names(text: str, module_name: str, is_package: bool = False) -> Set[str]:
    """Every dotted name an import statement in ``text`` may bind or read, resolved as
    the interpreter resolves them for a module called ``module_name`` (a package's
    ``__init__`` when ``is_package``; an over-approximation: text in strings and
    comments counts too)."""
    text = text.replace("\\\r\n", " ").replace("\\\n", " ").replace("\\\r", " ")
    out: Set[str] = set()
    # the from-imports' statements (in order): `import x` inside one is no import of x
    starts: List[int] = []
    ends: List[int] = []
    for m in _FROM.finditer(text):
        starts.append(m.start())
        ends.append(m.end())
        dots, base = m.group(1), m.group(2)
        listed = _parenthesized(text, m.end()) if m.group(3) == "(" else m.group(3)
        if dots:
            base = relative_base(module_name, len(dots), base, is_package)
        if base:
            out.update(_prefixes(base))
            out.update(f"{base}.{w}" for w in _WORD.findall(listed))
        else:
            out.update(_WORD.findall(listed))
    for m in _IMPORT.finditer(text):
        i = bisect.bisect_right(starts, m.start()) - 1
        if i >= 0 and m.start() < ends[i]:
            continue  # `from . import collectives`: analyzer.jaxapi.collectives, not collectives
        for part in m.group(1).split(","):
            out.update(_prefixes(part.split()[0]))
    return out


def _parenthesized(text: str, start: int) -> str:
    """The names of ``from x import (...)`` from ``start`` (after the parenthesis) to the
    one that closes it: the first ``)`` outside a comment (comments kept: they only add
    names)."""
    pos = start
    while pos < len(text):
        eol = text.find("\n", pos)
        eol = len(text) if eol < 0 else eol
        code = text[pos:eol].split("#", 1)[0]
        if ")" in code:
            return text[start:pos + code.index(")")]
        pos = eol + 1
    return text[start:]


def _prefixes(dotted: str) -> List[str]:
    parts = [p for p in dotted.split(".") if p]
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


class _Facts:
    """What the pre-check reads of one project module's text (memoised per run)."""

    __slots__ = ("spells", "imports", "attributes")

    def __init__(self, spells: bool, imports: FrozenSet[str], attributes: FrozenSet[str]):
        self.spells = spells
        self.imports = imports
        self.attributes = attributes


class _ProjectMemo:
    def __init__(self, roots: int) -> None:
        self.roots = roots
        self.facts: Dict[str, Optional[_Facts]] = {}  # module name -> facts (None: unreadable)
        self.paths: Dict[str, Optional[str]] = {}  # module name -> path, if a project module
        self.may_have_submodules: Dict[str, bool] = {}
        self.listings: Dict[str, FrozenSet[str]] = {}  # directory -> its entries
        self.roots_with: Optional[Dict[str, List[str]]] = None  # top-level name -> roots


_MEMOS: "weakref.WeakKeyDictionary[Project, _ProjectMemo]" = weakref.WeakKeyDictionary()


def declared_words(config: object) -> FrozenSet[str]:
    """The last names of the logical-constraint wrappers ``[tool.shardcheck.logical]``
    declares: a call of one means ``nn.with_logical_constraint``, so a file that spells
    one is analysed though it spells nothing else of the vocabulary."""
    logical = getattr(config, "logical", None)
    return frozenset(w.name.rsplit(".", 1)[-1] for w in (logical.wrappers if logical else ()))


def needs_analysis(text: str, path: str, project: Optional[Project],
                   module_name: Optional[str] = None, words: FrozenSet[str] = frozenset()) -> bool:
    """Whether the file ``path`` with source ``text`` can have findings beyond the
    file-level ones (see the module's docs); ``project`` resolves its imports;
    ``words``: the declared wrappers' names (``declared_words``)."""
    if spells_sharding_api(text) or any(w in text for w in words):
        return True
    if project is None or ("import" not in text):
        return False
    if module_name is None:
        from .project import module_name_for
        module_name = module_name_for(path) if os.path.isfile(path) else ""
    package = os.path.basename(path) == "__init__.py"
    return project_reaches(project, imported_names(text, module_name, package),
                           frozenset(_ATTRIBUTE.findall(text)))


def project_reaches(project: Project, names: Set[str], attributes: FrozenSet[str]) -> bool:
    """Whether a project module among the dotted ``names`` (or one they reach through
    imports and the ``attributes`` read) spells the sharding vocabulary; when none
    does, the modules consulted are added to ``project.used``."""
    memo = _MEMOS.get(project)
    if memo is None or memo.roots != len(project.roots):  # files were added: start afresh
        memo = _MEMOS[project] = _ProjectMemo(len(project.roots))
    return _reaches_sharding(project, memo, names, attributes)


def cleared(text: str, path: str, project: Optional[Project],
            module_name: Optional[str] = None, words: FrozenSet[str] = frozenset()) -> bool:
    """Whether the file has no finding to look for: no sharding API within reach
    (``needs_analysis``) and source CPython compiles. The engine and the runner (before
    it imports the analysis) decide it here alike."""
    from .sources import python_verdict
    return not needs_analysis(text, path, project, module_name, words) and \
        python_verdict(text, path) is None


def _reaches_sharding(project: Project, memo: _ProjectMemo, names: Set[str],
                      attributes: FrozenSet[str]) -> bool:
    """Whether a project module among ``names``, or reachable from them through imports
    and attribute chains (``attributes``: the attribute names the code reads), spells
    the sharding vocabulary. When none does, the modules consulted are added to
    ``project.used`` (what the answer depends on)."""
    seen: Set[str] = set()
    consulted: List[str] = []
    todo = list(names)
    modules: List[str] = []  # project modules reached: their submodules may be read too
    words: Set[str] = set(attributes)
    grown = True
    while grown:
        grown = False
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            path = _project_path(project, memo, name)
            if path is None:
                continue
            consulted.append(path)
            facts = _facts(project, memo, name, path)
            if facts is None or facts.spells:
                return True  # unreadable: the analysis decides (conservative)
            modules.append(name)
            todo.extend(facts.imports)
            if not facts.attributes <= words:
                words |= facts.attributes
        for name in modules:  # pkg.sub reached by an attribute chain, not an import
            if _may_have_submodules(project, memo, name):
                new = [f"{name}.{w}" for w in words if f"{name}.{w}" not in seen]
                if new:
                    todo.extend(new)
                    grown = True
    project.used.update(consulted)
    return False


def _project_path(project: Project, memo: _ProjectMemo, name: str) -> Optional[str]:
    """The path the interpreter resolves ``name`` to (``Project.path_of``), or None when
    it is no project module. Most names are not: ruled out from directory listings."""
    if name not in memo.paths:
        found = name in project.modules or _may_exist(project, memo, name)
        memo.paths[name] = project.path_of(name) if found and project.has_module(name) else None
    project.record_lookup(name)  # the answer holds while the candidates it passed stay empty
    return memo.paths[name]


_FOLD = str.lower if sys.platform in ("darwin", "win32") else str  # case-insensitive file names


def _may_exist(project: Project, memo: _ProjectMemo, name: str) -> bool:
    """Whether a source root holds ``name``'s ``.py`` file or package (``path_of``'s
    candidates; a superset, as a directory named ``x.py`` counts)."""
    parts = name.split(".")
    if memo.roots_with is None:
        memo.roots_with = {}
        for root in sorted(project.roots):
            for entry in _listing(memo, root):
                top = entry[:-3] if entry.endswith(".py") else entry
                memo.roots_with.setdefault(top, []).append(root)
    for root in memo.roots_with.get(_FOLD(parts[0]), ()):
        d = os.path.join(root, *parts[:-1])
        entries = _listing(memo, d)
        if _FOLD(parts[-1] + ".py") in entries or (
                _FOLD(parts[-1]) in entries and "__init__.py" in _listing(memo, os.path.join(d, parts[-1]))):
            return True
    return len(parts) > 1 and bool(project.namespace_bases(parts[0])) and \
        project.path_of(name) is not None  # under a namespace package: path_of looks there


def _listing(memo: _ProjectMemo, directory: str) -> FrozenSet[str]:
    if directory not in memo.listings:
        try:
            memo.listings[directory] = frozenset(_FOLD(n) for n in os.listdir(directory))
        except OSError:
            memo.listings[directory] = frozenset()
    return memo.listings[directory]


def _facts(project: Project, memo: _ProjectMemo, name: str, path: str) -> Optional[_Facts]:
    if name not in memo.facts:
        from .sources import SourceError, Unreadable, decode_source
        try:
            text = decode_source(project.read(path))
        except (Unreadable, SourceError):
            memo.facts[name] = None
        else:
            package = os.path.basename(path) == "__init__.py"
            memo.facts[name] = _Facts(spells_sharding_api(text),
                                      frozenset(imported_names(text, name, package)),
                                      frozenset(_ATTRIBUTE.findall(text)))
    return memo.facts[name]


def _may_have_submodules(project: Project, memo: _ProjectMemo, name: str) -> bool:
    """Whether ``name.x`` can be a project module: a directory of that name in a source
    root, or a checked file's module under it."""
    rel = name.replace(".", os.sep)
    bases = list(project.roots) + project.namespace_bases(name.split(".")[0])
    if name not in memo.may_have_submodules:
        memo.may_have_submodules[name] = any(
            os.path.isdir(os.path.join(root, rel)) for root in bases) or any(
            m.startswith(name + ".") for m in project.modules)
    if not memo.may_have_submodules[name]:  # the answer holds while no such directory appears
        project.absent.update(os.path.join(root, rel) for root in bases)
    return memo.may_have_submodules[name]
