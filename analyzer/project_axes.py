"""The project's mesh axes, and the specs that name an axis none of its meshes has
(``axis-in-no-project-mesh``, SC114).

A spec the interpreter sees used with a mesh it knows is checked against that mesh
(``unknown-mesh-axis``, SC101). A spec written where the mesh is a parameter, a class
attribute or a global of another module is not: the mesh is unknown there. Across the
whole project, though, the meshes are often all in view: every ``jax.make_mesh``,
``Mesh`` and ``AbstractMesh`` call of the project names its axes with literals (or
names bound to literals, or a YAML config's ``mesh_axes``). Then an axis no mesh of the
project has is a bug wherever the spec is used: JAX raises ``ValueError: Resource
axis: ... is not found in mesh`` at the first sharding built from it.

The index is *closed* only when the project makes at least one mesh and every mesh it
makes has names read here; any other mesh source (a call whose names are a parameter,
a helper of another package that builds a mesh, ``jtu.create_mesh``) opens it, and
then nothing is reported: a library's specs name the axes of meshes its users build.

A spec counts as naming mesh axes only where JAX reads it as such: the spec of a
``NamedSharding``, ``shard_map``'s ``in_specs``/``out_specs``,
``with_sharding_constraint``, ``reshard``, ``device_put``, ``jit``'s
``in_shardings``/``out_shardings`` and ``out_sharding=`` (written there, inside
tuples, lists, dicts and conditional expressions, or bound to a name used there). A
``PartitionSpec`` of logical names (``nn.logical_to_mesh_axes(P('batch', 'embed'))``)
is never read as one.

This module reads Python with ``ast`` (never imports JAX); the command runs it over the
project's files once a run has its per-file findings (``shardcheck.check.command``).
"""

from __future__ import annotations

import ast
import hashlib
import os
import re
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Set, Tuple

from .codes import AXIS_IN_NO_PROJECT_MESH
from .compat.names import COLLECTIVE_AXIS_ARGUMENT
from .ftypes import ERROR, WARNING, Finding, Related
from .project_names import (MAX_DEPTH, ConfigValues, Module, Resolver, distinct_paths, read_text,
                            related_place, shown_path, shown_place)
from .pyast import char_column, parse

CODE, NAME = AXIS_IN_NO_PROJECT_MESH, "axis-in-no-project-mesh"

# jax callables whose name says mesh and that make none: they return devices, read or
# set the mesh in force
_MESH_READERS = {"create_device_mesh", "create_hybrid_device_mesh", "get_abstract_mesh",
                 "get_mesh", "set_mesh", "use_mesh", "use_abstract_mesh", "get_concrete_mesh",
                 "abstract_mesh", "sharding_mesh"}
# where JAX reads a spec as naming mesh axes: (positional index or None, keywords)
_SPEC_ARGUMENTS = {
    "NamedSharding": (1, ("spec",)),
    "with_sharding_constraint": (1, ("shardings",)),
    "reshard": (1, ("out_shardings",)),
    "device_put": (1, ("device",)),
    "jit": (None, ("in_shardings", "out_shardings")),
    "pjit": (None, ("in_shardings", "out_shardings")),
}
# frameworks that build the meshes of the programs written on them from their own
# configs: a project importing one has meshes it does not write (unless it is the
# framework itself)
_MESH_FRAMEWORKS = {"levanter", "haliax", "easydel", "MaxText", "maxtext", "praxis", "paxml",
                    "t5x", "axlearn", "keras", "tunix", "maxdiffusion", "EasyLM", "jetstream",
                    "marin", "penzai", "scalax", "fjformer"}
_FRAMEWORK_IMPORT = re.compile(r"^\s*(?:from|import)\s+(?:%s)\b" % "|".join(_MESH_FRAMEWORKS),
                               re.M)
