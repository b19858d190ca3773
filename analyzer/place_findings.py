"""Where a finding goes: the facts the rules proved, placed at the line a user would
change (in the checked file, or in a module it imports whose function it called), with
the related locations, fixes and the ``assertRaises`` blocks that expect them."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple

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
        # which imported module holds a node (from the function that holds it), so that
        # placing it looks through that module alone
        self.module_of: Optional[Callable[[cst.CSTNode], Optional[str]]] = None

    def at(self, node: Optional[cst.CSTNode]) -> Optional[Tuple[str, CodeRange]]:
        if node is None:
            return None
        r = self.own.get(node)
        if r is not None:
            return self.path, r
        if self.project is None:
            return None
        hit = self.project.locate(node, self.module_of(node) if self.module_of else None)
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


Notes = List[Tuple[cst.CSTNode, str]]
_MAX_HOPS = 8  # calls followed back from a finding in another module to the checked file
_SITES_NOTED = 3  # calls noted of one function, at most (all gave it the same values)


class CallSites:
    """What the checked file's analysis knows of the functions it analysed: which one
    holds a node, which module that is, and through which calls it got there."""

    def __init__(self, model: "Interpreter") -> None:
        self.model = model
        self._owners: Dict[int, Any] = {}

    def owner_of(self, node: cst.CSTNode) -> Any:
        """The analysed function (its ``FuncInfo``) directly holding ``node``."""
        if not self._owners:  # on first use
            for info in self.model.funcs.values():
                if info.events is not None:
                    for n in _own_nodes(info.val.node):
                        self._owners[id(n)] = info
        return self._owners.get(id(node))

    def module_of(self, node: cst.CSTNode, project: Project) -> Optional[str]:
        """The imported module that holds ``node``: the one its function was read in."""
        info = self.owner_of(node)
        return project.module_of_scope(info.val.scope) if info is not None else None

    def chain(self, node: cst.CSTNode, here: Callable[[cst.CSTNode], bool]) -> Notes:
        """The calls through which the analysis reached the function that holds
        ``node``: the function's call sites, then its caller's, hop by hop, up to the
        first hop whose call is in the file analysed (``here``). The values a finding
        inside depends on came through them: a function is analysed with what every
        call of it passes alike."""
        notes: Notes = []
        info, seen = self.owner_of(node), set()
        while info is not None and id(info) not in seen and len(notes) < _MAX_HOPS:
            seen.add(id(info))
            sites = [(caller, site) for caller, nodes in info.call_sites.items() for site in nodes]
            if not sites:
                break
            name = getattr(getattr(info.val.node, "name", None), "value", "the lambda")
            for _, site in sites[:_SITES_NOTED]:
                notes.append((site, f"`{name}` is called here, with the values this finding "
                                    "depends on"))
            if here(sites[0][1]):
                break  # the analysed file's own call: the user's line is found
            caller = sites[0][0]
            info = self.model.funcs.get(caller) if caller != "module" else None
        return notes


def _own_nodes(function: cst.CSTNode):
    """The nodes of ``function``'s body that no function nested in it holds (a hand
    walk: libcst's ``children`` rebuilds every node it visits)."""
    from .syntax import child_nodes
    todo = list(child_nodes(function))
    while todo:
        n = todo.pop()
        yield n
        if type(n) is not cst.FunctionDef and type(n) is not cst.Lambda:
            todo.extend(child_nodes(n))


def place(module: cst.Module, path: str, pending: List[Pending], raises_blocks: list,
          project: Optional[Project] = None, helper_specs: Optional[dict] = None,
          read: Optional[str] = None, rows: Optional[List[int]] = None,
          calls: Optional[CallSites] = None) -> List[Finding]:
    """Findings at their nodes' files and lines: a node in an imported module is
    reported there, once, not copied to this file, with the calls from this file that
    reached it as notes (``CallSites.chain``)."""
    places = _Places(module, path, project, read, rows)
    if calls is not None and project is not None:
        places.module_of = lambda n: calls.module_of(n, project)
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
        if calls is not None and where != path and p.node is not None:
            # how this file's analysis got there
            notes.extend(calls.chain(p.node, lambda n: (places.at(n) or ("",))[0] == path))
        if p.node in helper_specs:
            notes.append((helper_specs[p.node], "the spec is built here, by the helper this "
                          "line calls"))
        for node, note in notes:
            rat = places.at(node)
            if rat is not None:
                rp, rr = rat
                related.append(Related(note, rp, rr.start.line, rr.start.column + 1,
                                       rr.end.line, rr.end.column + 1))
        # one note per place and words: two calls through one line (a method set up from
        # two constructors there) are one note
        out.append(Finding(p.code, p.name, p.message, p.severity, where, row, col, erow, ecol,
                           fix, inside, tuple(dict.fromkeys(related))))
    return out


def _edit(r, content: str) -> Tuple[int, int, int, int, str]:
    """A fix's edit of the text at ``r`` (a ``CodeRange``); ``DELETE_LINE``: its lines."""
    from .codemods import DELETE_LINE
    if content == DELETE_LINE:
        return (r.start.line, 1, r.end.line + 1, 1, "")
    return (r.start.line, r.start.column + 1, r.end.line, r.end.column + 1, content)
