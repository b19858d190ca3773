"""The sharding map of a file (``shardcheck specs``): every sharding site, the mesh-axis
spec the analyzer resolved for it (or why it is unknown), its logical names, its mesh.

The sites are the interpreter's own records (``analyzer.jaxapi.sites``); a site the
analyzer reaches in several contexts (a function called under two meshes, a loop body)
keeps its spec only where every analysis agrees. A sharding call the analyzer never
evaluates (code it does not reach) is listed too, as unknown, so the map is complete.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Set, Tuple

import libcst as cst


from .config import Config
from .engine import _deep_or_not_analysed, _model
from .events import ShardingSite
from .jaxapi.sites import ONLY_NONE
from .jaxapi.sites import is_device as _is_device
from .positions import Positions
from .project import Project
from .sources import source_of
from .syntax import child_nodes
from .values import MeshVal

NOT_REACHED = "not reached by the analyzer (code it does not evaluate)"

# The last name of a call that is a sharding site wherever the analyzer meets it
_SITE_CALLS = {
    "with_sharding_constraint": "with_sharding_constraint", "device_put": "device_put",
    "NamedSharding": "NamedSharding", "reshard": "reshard",
    "with_logical_constraint": "logical constraint",
    "with_logical_partitioning": "logical partitioning", "with_partitioning": "partitioning",
}


@dataclass(frozen=True)
class Site:
    """One sharding site of the map. ``spec``/``mesh`` print as JAX writes them (None
    when unknown); ``reason`` says why the spec is unknown (None when it is known)."""

    row: int
    column: int
    function: str  # "Trainer.step", "<module>"
    kind: str
    path: str  # the leaf's path in a tree of shardings, "" for a single sharding
    spec: Optional[str]
    logical: Optional[Tuple[Optional[str], ...]]
    mesh: Optional[str]
    reason: Optional[str]
    via: Optional[str] = None  # a site in this helper, as this call reaches it
    assumes: Tuple[str, ...] = ()  # config defaults read before it ("Config.field")


def format_mesh(mesh: Optional[MeshVal]) -> Optional[str]:
    """A mesh as the model prints it (``Mesh('data': 2, axis_types=(Explicit,))``), or
    with ``?`` for what is unknown of it; None for no known mesh."""
    if mesh is None or mesh.names is None:
        return None
    model = mesh.model() if mesh.types is not None else None
    return str(model) if model is not None else mesh.describe()


def sharding_sites(source: bytes | str, path: str = "<string>", config: Optional[Config] = None,
                   project: Optional[Project] = None) -> List[Site]:
    """The sharding sites of one file, in source order. Raises ``SyntaxError`` for source
    that does not decode or parse, ``NotAnalysed`` past the limits."""
    return _deep_or_not_analysed(_sharding_sites, source, path, config, project)


def _sharding_sites(source: bytes | str, path: str, config: Optional[Config],
                    project: Optional[Project]) -> List[Site]:
    model = _model(source, path, config or Config(), project, relevant=True)
    analysed = {node for node, info in model.funcs.items() if info.events is not None}
    functions = _FunctionsOfCalls(analysed)
    functions.walk(model.module)
    if not model.events.sites and not functions.unreached_site_calls:
        return []
    # the places of the sites only (a check's lazy positions: generating the whole
    # module's, as PositionProvider does, cost more than the analysis of most files)
    positions = Positions(model.module, source_of(model.module) or model.module.code,
                          model.rows)
    # a helper imported from another module: its own sites are that module's (listed
    # there); here, what each call made in this file reaches
    merged = _merge([s for s in model.events.sites if positions.get(s.node) is not None])
    reached = {key[0] for key in merged}
    for node, kind in functions.unreached_site_calls:
        if node not in reached:
            merged[(node, kind, "", None)] = (None, None, NOT_REACHED, None)
    if not merged:
        return []
    out = []
    assumed = _assumptions(model.events.sites)
    order: Dict[int, int] = {}  # as recorded: a rule table's leaves keep the table's order (first match wins)
    for (node, kind, leaf, via), (spec, mesh, reason, logical) in merged.items():
        pos = positions.get(node)
        out.append(Site(pos.start.line, pos.start.column + 1, functions.of.get(node, "<module>"),
                        kind, leaf, spec, logical, mesh, reason, via,
                        assumed.get((node, kind, leaf, via), ()) if spec is not None else ()))
        order[id(out[-1])] = len(order)
    return sorted(out, key=lambda s: (s.row, s.column, s.kind, s.path.split("[matching ")[0],
                                      s.via or "", order[id(s)]))


Merged = Tuple[Optional[str], Optional[str], Optional[str], Optional[Tuple[Optional[str], ...]]]


def _merge(sites: List[ShardingSite]) -> Dict[tuple, Merged]:
    """One entry per (node, kind, path): its spec where every analysis agrees. A site
    known leaf by leaf (a NamedSharding mapped over a tree) drops its record as a whole,
    made where the leaf was unknown."""
    others = {(s.node, s.kind, s.path, s.via) for s in sites if s.reason != ONLY_NONE}
    sites = [s for s in sites if s.reason != ONLY_NONE or (s.node, s.kind, s.path, s.via)
             not in others]  # None in one context says nothing where another resolves it
    by_leaf = {(s.node, s.kind) for s in sites if s.path}
    sites = [s for s in sites if s.path or s.spec is not None or (s.node, s.kind) not in by_leaf]
    out: Dict[tuple, Merged] = {}
    for s in sites:
        key = (s.node, s.kind, s.path, s.via)
        entry = (s.spec.describe() if s.spec is not None else None, format_mesh(s.mesh),
                 s.reason, s.logical)
        prev = out.get(key)
        if prev is None:
            out[key] = entry
            continue
        spec, reason = prev[0], prev[2]
        if prev[0] != entry[0]:
            if prev[0] is not None and entry[0] is not None:
                reason = (f"resolved differently where the analyzer reaches it: {prev[0]} "
                          f"and {entry[0]}")
            else:
                reason = reason or entry[2]
            spec = None
        mesh = prev[1] if prev[1] == entry[1] else None
        logical = prev[3] if prev[3] == entry[3] else None
        out[key] = (spec, mesh, reason, logical)
    # a helper's site as a call reaches it -> the helper's own site
    origin = {(s.node, s.kind, s.path, s.via): s.origin for s in sites if s.via is not None}
    return _caller_dependent(_drop_known_at_origin(out, origin), origin)


def _caller_dependent(merged: Dict[tuple, Merged], origin: Dict[tuple, Any]) -> Dict[tuple, Merged]:
    """A helper's own site that its calls resolve says so: its spec is its caller's."""
    resolved: Dict[tuple, int] = {}
    for key, entry in merged.items():
        at = origin.get(key)
        if at is not None and entry[0] is not None:
            # names a call passes may resolve as logical ones: the same site
            own = (at, key[1].replace("logical ", ""), key[2], None)
            resolved[own] = resolved.get(own, 0) + 1
    for own, n in resolved.items():
        if own not in merged:
            own = (own[0], "logical " + own[1], own[2], None)
        mine = merged.get(own)
        if mine is not None and mine[0] is None:
            calls = "1 call" if n == 1 else f"{n} calls"
            # calls that construct the class are in view, though none calls __init__ itself
            here = (mine[2] or "").replace(", which no call in view passes", "")
            merged[own] = (None, mine[1], f"set by the caller: resolved at {calls} in view, "
                           f"listed where they are made; here {here}", mine[3])
    return merged


def _assumptions(sites: List[ShardingSite]) -> Dict[tuple, Tuple[str, ...]]:
    """The config defaults each site's analyses read before it, all of them."""
    out: Dict[tuple, Tuple[str, ...]] = {}
    for s in sites:
        if s.assumes:
            key = (s.node, s.kind, s.path, s.via)
            out[key] = tuple(dict.fromkeys(out.get(key, ()) + s.assumes))
    return out