# a file that may make a mesh or write a spec: the others are not parsed
_MAY_MATTER = re.compile(r"[Mm]esh\w*\(|Spec|\bP\(|\bPS\(|\.P\b|axis_name|[pv]map\(|lax\.")
# jax.lax's collectives by last name: the position of their axis_name argument (None:
# keyword-only), from the one table (compat.names)
_COLLECTIVES: Dict[str, Optional[int]] = {
    name.rsplit(".", 1)[1]: at for name, at in COLLECTIVE_AXIS_ARGUMENT.items()}
# where a function binds an axis name that is no mesh's: (positional index, keyword)
_BINDERS = {"pmap": 1, "vmap": 3}




@dataclass
class MeshIndex:
    """The axis names of the project's meshes, each with where a mesh names it;
    ``opened_by``: the first mesh source whose names are not known (path, row, why),
    None when every mesh of the project was read."""

    axes: Dict[str, List[Tuple[str, int, int]]] = field(default_factory=dict)
    meshes: List[Tuple[str, int, int]] = field(default_factory=list)
    opened_by: Optional[Tuple[str, int, str]] = None
    openers: List[Tuple[str, int, str]] = field(default_factory=list)
    # the names that must stay undefined in the project for ``opened_by`` to hold (a
    # mesh made by a callable defined outside it)
    opened_unless_defined: List[str] = field(default_factory=list)
    # the axes of meshes whose names are fixed (not a config field's), and each value a
    # config field gives the other meshes: (where it is written, its axes)
    fixed: List[str] = field(default_factory=list)
    variants: List[Tuple[str, List[str]]] = field(default_factory=list)
    # the axis names `vmap`/`pmap`/`nn.vmap` (any `axis_name=`) bind; None when one of
    # them is not known statically (then collectives are not checked)
    bound: Optional[List[str]] = field(default_factory=list)

    def bind(self, names: Optional[List[str]]) -> None:
        if names is None:
            self.bound = None
        elif self.bound is not None:
            self.bound += [n for n in names if n not in self.bound]

    @property
    def closed(self) -> bool:
        return self.opened_by is None and bool(self.meshes)

    def open(self, path: str, row: int, why: str, unless_defined: Sequence[str] = ()) -> None:
        self.openers.append((path, row, why))
        if self.opened_by is None:
            self.opened_by = (path, row, why)
            self.opened_unless_defined = list(unless_defined)


@dataclass(frozen=True)
class AxisUse:
    """A string of a spec JAX reads as a mesh axis name, and where."""

    axis: str
    spec: str  # the spec's source text
    row: int
    column: int  # 1-based
    end_row: int
    end_column: int
    in_expected_failure: bool


def _mesh_names_argument(call: ast.Call, last: str) -> Optional[ast.AST]:
    """The expression of the axis names a mesh constructor ``last`` (make_mesh, Mesh,
    AbstractMesh) is given; None where it cannot be read (``**kwargs``, a starred
    argument, none given)."""
    for k in call.keywords:
        if k.arg == "axis_names":
            return k.value
        if k.arg is None:  # **kwargs
            return None
    if len(call.args) > 1 and not any(isinstance(a, ast.Starred) for a in call.args[:2]):
        return call.args[1]
    if last == "AbstractMesh" and len(call.args) == 1:  # the old ((name, size), ...) form
        shape = call.args[0]
        if isinstance(shape, (ast.Tuple, ast.List)) and all(
                isinstance(e, ast.Tuple) and len(e.elts) == 2 for e in shape.elts):
            pairs = [e for e in shape.elts if isinstance(e, ast.Tuple)]
            return ast.Tuple(elts=[e.elts[0] for e in pairs], ctx=ast.Load())
    return None


def _says_mesh(name: str) -> bool:
    """Whether a callable's name says it makes or gets a mesh (``create_mesh``,
    ``get_device_mesh``, ``DeviceMesh``; not ``meshgrid``, ``logical_to_mesh_axes``)."""
    return name.endswith("Mesh") or _MAKES_MESH.search(name) is not None


