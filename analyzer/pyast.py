"""Python's own ``ast`` of a source, on a Python older than the source's syntax too.

``relevance`` (which statements to parse) and ``positions`` (which line each statement
is on) read a file with ``ast``, which is much cheaper than libcst. On Python 3.11 a
file written with Python 3.12's type parameters (``def f[T](x: T)``, ``class C[T]``,
``type Alias[T] = ...``; PEP 695) does not parse, though libcst (which the check runs
on) reads it; nor, on 3.12, does a default (``[T = int]``, PEP 696). ``parse`` then
parses a *stand-in*: the same text with each type parameter list blanked to spaces (a
list over several rows ends each but its last with a ``\\`` continuation) and ``type
Alias`` written ``Alias`` followed by spaces, so every other token keeps its row and
column and every statement its lines. What the stand-in loses is what the type
parameter lists read (bounds, defaults, constraints): ``Parsed.erased`` gives those per
row, for a reader that must not lose a name.

Anything else the running Python rejects (PEP 701 f-strings on 3.11, a real syntax
error) is still rejected: ``parse`` returns None.
"""

from __future__ import annotations

import ast
import io
import bisect
import re
import sys
import warnings
from typing import Dict, List, Optional, Set, Tuple

_ERRORS = (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError)


class Parsed:
    """A module's ``ast`` (``tree``) and, when it is a stand-in's, the names each row's
    blanked type parameter lists read (``erased``: row -> names)."""

    __slots__ = ("tree", "erased")

    def __init__(self, tree: ast.Module, erased: Optional[Dict[int, Set[str]]] = None) -> None:
        self.tree = tree
        self.erased: Dict[int, Set[str]] = erased or {}


def parse(text: str) -> Optional[Parsed]:
    """``text`` parsed by the running Python's ``ast`` (its warnings silenced: compiling
    reports them), through the stand-in when only PEP 695 syntax stops it; None when it
    does not parse either way. The last answer is kept for the same text object: a
    check reads a file's statements for ``relevance``, then for ``positions`` when the
    whole file is parsed (neither changes the tree)."""
    if _LAST[0] is text:
        return _LAST[1]
    parsed = _parse(text)
    _LAST[:] = [text, parsed]
    return parsed


_LAST: list = [None, None]  # (text, its Parsed)


def _parse(text: str) -> Optional[Parsed]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return Parsed(ast.parse(text))
        except _ERRORS:
            if sys.version_info >= (3, 13):
                return None
        stand_in = erase_type_parameters(text)
        if stand_in is None:
            return None
        try:
            return Parsed(ast.parse(stand_in[0]), stand_in[1])
        except _ERRORS:
            return None


# Where a type parameter list can open: `def f[`, `class C[`, `type Alias[`, `type Alias =`,
# at the start of a line (after \n, \r\n or \r). A statement after `;` is not looked
# for: the stand-in then does not parse, and the file is read as if there were none.
_OPENING = re.compile(r"(?:^|(?<=\r))[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+\w+[ \t]*(\[)"
                      r"|(?:^|(?<=\r))[ \t]*(type)([ \t]+)(\w+)[ \t]*([=\[])", re.M)
# the same where no row ends in a lone \r: five times faster, as `^` alone starts a match
_OPENING_LF = re.compile(r"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+\w+[ \t]*(\[)"
                         r"|^[ \t]*(type)([ \t]+)(\w+)[ \t]*([=\[])", re.M)
_LONE_CR = re.compile(r"\r(?!\n)")
_IDENTIFIER = re.compile(r"[^\W\d]\w*")
_LINE_END = re.compile(r"\r\n?|\n")
_COMMENT = re.compile(r"#[^\r\n]*")
_TRIPLE = ("'''", '"""')


def erase_type_parameters(text: str) -> Optional[Tuple[str, Dict[int, Set[str]]]]:
    """The stand-in for ``text`` (see the module's docs) and the names each row's erased
    lists read, or None when ``text`` has no type parameter list (or one not closed).
    A regular expression finds the lists (Python's own tokenizer took a third of a
    second on a 5,400-line file). One it finds inside a string literal is erased all
    the same: that changes only the string, and the stand-in is read for its
    statements and names, never run."""
    opening = _OPENING if "\r" in text and _LONE_CR.search(text) else _OPENING_LF
    found = list(opening.finditer(text))
    if not found:
        return None
    starts = [0] + [m.end() for m in _LINE_END.finditer(text)]  # rows as ast counts them
    pieces: List[str] = []
    erased: Dict[int, Set[str]] = {}
    done = 0  # text[:done] is in pieces
    for m in found:
        if m.start() < done:
            continue  # inside a list erased already
        if m.group(2):  # `type Alias` -> `Alias     `: the name where `type` was
            lo, hi = m.start(2), m.end(4)
            pieces += (text[done:lo], m.group(4).ljust(hi - lo))
            done = hi
            if m.group(5) != "[":
                continue
            opener = m.start(5)
        else:
            opener = m.start(1)
        close = _closing(text, opener)
        if close is None:
            return None
        segment = text[opener:close]
        erased.setdefault(bisect.bisect_right(starts, opener), set()).update(
            _IDENTIFIER.findall(_COMMENT.sub("", segment)))
        pieces += (text[done:opener], _blank(segment))
        done = close
    pieces.append(text[done:])
    return "".join(pieces), erased


def _blank(segment: str) -> str:
    """A type parameter list as spaces, each of its rows but the last ending in ``\\``
    so that it stays one logical line (a row with nothing of the list stays empty)."""
    parts = _LINE_END.split(segment)
    ends = _LINE_END.findall(segment)
    out: List[str] = []
    for part, end in zip(parts, ends):
        out += (" " * (len(part) - 1) + "\\" if part else "", end)
    out.append(" " * len(parts[-1]))
    return "".join(out)


def _closing(text: str, opener: int) -> Optional[int]:
    """The offset just past the bracket that closes ``text[opener]``, passing over
    strings and comments; None when there is none."""
    depth, i, n = 0, opener, len(text)
    while i < n:
        c = text[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return i + 1
        elif c == "#":
            while i < n and text[i] not in "\r\n":
                i += 1
            continue
        elif c in "'\"":
            quote = text[i:i + 3] if text[i:i + 3] in _TRIPLE else c
            j = i + len(quote)
            while True:
                j = text.find(quote, j)
                if j < 0:
                    return None
                if text[j - 1] != "\\" or text[j - 2:j] == "\\\\":
                    break
                j += 1
            i = j + len(quote)
            continue
        i += 1
    return None


def char_column(text: str, row: int, offset: Optional[int]) -> int:
    """The 1-based column, in characters as findings count them, of ``ast``'s
    ``col_offset`` (UTF-8 bytes) ``offset`` on line ``row`` of ``text``: a line with an
    emoji or an accented name before the node moves every later node."""
    if offset is None:
        return 1
    lines = _lines_of(text)
    line = lines[row - 1] if 0 < row <= len(lines) else ""
    if line.isascii():
        return offset + 1
    return len(line.encode("utf-8", "surrogatepass")[:offset].decode("utf-8", "replace")) + 1


def _lines_of(text: str) -> List[str]:
    """``text``'s lines as ``ast`` counts rows, the last text's kept."""
    if _LINES[0] is not text:
        _LINES[:] = [text, io.StringIO(text, newline="").readlines()]
    return _LINES[1]


_LINES: list = [None, []]
