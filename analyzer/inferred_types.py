"""``shardcheck types`` and confirm's comparison: the sharding type inferred for each
array assignment of a file, and each call of a jitted function with the types of its
arguments (what ``PATH::NAME`` runs alone)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import List, Optional, Tuple

import libcst as cst

from sharding_types import PartialMesh

from .config import Config
from .engine import _deep_or_not_analysed, _model
from .positions import node_positions
from .project import Project


@dataclass(frozen=True)
class InferredType:
    """What the analyzer believes a name holds after an assignment."""

    row: int
    column: int
    name: str
    type: Optional[str]  # JAX's syntax, or None when (partly) unknown
    partial: str  # what is known, e.g. "?[8@x,?]", for unknown ones
    path: Optional[str] = None  # the file of an imported module's assignment; None: this file's


def infer_types(source: bytes | str, path: str = "<string>", config: Optional[Config] = None,
                project: Optional[Project] = None, imported: bool = False) -> List[InferredType]:
    """Every array-valued assignment and the type inferred for it (``shardcheck types``).

    A line analyzed more than once (a loop body, a function called in several
    contexts) keeps its type only if every analysis agrees. ``imported``: also those in
    the functions of project modules this file calls, analyzed under its calls (what
    ``confirm`` holds against a run of this file), each with its module's ``path``;
    they come after this file's. Raises ``SyntaxError`` for source that does not decode
    or parse, ``NotAnalysed`` past the limits."""
    return _deep_or_not_analysed(_infer_types, source, path, config, project, imported)


def _infer_types(source: bytes | str, path: str, config: Optional[Config],
                 project: Optional[Project], imported: bool = False) -> List[InferredType]:
    model = _model(source, path, config or Config(), project)
    by_node: dict = {}
    for rec in model.events.types:
        t = rec.value.sharding_type(rec.mesh_order)
        entry = (str(t) if t is not None else None, str(rec.value), rec.name)
        prev = by_node.get(rec.node)
        if prev is None:
            by_node[rec.node] = entry
        elif prev[0] != entry[0]:
            by_node[rec.node] = (None, prev[1] if prev[1] == entry[1] else "?", rec.name)
    if not by_node:
        return []
    positions = node_positions(model.module)
    out = []
    for node, (t, partial, nm) in by_node.items():
        pos, where = positions.get(node), None
        if pos is None and imported and project is not None:
            hit = project.locate(node)  # a node of a module read through an import
            if hit is not None:
                where, pos = hit[0], hit[1]
        if pos is None:
            continue
        out.append(InferredType(pos.start.line, pos.start.column + 1, nm, t, partial, where))
    return sorted(out, key=lambda r: (r.path is not None, r.path or "", r.row, r.column))


@dataclass(frozen=True)
class JitCallSite:
    """A call of a jitted function whose inputs the analyzer knows (``confirm --mesh``).

    ``target`` is the module-level name that holds the function; ``wrap``: it holds the
    plain function, jitted at the call (``jax.jit(f)(x)``). ``args``/``kwargs`` are
    JSON trees: ``{"type": "float32[16@data,64]"}``, ``{"const": 3}``, ``{"tuple": [...]}``,
    ``{"list": [...]}``, ``{"dict": [[key, tree], ...]}``. ``mesh``: the context mesh
    (names and types known; a size None where unknown). ``skipped`` says why the call
    cannot be re-traced ("" if it can).
    """

    rows: Tuple[int, ...]
    target: str
    wrap: bool
    args: Optional[list]
    kwargs: Optional[dict]
    mesh: Optional[PartialMesh]
    skipped: str = ""


def _tree(v, order) -> Optional[dict]:
    from .values import ArrayVal, Const, DictVal, TupleVal
    if isinstance(v, ArrayVal):
        t = v.sharding_type(order)
        return {"type": str(t)} if t is not None and not t.varying else None
    if isinstance(v, Const) and (v.value is None or isinstance(v.value, (bool, int, float, str))):
        return {"const": v.value}
    if isinstance(v, TupleVal):
        items = [_tree(i, order) for i in v.items]
        return None if None in items else {"list" if v.is_list else "tuple": items}
    if isinstance(v, DictVal):
        pairs = [[k, _tree(i, order)] for k, i in v.items]
        if any(t is None or not isinstance(k, (str, int)) for k, t in pairs):
            return None
        return {"dict": pairs}
    return None


def jit_calls(source: bytes | str, path: str = "<string>", config: Optional[Config] = None,
              project: Optional[Project] = None) -> List[JitCallSite]:
    """The jitted functions this file calls, with the inferred types of their inputs.

    Raises ``SyntaxError`` for source that does not parse."""
    return _deep_or_not_analysed(_jit_calls, source, path, config, project)


def _jit_calls(source: bytes | str, path: str, config: Optional[Config],
               project: Optional[Project]) -> List[JitCallSite]:
    from .values import FuncVal
    model = _model(source, path, config or Config(), project)
    positions = node_positions(model.module)
    module_vars = model.env.vars
    merged: dict = {}
    for call in model.events.jit_calls:
        pos = positions.get(call.node)
        if pos is None:
            continue
        jv = call.jit
        bound = [n for n, v in module_vars.items() if v is jv]
        target, wrap, why = "", False, ""
        if bound:
            target = bound[0]
        elif isinstance(jv.func, FuncVal):
            plain = [n for n, v in module_vars.items() if v is jv.func]
            target, wrap = (plain[0], True) if plain else (jv.func.name, False)
            if not plain:
                why = f"{jv.func.name} is not defined at module level"
            elif isinstance(jv.node, cst.Call) and len(jv.node.args) > 1:
                why = f"the options of jax.jit({plain[0]}, ...) are not reproduced"
        else:
            why = "the jitted callable is not a module-level function"
            kind = type(jv.func).__name__
            target = ("<shard_map>" if kind == "ShardMapVal" else "<grad>" if kind == "_GradVal"
                      else "<partial>" if kind == "PartialVal" else "<callable>")
        mesh = call.ctx.mesh if call.ctx.known else None
        mesh_d = None
        if mesh is not None and mesh.names is not None and mesh.types is not None:
            mesh_d = PartialMesh(mesh.names, mesh.sizes, mesh.types)
        elif not why:
            why = "the mesh in context at the call is unknown"
        order = mesh.names if mesh is not None else None
        args = [_tree(a, order) for a in call.args]
        kwargs = {k: _tree(v, order) for k, v in call.kwargs}
        if not why and (None in args or None in kwargs.values()):
            i = next((i for i, a in enumerate(args) if a is None), None)
            why = (f"the type of argument {i + 1} is unknown" if i is not None else
                   f"the type of keyword argument {next(k for k, v in kwargs.items() if v is None)}"
                   " is unknown")
        site = JitCallSite((pos.start.line,), target, wrap, None if why else args,
                           None if why else kwargs, mesh_d, why)
        key = json.dumps([target, wrap, site.args, site.kwargs, mesh_d, why], sort_keys=True,
                         default=str)
        prev = merged.get(key)
        merged[key] = site if prev is None else JitCallSite(
            tuple(sorted(set(prev.rows) | set(site.rows))), *(
                getattr(site, f) for f in ("target", "wrap", "args", "kwargs", "mesh", "skipped")))
    return sorted(merged.values(), key=lambda s: (s.rows, s.target))