_MAKES_MESH = re.compile(r"(?:^|_)(?:make|create|build|get|init|setup|new|load)\w*_mesh$"
                         r"|^mesh$", re.I)


def _project_tops(paths: Iterable[str]) -> Set[str]:
    """Every directory and module name on the project files' paths: an import whose top
    package is among them may be the project's own."""
    out: Set[str] = set()
    for p in paths:
        parts = os.path.normpath(os.path.abspath(p)).split(os.sep)
        out.update(parts[:-1])
        out.add(os.path.splitext(parts[-1])[0])
    return out


def _modules(paths: Iterable[str], overlay: Optional[Mapping[str, bytes]],
             tops: Set[str], texts: Optional[Dict[str, str]] = None) -> Iterator[Module]:
    for path in paths:
        if not path.endswith(".py"):
            continue
        text = texts[path] if texts is not None else read_text(path, overlay)
        if text is None or not _MAY_MATTER.search(text):
            continue
        parsed = parse(text)
        if parsed is None:
            continue
        yield Module(path, text, parsed.tree, tops)


def index_meshes(paths: Sequence[str], overlay: Optional[Mapping[str, bytes]] = None,
                 config_values: Optional[ConfigValues] = None,
                 memo_file: Optional[str] = None) -> MeshIndex:
    """The axis names of every mesh the project's Python files ``paths`` make;
    ``config_values``: the lists of strings the project's YAML/JSON configs write under
    each top-level key (``mesh_axes``), which a mesh built from ``config.mesh_axes``
    may have. The last index is kept (a warm worker's next task, a language server's
    next edit) while every file has the size, modification time and unsaved content it
    had; ``memo_file`` (in a cache directory) keeps it between runs the same way."""
    from .project_memo import read_memo, read_opener, state_of, write_memo
    key = state_of(paths, overlay, config_values)
    if _LAST_INDEX[0] == key:
        return _LAST_INDEX[1]
    digest = hashlib.sha256(repr(key).encode()).hexdigest()
    index = read_memo(memo_file, digest, MeshIndex) if memo_file else None
    if index is None and memo_file:
        opened = read_opener(memo_file)
        if opened is not None:
            index = _opener_unchanged(opened, key[0], overlay) or \
                _still_opened(opened.path, paths, overlay, config_values)
        if index is not None:
            write_memo(memo_file, digest, index, key[0])
    if index is None:
        index = _index(paths, overlay, config_values)
        if memo_file:
            write_memo(memo_file, digest, index, key[0])
    _LAST_INDEX[:] = [key, index]
    return index


_LAST_INDEX: list = [None, None]  # (the state of the files, their MeshIndex)


def _index(paths: Sequence[str], overlay: Optional[Mapping[str, bytes]],
           config_values: Optional[ConfigValues]) -> MeshIndex:
    index = MeshIndex()
    tops = _project_tops(paths)
    texts: Dict[str, str] = {}
    for path in paths:
        if path.endswith(".py"):
            text = read_text(path, overlay)
            if text is not None:
                texts[path] = text
    # the files that import a mesh framework first: a project built on one opens at once
    order = sorted((p for p in texts), key=lambda p: _FRAMEWORK_IMPORT.search(texts[p]) is None)
    resolver = Resolver(texts, tops, config_values)
    # first what opens the index by itself (a mesh framework, a mesh made outside the
    # project), then the meshes, whose names may take following a parameter to every
    # caller in the project: once opened, nothing is reported, and the rest is not read
    for resolve in (False, True):
        for path in order:
            m = resolver.module(path) if _MAY_MATTER.search(texts[path]) else None
            if m is None:
                continue
            _index_module(m, index, resolver, resolve)
            if index.opened_by is not None:
                return index
    return index


