"""Where nodes are in the source: libcst's ``PositionProvider`` metadata.

``node_positions`` computes every node's range at once: the provider generates the
module's code, recording ranges on the way. That costs more than the parse itself (1.4
to 1.6 times libcst's parse of the same file, measured on jax's sources), while a check
needs the places of a few nodes: its findings', their fixes' and notes'.

``Positions`` gives the same ranges for the nodes asked about, generating only the
statements that hold them. A *unit* is a statement of the module, or of the body of a
class or function (so a test class's one failing method is generated, not the class).
Each unit's code is generated from line 1 at its indentation, and moved to where
Python's ``ast`` puts the statement's first token (``lineno``: the ``def``/``class``
keyword of a decorated definition, as libcst's syntactic range starts there too). The
move is checked: the generated code must be the text's, character for character, from
that line (``pyast`` reads type parameter syntax newer than the running Python). A unit
that fails the check, text ``ast`` cannot read (other newer syntax, such as PEP 701
f-strings on 3.11), a module whose statements ``ast`` counts otherwise, and a node
outside every unit (the module itself, its header and footer comments) fall back to
``node_positions``, so every answer is the provider's.

``MetadataWrapper.resolve(PositionProvider)`` also walks the whole tree once more for
the batchable providers it resolves alongside, even when there are none (libcst 1.x):
about half of its cost. ``node_positions`` runs the provider alone.
"""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

if TYPE_CHECKING:
    import libcst as cst
    from libcst.metadata import CodeRange


def node_positions(module: cst.Module) -> Mapping[cst.CSTNode, CodeRange]:
    """Node -> its ``CodeRange`` (1-based lines, 0-based columns), as ``PositionProvider``
    gives it."""
    from libcst.metadata import MetadataWrapper, PositionProvider
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    try:
        return PositionProvider()._gen(wrapper)  # type: ignore[return-value]  # CodeRanges, never lazy
    except AttributeError:  # a libcst without the provider's one-step entry point
        return wrapper.resolve(PositionProvider)


_NEWLINE = re.compile(r"\r\n?|\n")  # lines as libcst's position provider counts them


class _Mismatch(Exception):
    """The module's statements and ``ast``'s do not pair up."""


class _Unit:
    __slots__ = ("node", "line", "indents", "ranges", "shift")

    def __init__(self, node: Any, line: int, indents: Tuple[str, ...]):
        self.node = node
        self.line = line  # where ast puts its first token
        self.indents = indents
        self.ranges: Optional[Mapping[Any, Any]] = None
        self.shift = 0


_WHOLE = _Unit(None, 0, ())  # the owner of nodes no unit holds: the provider answers


