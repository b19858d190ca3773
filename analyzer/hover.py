"""The sharding type of the expression at a position: the language server's hover.

The module is analysed as ``check`` analyses it, with the interpreter's expression
evaluation traced: every expression that evaluates to a JAX array keeps the value it
had, in each analysis (a function called in several mesh contexts is analysed once per
context). The hover shows the innermost such expression around the cursor.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import libcst as cst

from .config import Config
from .project import Project


@dataclass(frozen=True)
class HoverType:
    """What the hover shows: the expression's span (1-based rows and columns, columns
    in code points, the end exclusive), its source text and its types, one per
    distinct analysis (a type string as ``jax.typeof`` prints it, or what is known of
    it when its sharding is not fully known)."""

    row: int
    column: int
    end_row: int
    end_column: int
    code: str
    types: Tuple[str, ...]
    known: bool  # the types are whole sharding types (else what is known of one)

    def markdown(self) -> str:
        lines = ["```python", f"{self.code}: {' | '.join(self.types)}", "```"]
        if len(self.types) > 1:
            lines.append(f"The {len(self.types)} analyses of this code (one per mesh context "
                         "or call) give different types.")
        if not self.known:
            lines.append("Part of this type is unknown to shardcheck (`?`): unknown stays "
                         "unknown and is never an error.")
        return "\n".join(lines)


def _keep(sink: Dict[cst.CSTNode, List[Tuple[str, bool]]], node: cst.CSTNode, value,
          mesh_order) -> None:
    t = value.sharding_type(mesh_order)
    entry = (str(t), True) if t is not None else (str(value), False)
    seen = sink.setdefault(node, [])
    if entry not in seen:
        seen.append(entry)


def _trace(sink: Dict[cst.CSTNode, List[Tuple[str, bool]]]):
    """A hook for ``analyze``: the interpreter's ``ev`` wrapped to keep array values."""
    from .values import ArrayVal

    def install(it) -> None:
        plain = it.ev

        def ev(e, env, ctx):
            v = plain(e, env, ctx)
            if e is not None and isinstance(v, ArrayVal) and not v.numpy:
                mesh = ctx.mesh if ctx.known and ctx.mesh is not None else v.mesh
                _keep(sink, e, v, mesh.names if mesh is not None else None)
            return v
        it.ev = ev  # this instance only: check's analysis keeps the plain method
    return install


class HoverIndex:
    """Every array expression of one analysis of a module, with its span and types:
    built once per version of a document, then asked for each hover."""

    def __init__(self, entries: List[Tuple[Tuple[int, int], Tuple[int, int], str,
                                           Tuple[str, ...], bool]]) -> None:
        self.entries = entries  # (start, end, code, types, known); 1-based, code points

    def at(self, row: int, column: int) -> Optional[HoverType]:
        """The innermost entry spanning (``row``, ``column``), or None."""
        best = None
        for start, end, code, types, known in self.entries:
            if not start <= (row, column) <= end:
                continue
            size = (end[0] - start[0], end[1] - start[1] if end[0] == start[0] else end[1])
            if best is None or size < best[0]:
                best = (size, HoverType(start[0], start[1], end[0], end[1], code, types, known))
        return best[1] if best is not None else None


def index(source: str, path: str, config: Optional[Config] = None,
          project: Optional[Project] = None) -> HoverIndex:
    """The hover index of ``source`` (empty for a source that does not parse or is too
    deep to analyse)."""
    from .deep import degrading_deep_statements
    from .sources import LibcstLimitation, SourceError
    try:
        return degrading_deep_statements(_index, source, path, config or Config(), project)
    except (SyntaxError, SourceError, LibcstLimitation, RecursionError, MemoryError):
        return HoverIndex([])


def type_at(source: str, path: str, row: int, column: int, config: Optional[Config] = None,
            project: Optional[Project] = None) -> Optional[HoverType]:
    """The type of the innermost array expression that spans (``row``, ``column``)
    (1-based, code points), or None: no array expression there, or a source that does
    not parse or is too deep to analyse."""
    return index(source, path, config, project).at(row, column)


def _index(source: str, path: str, config: Config, project: Optional[Project]) -> HoverIndex:
    from .engine import analyze, parse_source
    from .positions import node_positions
    from .project import module_name_for
    import os
    module = parse_source(source, path)
    sink: Dict[cst.CSTNode, List[Tuple[str, bool]]] = {}
    name = module_name_for(path) if os.path.isfile(path) else ""
    it = analyze(module, name, config, project, trace=_trace(sink))
    for rec in it.events.types:  # assignment targets (`y = ...`: the y)
        _keep(sink, rec.node, rec.value, rec.mesh_order)
    if not sink:
        return HoverIndex([])
    positions = node_positions(module)
    render = cst.Module([]).code_for_node
    entries = []
    for node, seen in sink.items():
        pos = positions.get(node)
        if pos is None:
            continue
        code = render(node)
        if "\n" in code or len(code) > 60:
            code = code.split("\n")[0][:57] + "..."
        # a context that knows less (the function analysed with no caller's arguments) is
        # left out where another knows the whole type
        full = tuple(shown for shown, whole in seen if whole)
        entries.append(((pos.start.line, pos.start.column + 1), (pos.end.line, pos.end.column + 1),
                        code, full or tuple(shown for shown, _ in seen), bool(full)))
    return HoverIndex(entries)