def _opener_unchanged(opened: Any, files: Sequence[tuple],
                      overlay: Optional[Mapping[str, bytes]]) -> Optional[MeshIndex]:
    """The last run's open index, where its opener is unchanged and no file changed
    since defines a name its reason needs undefined (``MeshIndex.opened_unless_defined``):
    then nothing else can close it, and no file need be read but those changed. None
    where that is not so (or the last run did not record the files' states)."""
    if not opened.files:
        return None
    now = {state[0]: state for state in files}
    if now.get(opened.path) != opened.files.get(opened.path) or not set(now) <= set(opened.files):
        return None  # the opener changed, or a new file may make its callee the project's
    changed = [p for p, state in now.items() if opened.files.get(p) != state]
    if opened.unless_defined and changed:
        defines = re.compile(r"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+(?:%s)\b"
                             % "|".join(re.escape(n) for n in opened.unless_defined), re.M)
        for p in changed:
            text = read_text(p, overlay) if p.endswith(".py") else None
            if text is not None and defines.search(text):
                return None
    index = MeshIndex()
    path, row, why = opened.opened_by
    index.open(path, row, why, unless_defined=opened.unless_defined)
    return index


def _still_opened(path: str, paths: Sequence[str], overlay: Optional[Mapping[str, bytes]],
                  config_values: Optional[ConfigValues]) -> Optional[MeshIndex]:
    """The index opened by ``path`` alone, where that file (the last run's opener) still
    makes a mesh no resolution can know: the whole index would be open too (nothing is
    reported), so the rest is not read. None where it does not."""
    if path not in paths or not path.endswith(".py"):
        return None
    texts: Dict[str, str] = {}
    for p in paths:  # ``defined_in_project`` looks through them all
        if p.endswith(".py"):
            text = read_text(p, overlay)
            if text is not None:
                texts[p] = text
    if path not in texts or not _MAY_MATTER.search(texts[path]):
        return None
    resolver = Resolver(texts, _project_tops(paths), config_values)
    m = resolver.module(path)
    if m is None:
        return None
    index = MeshIndex()
    _index_module(m, index, resolver, resolve=False)
    return index if index.opened_by is not None else None


def _index_module(m: Module, index: MeshIndex, resolver: Resolver, resolve: bool = True) -> None:
    """Index ``m``'s meshes and the axis names it binds; ``resolve=False``: only open the
    index where ``m`` makes a mesh whose names no resolution can know."""
    for top in m.imported_tops:
        if top in _MESH_FRAMEWORKS and top not in m.project_tops:
            index.open(m.path, 1, f"`{top}` builds meshes of its own (its configs name their "
                       "axes)")
    for node in m.calls:
        q = m.qual(node.func)
        last = q.rsplit(".", 1)[-1] if q else (
            node.func.attr if isinstance(node.func, ast.Attribute) else
            node.func.id if isinstance(node.func, ast.Name) else "")
        where = (m.path, node.lineno, char_column(m.text, node.lineno, node.col_offset))
        if m.is_jax(q) and last in ("make_mesh", "Mesh", "AbstractMesh"):
            if not resolve:
                continue
            names_expr = _mesh_names_argument(node, last)
            resolver.fields_read = []
            names = resolver.strings(m, names_expr) if names_expr is not None else None
            if names is None:
                index.open(m.path, node.lineno, f"the axis names of `{ast.unparse(node.func)}` "
                           "here are not known statically")
                continue
            index.meshes.append(where)
            from_fields = {n for attr in resolver.fields_read
                           for _, value in resolver.field_values.get(attr, []) for n in value}
            index.fixed += [n for n in names if n not in from_fields and n not in index.fixed]
            for attr in resolver.fields_read:
                for value in resolver.field_values.get(attr, []):
                    if value not in index.variants:
                        index.variants.append(value)
            for n in names:
                index.axes.setdefault(n, []).append(where)
        elif _says_mesh(last) and last not in _MESH_READERS:
            if m.is_jax(q):  # jtu.create_mesh, a test helper of JAX's
                index.open(m.path, node.lineno, f"`{ast.unparse(node.func)}` makes a mesh")
            elif not resolver.defined_in_project(last) and (
                    q is None or not (q.startswith(".") or q.split(".")[0] in m.project_tops)):
                index.open(m.path, node.lineno, f"`{ast.unparse(node.func)}`, defined outside "
                           "the project, may make a mesh", unless_defined=(last,))
        if resolve and (any(k.arg == "axis_name" for k in node.keywords) or (
                m.is_jax(q) and last in _BINDERS and len(node.args) > _BINDERS[last])):
            if last not in _COLLECTIVES:
                index.bind(_bound_names(m, node, last))
        if last == "update" and any(k.arg == "axis_names" for k in node.keywords):
            index.open(m.path, node.lineno, "a mesh's `update(axis_names=...)`")


