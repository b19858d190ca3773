"""Nesting deeper than libcst can walk on this Python: those statements become unknown.

libcst prints a tree (``code_for_node``, and the position metadata every finding
needs) by recursion through calls with ``**kwargs``, which CPython 3.12 counts against
its fixed C recursion limit, not ``sys.setrecursionlimit``: on 3.12.1 a chain of about
740 links (a sum, an ``and`` chain, an attribute chain, ``elif``s) raises
``RecursionError``, however large the thread's stack. CPython itself compiles such
files, so they are not syntax errors. Rather than skipping the whole file, the
statements nested that deep are replaced by ``pass`` on the same rows (so every other
finding keeps its line) and analysed as unknown; the rest of the file is checked as
usual. Python 3.11 counts those frames against the raised Python limit and needs none
of this.
"""

from __future__ import annotations

import ast
import io
import sys
import threading
from typing import List, Optional, Tuple

from .sources import SourceError, decode_source

# Nesting limits tried in turn: the first leaves everything libcst can print on 3.12
# (measured: ~736 links of `+`, `and`, `.attr`, `elif`); the second leaves room for
# statements that also sit deep in blocks.
LIMITS = (500, 150)

_CHAINS = (ast.BinOp, ast.UnaryOp, ast.Attribute, ast.Subscript, ast.Call, ast.Starred,
           ast.Await, ast.IfExp, ast.Lambda, ast.NamedExpr)


def from_recursion(exc: BaseException) -> bool:
    """Whether ``exc`` is, or was raised while handling, a ``RecursionError`` (libcst's
    position provider turns one into a chain of ``KeyError``s as it unwinds)."""
    seen = set()
    e: Optional[BaseException] = exc
    while e is not None and id(e) not in seen:
        if isinstance(e, RecursionError):
            return True
        seen.add(id(e))
        e = e.__cause__ or e.__context__
    return False


def expression_depth(node: ast.AST) -> int:
    """How deep libcst nests ``node``'s expressions (walked without recursion). A flat
    ``a and b and c`` in ``ast`` is a chain of binary operations in libcst."""
    deepest = 0
    stack: List[Tuple[ast.AST, int]] = [(node, 0)]
    while stack:
        n, d = stack.pop()
        deepest = max(deepest, d)
        if isinstance(n, ast.BoolOp):
            step = len(n.values) - 1
        elif isinstance(n, (ast.List, ast.Tuple, ast.Set, ast.Dict)) or isinstance(n, _CHAINS):
            step = 1
        else:
            step = 0
        for child in ast.iter_child_nodes(n):
            if not isinstance(child, ast.stmt):
                stack.append((child, d + step))
    return deepest


def _own_depth(stmt: ast.stmt) -> Tuple[int, List[ast.stmt]]:
    """(how deep the statement itself nests, counting an ``elif`` chain as one
    statement; the statements in its blocks, to look at on their own)."""
    depth = 0
    inner: List[ast.stmt] = []
    link = 0
    s: ast.stmt = stmt
    while True:
        depth = max(depth, link + expression_depth(s))
        for field in ("body", "handlers", "finalbody", "cases"):
            inner.extend(getattr(s, field, None) or [])
        orelse = getattr(s, "orelse", None) or []
        if isinstance(s, ast.If) and len(orelse) == 1 and isinstance(orelse[0], ast.If):
            s, link = orelse[0], link + 1
            continue
        inner.extend(orelse)
        return depth, inner


def _span(stmt: ast.stmt, lines: List[str]) -> Tuple[int, int, int, int]:
    """(first row, first column, last row, end column) of ``stmt`` in characters, from
    its decorators on; ``ast`` counts columns in UTF-8 bytes."""
    row, col = stmt.lineno, stmt.col_offset
    for dec in getattr(stmt, "decorator_list", None) or []:
        if dec.lineno < row or (dec.lineno == row and dec.col_offset - 1 < col):
            row, col = dec.lineno, dec.col_offset - 1
    end_row = stmt.end_lineno or row
    end_col = stmt.end_col_offset if stmt.end_col_offset is not None else len(
        lines[end_row - 1].encode())

    def chars(r: int, c: int) -> int:
        return len(lines[r - 1].encode()[:c].decode("utf-8", errors="ignore"))

    return row, chars(row, col), end_row, chars(end_row, end_col)


