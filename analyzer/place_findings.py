"""Where a finding goes: the facts the rules proved, placed at the line a user would
change (in the checked file, or in a module it imports whose function it called), with
the related locations, fixes and the ``assertRaises`` blocks that expect them."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, List, Optional, Tuple

import libcst as cst

from .ftypes import Finding, Fix, Pending, Related
from .positions import Positions, node_positions

if TYPE_CHECKING:
    from libcst.metadata import CodeRange

    from .interp.model import Interpreter
    from .project import Project


class _Places:
    """Where nodes are: in the checked module, or in a module it imports (a function of
    another file that this file calls is analyzed here, under this file's contexts)."""

    def __init__(self, module: cst.Module, path: str, project: Optional[Project],
                 read: Optional[str] = None, rows: Optional[List[int]] = None):
        # the places of the few nodes asked about, unless the text read is not known
        self.own = Positions(module, read, rows) if read is not None else node_positions(module)
        self.path = path
        self.project = project

    def at(self, node: Optional[cst.CSTNode]) -> Optional[Tuple[str, CodeRange]]:
        if node is None:
            return None
        r = self.own.get(node)
        if r is not None:
            return self.path, r
        hit = self.project.locate(node) if self.project is not None else None
        if hit is None:
            return None
        # spelled as the checked file is: relative to the working directory, or absolute
        where = hit[0] if os.path.isabs(self.path) else os.path.relpath(hit[0])
        return where, hit[1]


def helper_specs(model: "Interpreter") -> dict:
    """Call node -> the P(...) inside the helper function it called, for every spec a
    helper built (a finding about such a spec points at the call, and notes the helper)."""
    out = dict(model.helper_origins)
    for use in list(model.events.spec_uses) + list(model.events.axis_typed):
        if use.spec.built_at is not None and use.spec.node is not None:
            out[use.spec.node] = use.spec.built_at
    return out


def place(module: cst.Module, path: str, pending: List[Pending], raises_blocks: list,
           project: Optional[Project] = None, helper_specs: Optional[dict] = None,
           read: Optional[str] = None, rows: Optional[List[int]] = None) -> List[Finding]:
    """Findings at their nodes' files and lines: a node in an imported module is
    reported there, once, not copied to this file."""
    places = _Places(module, path, project, read, rows)
    helper_specs = helper_specs or {}
    ranges: List[Tuple[str, int, int]] = []
    for w in raises_blocks:
        at = places.at(w)
        if at is not None:
            ranges.append((at[0], at[1].start.line, at[1].end.line))
    out = []
    for p in pending:
        at = places.at(p.node)
        where, r = at if at is not None else (path, None)
        row, col, erow, ecol = (r.start.line, r.start.column + 1, r.end.line, r.end.column + 1) if r else (1, 1, 1, 1)
        fix = None
        fat = places.at(p.fix_node) if p.fix_node is not None else at
        if p.fix_content is not None and fat is not None and fat[0] == where:
            more = [(places.at(n), text) for n, text in p.fix_more]
            if all(m is not None and m[0] == where for m, _ in more):  # all edits, or no fix
                first, *rest = [_edit(fat[1], p.fix_content)] + \
                    [_edit(m[1], text) for m, text in more]  # type: ignore[index]  # checked above
                fix = Fix(p.fix_message or "apply the suggested replacement", *first,
                          "unsafe" if p.fix_unsafe else "safe", tuple(rest))
        inside = any(f == where and a <= row <= b for f, a, b in ranges)
        fails = places.at(p.fails_at) if p.fails_at is not None else None
        if fails is not None:  # a spec written outside the block, used inside it
            inside = inside or any(f == fails[0] and a <= fails[1].start.line <= b
                                   for f, a, b in ranges)
        related = []
        notes = list(p.related)
        if p.node in helper_specs:
            notes.append((helper_specs[p.node], "the spec is built here, by the helper this "
                          "line calls"))
        for node, note in notes:
            rat = places.at(node)
            if rat is not None:
                rp, rr = rat
                related.append(Related(note, rp, rr.start.line, rr.start.column + 1,
                                       rr.end.line, rr.end.column + 1))
        out.append(Finding(p.code, p.name, p.message, p.severity, where, row, col, erow, ecol,
                           fix, inside, tuple(related)))
    return out


def _edit(r, content: str) -> Tuple[int, int, int, int, str]:
    """A fix's edit of the text at ``r`` (a ``CodeRange``); ``DELETE_LINE``: its lines."""
    from .codemods import DELETE_LINE
    if content == DELETE_LINE:
        return (r.start.line, 1, r.end.line + 1, 1, "")
    return (r.start.line, r.start.column + 1, r.end.line, r.end.column + 1, content)