def _bound_names(m: Module, call: ast.Call, last: str) -> Optional[List[str]]:
    """The axis names a `vmap`/`pmap`-like call binds (``axis_name=``, or its position);
    None when they are not literal strings."""
    expr = next((k.value for k in call.keywords if k.arg == "axis_name"), None)
    if expr is None and last in _BINDERS and len(call.args) > _BINDERS[last]:
        expr = call.args[_BINDERS[last]]
    if isinstance(expr, ast.Constant) and (expr.value is None or isinstance(expr.value, str)):
        return [expr.value] if expr.value is not None else []
    if isinstance(expr, (ast.Tuple, ast.List)) and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in expr.elts):
        return [str(e.value) for e in expr.elts if isinstance(e, ast.Constant)]
    return None


def collective_uses(m: Module) -> List[AxisUse]:
    """The literal axis names of ``m``'s ``jax.lax`` collectives."""
    out: List[AxisUse] = []
    for call in m.calls:
        q = m.qual(call.func)
        last = q.rsplit(".", 1)[-1] if q else ""
        if not m.is_jax(q) or last not in _COLLECTIVES:
            continue
        position = _COLLECTIVES[last]
        expr = next((k.value for k in call.keywords if k.arg == "axis_name"), None)
        if expr is None and position is not None and len(call.args) > position and \
                not any(isinstance(a, ast.Starred) for a in call.args[:position + 1]):
            expr = call.args[position]
        items = expr.elts if isinstance(expr, (ast.Tuple, ast.List)) else [expr]
        shown = " ".join((ast.get_source_segment(m.text, call) or ast.unparse(call)).split())
        if len(shown) > 60:
            shown = shown[:57] + "..."
        expected = None
        for item in items:
            if isinstance(item, ast.Constant) and isinstance(item.value, str):
                if expected is None:
                    expected = _in_expected_failure(m, call)
                end = item.end_lineno or item.lineno
                out.append(AxisUse(item.value, shown, item.lineno,
                                   char_column(m.text, item.lineno, item.col_offset), end,
                                   char_column(m.text, end, item.end_col_offset), expected))
    return out


def axis_uses(m: Module) -> List[AxisUse]:
    """The strings of ``m``'s specs that JAX reads as mesh axis names."""
    specs: Dict[int, ast.Call] = {}
    for node in m.calls:
        for arg in _spec_arguments(m, node):
            for spec in _specs_in(m, arg, 0):
                specs[id(spec)] = spec
    out: List[AxisUse] = []
    for spec in sorted(specs.values(), key=lambda s: (s.lineno, s.col_offset)):
        shown = ast.get_source_segment(m.text, spec) or ast.unparse(spec)
        expected = _in_expected_failure(m, spec)
        for entry in spec.args:
            items = entry.elts if isinstance(entry, ast.Tuple) else [entry]
            for item in items:
                if isinstance(item, ast.Constant) and isinstance(item.value, str):
                    end = item.end_lineno or item.lineno
                    out.append(AxisUse(item.value, " ".join(shown.split()), item.lineno,
                                       char_column(m.text, item.lineno, item.col_offset), end,
                                       char_column(m.text, end, item.end_col_offset), expected))
    return out