def deep_statements(tree: ast.Module, limit: int) -> List[ast.stmt]:
    """The outermost statements nested deeper than ``limit``, with no recursion."""
    found: List[ast.stmt] = []
    stack: List[ast.stmt] = list(reversed(tree.body))
    while stack:
        stmt = stack.pop()
        depth, inner = _own_depth(stmt)
        if depth > limit:
            found.append(stmt)
        else:
            stack.extend(reversed(inner))
    return found


def blank_deep_statements(text: str, limit: int) -> Optional[str]:
    """``text`` with each statement nested deeper than ``limit`` replaced by ``pass``
    on its first row and blank rows after it, so every other statement keeps its row
    and column; None when no statement is that deep (or ``text`` does not parse)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    found = deep_statements(tree, limit)
    if not found:
        return None
    # rows as ast counts them (\n, \r\n, \r), not str.splitlines (which also splits at \f)
    lines = io.StringIO(text, newline="").readlines()
    for stmt in sorted(found, key=lambda s: s.lineno, reverse=True):
        row, col, end_row, end_col = _span(stmt, lines)
        prefix, suffix = lines[row - 1][:col], lines[end_row - 1][end_col:]
        rows = end_row - row
        if rows == 0 or (suffix.strip() and not suffix.lstrip().startswith("#")):
            # what follows on the last row (`...; z = 3`) moves up to the first row
            new = [prefix + "pass" + suffix] + ["\n"] * rows
        else:
            new = [prefix + "pass\n"] + ["\n"] * (rows - 1) + [suffix]
        lines[row - 1:end_row] = new
    return "".join(lines)


# The analysis recurses a few Python frames per level of nesting, and CPython compiles
# up to ~3,000 levels (a sum, an attribute chain); its flat chains (10,000 `and`s) take
# libcst's native parser deeper than a main thread's 8 MB stack.
_DEEP_RECURSION_LIMIT = 60_000
_DEEP_STACK_BYTES = 512 * 1024 * 1024
_STACK_LOCK = threading.Lock()


def on_deep_stack(fn, *args):
    """``fn(*args)`` in a thread with a large stack and a high recursion limit.

    Nesting CPython compiles (a 1,000-term sum, a 10,000-term ``and``) is deeper than
    the default recursion limit allows the analysis, and than the main thread's stack
    allows libcst's native parser (which would crash the process). Exceptions are
    re-raised in the caller's thread."""
    result: list = []
    errors: list = []

    def run() -> None:
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(max(old, _DEEP_RECURSION_LIMIT))
        try:
            result.append(fn(*args))
        except BaseException as exc:  # re-raised below, in the caller's thread
            errors.append(exc)
        finally:
            sys.setrecursionlimit(old)

    with _STACK_LOCK:
        old_size = threading.stack_size()
        try:
            threading.stack_size(_DEEP_STACK_BYTES)
            worker: Optional[threading.Thread] = threading.Thread(
                target=run, name="shardcheck-deep", daemon=True)
            worker.start()  # type: ignore[union-attr]  # set on the branch that runs it
        except (RuntimeError, ValueError, MemoryError):  # no such stack here: the caller's
            worker = None
        finally:
            threading.stack_size(old_size)
    if worker is None:
        run()
    else:
        worker.join()
    if result:
        return result[0]
    raise errors[0]


def degrading_deep_statements(fn, source: bytes | str, *args):
    """``fn(source, *args)`` on a deep stack; where that runs out of recursion (libcst on
    Python 3.12: see ``deep``), again with the statements nested too deep for it made
    unknown, so the rest of the file is still analysed. ``RecursionError`` when even
    that fails."""
    try:
        return on_deep_stack(fn, source, *args)
    except BaseException as e:
        if not from_recursion(e):
            raise
        first = e
    try:
        text = source if isinstance(source, str) else decode_source(source)
    except SourceError:
        raise RecursionError("nested too deeply to analyse") from first
    for limit in LIMITS:
        flat = blank_deep_statements(text, limit)
        if flat is None:
            continue
        try:
            return on_deep_stack(fn, flat, *args)
        except BaseException as e:
            if not from_recursion(e):
                raise
    raise RecursionError("nested too deeply to analyse") from first