class Positions:
    """``node_positions(module)``'s ranges, for the nodes asked about (``get``), generating
    only the units that hold them. ``text`` is the text ``module`` was parsed from;
    ``rows``, when given, the row of each of its lines in the file (``relevance.kept``
    leaves lines out): the ranges are given in the file's rows."""

    def __init__(self, module: cst.Module, text: str, rows: Optional[Sequence[int]] = None):
        self._module = module
        self._text = text
        self._rows = rows
        self._owner: Dict[int, _Unit] = {id(module): _WHOLE}
        self._walk: Optional[Iterator[None]] = None  # collects one unit's nodes per step
        self._full: Optional[Mapping[Any, Any]] = None
        self._starts: List[int] = []
        self.fallbacks = 0  # how often the provider answered for the whole module (tests)

    def get(self, node: Any, default: Any = None) -> Any:
        r = self._get(node, default)
        if self._rows is None or r is None or r is default:
            return r
        return _on_rows(r, self._rows)

    def _get(self, node: Any, default: Any) -> Any:
        if self._full is not None:
            return self._full.get(node, default)
        try:
            unit = self._owner_of(node)
        except (_Mismatch, SyntaxError, ValueError, RecursionError, MemoryError,
                OverflowError):
            return self._whole().get(node, default)
        if unit is None:
            from .syntax import is_layout
            if is_layout(type(node)):  # not walked
                return self._whole().get(node, default)
            return default
        if unit is _WHOLE or (unit.ranges is None and not self._generate(unit)):
            return self._whole().get(node, default)
        r = unit.ranges.get(node)  # type: ignore[union-attr]  # generated above
        if r is None:
            return default
        return _moved(r, unit.shift) if unit.shift else r

    def _owner_of(self, node: Any) -> Optional[_Unit]:
        """The unit holding ``node``, walking the units in order until one does (a node
        of another module walks them all)."""
        unit = self._owner.get(id(node))
        if unit is not None:
            return unit
        if self._walk is None:
            from .pyast import parse
            parsed = parse(self._text)  # rows only: pyast's stand-in will do
            if parsed is None:
                raise _Mismatch("ast cannot read the text")
            tree = parsed.tree
            m = self._module
            for extra in (*m.header, *m.footer):
                _collect(extra, _WHOLE, self._owner)
            self._walk = _block(m.body, tree.body, (), m.default_indent, self._owner)
        key = id(node)
        for _ in self._walk:
            unit = self._owner.get(key)
            if unit is not None:
                return unit
        return self._owner.get(key)

    def _whole(self) -> Mapping[Any, Any]:
        if self._full is None:
            self.fallbacks += 1
            self._full = node_positions(self._module)
        return self._full

    def _generate(self, unit: _Unit) -> bool:
        """Generate ``unit``'s code and ranges from line 1 and move them to its line;
        False when the code is not the text's there."""
        from libcst.metadata import PositionProvider
        from libcst.metadata.position_provider import PositionProvidingCodegenState
        m = self._module
        provider = PositionProvider()
        state = PositionProvidingCodegenState(default_indent=m.default_indent,
                                              default_newline=m.default_newline,
                                              provider=provider)
        state.indent_tokens = list(unit.indents)
        unit.node._codegen(state)
        ranges: Mapping[Any, Any] = provider._computed  # CodeRanges, never lazy
        shift = unit.line - ranges[unit.node].start.line
        if not self._starts:
            self._starts = [0] + [x.end() for x in _NEWLINE.finditer(self._text)]
        if not 0 <= shift < len(self._starts):
            return False
        code = "".join(state.tokens)
        at = self._starts[shift]
        if self._text[at:at + len(code)] != code:
            # the file's last statement, without the newline the text does not end with
            last = len(state.tokens[-1]) if state.tokens else 0
            if m.has_trailing_newline or not last or self._text[at:] != code[:-last]:
                return False
        unit.ranges, unit.shift = ranges, shift
        return True


def _block(stmts: Sequence[Any], trees: Sequence[ast.stmt], indents: Tuple[str, ...],
           default_indent: str, owner: Dict[int, _Unit]) -> Iterator[None]:
    """The units of one block, one per step: ``stmts`` (libcst) paired in order with
    ``trees`` (ast, which makes one statement of each ``;``-separated part of a line)."""
    import libcst as cst
    i = 0
    for s in stmts:
        if i >= len(trees):
            raise _Mismatch
        tree = trees[i]
        i += len(s.body) if isinstance(s, cst.SimpleStatementLine) else 1
        unit = _Unit(s, tree.lineno, indents)
        body = getattr(s, "body", None)
        if isinstance(s, (cst.FunctionDef, cst.ClassDef)) and isinstance(body, cst.IndentedBlock) \
                and isinstance(tree, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            _collect(s, unit, owner, inner=body)  # its header; its block's own parts
            for part in (body.header, *body.footer):
                _collect(part, unit, owner)
            yield None
            indent = default_indent if body.indent is None else body.indent
            yield from _block(body.body, tree.body, indents + (indent,), default_indent, owner)
        else:
            _collect(s, unit, owner)
            yield None
    if i != len(trees):
        raise _Mismatch


def _collect(root: Any, unit: _Unit, owner: Dict[int, _Unit], inner: Any = None) -> None:
    """Every node under ``root`` but whitespace and comments belongs to ``unit``;
    ``inner`` (a definition's block) is recorded but not entered."""
    from .syntax import walk
    for node in walk(root, layout=False, stop=inner):
        owner[id(node)] = unit


def _moved(r: Any, lines: int) -> Any:
    from libcst.metadata import CodePosition, CodeRange
    return CodeRange(CodePosition(r.start.line + lines, r.start.column),
                     CodePosition(r.end.line + lines, r.end.column))


def _on_rows(r: Any, rows: Sequence[int]) -> Any:
    """``r`` with each line ``n`` of the text read moved to ``rows[n - 1]``, the file's
    row (a line past the last, such as the module's end, keeps its distance from it)."""
    from libcst.metadata import CodePosition, CodeRange

    def row(n: int) -> int:
        if 0 < n <= len(rows):
            return rows[n - 1]
        return (rows[-1] if rows else 0) + n - len(rows)
    return CodeRange(CodePosition(row(r.start.line), r.start.column),
                     CodePosition(row(r.end.line), r.end.column))