def _spec_arguments(m: Module, call: ast.Call) -> Sequence[ast.AST]:
    """The arguments of ``call`` that JAX reads as (trees of) shardings or specs."""
    q = m.qual(call.func)
    keywords = {k.arg: k.value for k in call.keywords if k.arg}
    if q in ("functools.partial",) and call.args:  # partial(jax.jit, in_shardings=...)
        q = m.qual(call.args[0])
        if not m.is_jax(q):
            return []
        last = q.rsplit(".", 1)[-1] if q else ""
        if last == "shard_map":
            return [keywords[k] for k in ("in_specs", "out_specs") if k in keywords]
        _, kws = _SPEC_ARGUMENTS.get(last, (None, ()))
        return [keywords[k] for k in kws if k in keywords]
    if not m.is_jax(q) or q is None:
        return []
    last = q.rsplit(".", 1)[-1]
    out = [keywords["out_sharding"]] if "out_sharding" in keywords else []
    if last == "shard_map":
        out += [keywords[k] for k in ("in_specs", "out_specs") if k in keywords]
        if "experimental" in q:  # shard_map(f, mesh, in_specs, out_specs)
            out += call.args[2:4]
        return out
    position, kws = _SPEC_ARGUMENTS.get(last, (None, ()))
    out += [keywords[k] for k in kws if k in keywords]
    if position is not None and len(call.args) > position and \
            not any(isinstance(a, ast.Starred) for a in call.args[:position + 1]):
        out.append(call.args[position])
    return out


def _specs_in(m: Module, expr: ast.AST, depth: int) -> Iterator[ast.Call]:
    """The spec calls ``expr`` is, holds in container literals, or is bound to."""
    if depth > MAX_DEPTH:
        return
    if m.is_spec(expr):
        assert isinstance(expr, ast.Call)
        yield expr
    elif isinstance(expr, (ast.Tuple, ast.List, ast.Set)):
        for e in expr.elts:
            yield from _specs_in(m, e, depth + 1)
    elif isinstance(expr, ast.Dict):
        for v in expr.values:
            yield from _specs_in(m, v, depth + 1)
    elif isinstance(expr, ast.IfExp):
        yield from _specs_in(m, expr.body, depth + 1)
        yield from _specs_in(m, expr.orelse, depth + 1)
    elif isinstance(expr, ast.Starred):
        yield from _specs_in(m, expr.value, depth + 1)
    elif isinstance(expr, ast.Name):
        for value in m.bound_values(expr) or ():
            yield from _specs_in(m, value, depth + 1)


def _in_expected_failure(m: Module, node: ast.AST) -> bool:
    """Whether ``node`` is inside ``with self.assertRaises...`` or ``pytest.raises``."""
    p = m.parents.get(id(node))
    while p is not None:
        if isinstance(p, (ast.With, ast.AsyncWith)):
            for item in p.items:
                e = item.context_expr
                f = e.func if isinstance(e, ast.Call) else e
                name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
                if name.startswith("assertRaises") or name == "raises":
                    return True
        p = m.parents.get(id(p))
    return False