def _drop_known_at_origin(merged: Dict[tuple, Merged],
                          origin: Dict[tuple, Any]) -> Dict[tuple, Merged]:
    """A helper's site as one call reaches it says something only where that call
    resolves it and the helper's own analysis does not (or it is written in another
    file): the others go."""
    out = {}
    for key, entry in merged.items():
        at = origin.get(key)
        if at is not None and entry[0] is None:
            continue  # unknown at this call too: the helper's own site says why
        if at is not None:
            own = [v for k, v in merged.items() if k[0] is at and k[1] == key[1]
                   and k[2] == key[2] and k[3] is None]
            if own and own[0][0] is not None:
                continue
        out[key] = entry
    return out


def _is_none(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


class _FunctionsOfCalls:
    """The enclosing function (``Class.method``) of every call, and the calls that are
    sharding sites by their name in functions the interpreter never analysed (in an
    analysed one, a call it did not record is not the JAX API: a local namesake). One
    hand walk of the module (``syntax.child_nodes``): libcst's visitor took longer than
    the analysis of the file."""

    def __init__(self, analysed: Set[cst.CSTNode]) -> None:
        self.analysed = analysed
        self.of: Dict[cst.CSTNode, str] = {}
        self.unreached_site_calls: List[Tuple[cst.CSTNode, str]] = []

    def walk(self, module: cst.Module) -> None:
        # (node, the names of its enclosing classes and functions, its innermost
        # function or lambda)
        todo: List[Tuple[cst.CSTNode, Tuple[str, ...], Optional[cst.CSTNode]]] = [(module, (), None)]
        while todo:
            node, names, scope = todo.pop()
            t = type(node)
            if t is cst.Call:
                self._call(node, names, scope)  # type: ignore[arg-type]  # a Call
            inner_names, inner_scope = names, scope
            if t is cst.FunctionDef or t is cst.ClassDef:
                inner_names = names + (node.name.value,)  # type: ignore[attr-defined]
            if t is cst.FunctionDef or t is cst.Lambda:
                inner_scope = node
            # a definition's decorators count as its own (`@partial(shard_map, ...)`
            # is shown as the function's site)
            # pushed last to first: popped in source order (the order calls are listed)
            todo.extend(reversed([(child, inner_names, inner_scope)
                                  for child in child_nodes(node)]))

    def _call(self, node: cst.Call, names: Tuple[str, ...],
              scope: Optional[cst.CSTNode]) -> None:
        self.of[node] = ".".join(names) if names else "<module>"
        if scope is None or scope in self.analysed:
            return  # the module body always runs; an analysed function's sites are recorded
        f = node.func
        name = f.attr.value if isinstance(f, cst.Attribute) else f.value if isinstance(f, cst.Name) else ""
        kind = _SITE_CALLS.get(name)
        keywords = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
        if name == "device_put":
            target = keywords.get("device", node.args[1].value if len(node.args) > 1 else None)
            if target is None or _is_device(target) or _is_none(target):
                kind = None  # no placement named, or a device
        for key in (("in_shardings", "out_shardings") if name in ("jit", "pjit") else
                    ("in_specs", "out_specs") if name == "shard_map" else ()):
            if key in keywords and not _is_none(keywords[key]):
                self.unreached_site_calls.append((node, f"{name.replace('pjit', 'jit')} {key}"))
        if kind is not None:
            self.unreached_site_calls.append((node, kind))