def _no_mesh_has_it(m: Module, use: AxisUse, index: MeshIndex, collective: bool) -> Finding:
    close = [a for a in index.axes if _one_edit_apart(use.axis, a)]
    hint = f"Did you mean {close[0]!r}? " if len(close) == 1 else ""
    meshes = index.meshes
    where = ", ".join(f"{shown_path(p)}:{r}" for p, r, _ in meshes[:3]) + \
        (", ..." if len(meshes) > 3 else "")
    its = (f"its mesh ({where}) names" if len(meshes) == 1 else
           f"its {len(meshes)} meshes ({where}) name")
    if collective:
        message = (f"`{use.spec}` communicates over axis {use.axis!r}, which no mesh of the "
                   f"project has and no `vmap`/`pmap` of it binds: {its} "
                   f"{_axes(index.axes)}. Wherever it runs, JAX rejects the axis (NameError "
                   f"\"unbound axis name: {use.axis}\", or a ValueError naming it). {hint}Name "
                   "an axis of the project's meshes.")
    else:
        message = (f"`{use.spec}` names mesh axis {use.axis!r}, which no mesh of the "
                   f"project has: {its} {_axes(index.axes)}. Wherever this spec shards a "
                   f"value, JAX raises ValueError (\"Resource axis: {use.axis} of ... is "
                   f"not found in mesh\"). {hint}Name an axis of the project's meshes, or "
                   f"add {use.axis!r} to the mesh this value is sharded over.")
    related = tuple(Related("a mesh of the project", p, r, c, r, c) for p, r, c in meshes[:3])
    return Finding(CODE, NAME, message, ERROR, m.path, use.row, use.column, use.end_row,
                   use.end_column, related=related, in_expected_failure=use.in_expected_failure)


def _variant_warning(m: Module, use: AxisUse, index: MeshIndex, lacking: List[str]) -> Finding:
    """A spec's axis that the meshes built from a config field have only under some of
    the values the project writes for it."""
    having = [w for w, names in index.variants if use.axis in names]
    shown = ", ".join(shown_place(w) for w in lacking[:4]) + (", ..." if len(lacking) > 4 else "")
    message = (f"`{use.spec}` names mesh axis {use.axis!r}, which the project's meshes have "
               f"only under some of its configs: the mesh axes written at "
               f"{', '.join(shown_place(w) for w in having[:3])} have it, those at {shown} do "
               f"not. Under those, JAX raises ValueError (\"Resource axis: "
               f"{use.axis} of ... is not found in mesh\") wherever this spec shards a value. "
               f"Add {use.axis!r} to those configs' mesh axes, or choose the spec by the "
               "config's axes.")
    related = tuple(related_place(w, "a config without the axis") for w in lacking[:3])
    return Finding(CODE, NAME, message, WARNING, m.path, use.row, use.column, use.end_row,
                   use.end_column, related=tuple(r for r in related if r is not None),
                   in_expected_failure=use.in_expected_failure)


def _one_edit_apart(a: str, b: str) -> bool:
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1 and
                                  a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]])
    short, long_ = sorted((a, b), key=len)
    return any(long_[:i] + long_[i + 1:] == short for i in range(len(long_)))


def _axes(axes: Iterable[str]) -> str:
    return ", ".join(repr(a) for a in sorted(axes))


def check(report_paths: Sequence[str], project_paths: Sequence[str],
          overlay: Optional[Mapping[str, bytes]] = None,
          config_values: Optional[ConfigValues] = None,
          index: Optional[MeshIndex] = None, memo_file: Optional[str] = None) -> List[Finding]:
    """The SC114 findings of the files ``report_paths``, against the meshes of every
    project file of ``project_paths`` (``overlay``: unsaved contents by path). Nothing
    when the project's meshes are not all known. Suppression comments are not applied
    here (the caller's selection is)."""
    if index is None:
        index = index_meshes(distinct_paths(list(project_paths) + list(report_paths)), overlay,
                             config_values, memo_file)
    if not index.closed:
        return []
    out: List[Finding] = []
    tops = _project_tops(project_paths)
    for m in _modules(report_paths, overlay, tops):
        uses = [(u, False) for u in axis_uses(m)]
        if index.bound is not None:  # every name a vmap or pmap binds is known
            uses += [(u, True) for u in collective_uses(m) if u.axis not in index.bound]
        for use, collective in uses:
            if use.axis in index.axes:
                lacking = [w for w, names in index.variants if use.axis not in names]
                if use.axis not in index.fixed and lacking:
                    out.append(_variant_warning(m, use, index, lacking))
                continue
            out.append(_no_mesh_has_it(m, use, index, collective))
    return out
