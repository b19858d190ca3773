"""A source file read as Python reads it: a regular file, decoded by PEP 263's rules,
and judged by the running CPython's own compiler before libcst sees it.

Every failure here is the user's file or environment, never shardcheck's: each one is
raised as an exception whose message names the problem, for the engine to turn into one
finding while the run goes on.
"""

from __future__ import annotations

import codecs
import errno
import os
import re
import stat
import sys
import threading
import tokenize
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:  # imported where a file is parsed: reading and hashing files need no libcst
    import libcst as cst


class Unreadable(Exception):
    """The file cannot be read as a source file; the message says why (``skipped-file``)."""


class SourceError(SyntaxError):
    """The file is not Python the running interpreter accepts (``syntax-error``).

    A ``SyntaxError``, so callers that report unparsable files catch it unchanged."""

    def __init__(self, message: str, row: int = 1, column: int = 1):
        super().__init__(message)
        self.msg = message
        self.lineno = max(int(row or 1), 1)
        self.offset = max(int(column or 1), 1)

    def __str__(self) -> str:
        return self.msg


_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISDIR, "a directory"))


def file_kind(mode: int) -> str:
    """``"a FIFO"``, ``"a socket"``, ... for a file that is not a regular file."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def read_error(path: str, exc: OSError) -> str:
    """Why ``path`` cannot be read, in the user's terms."""
    if exc.errno == errno.ELOOP:
        return "it is a symlink loop (too many levels of symbolic links)"
    if exc.errno == errno.ENOENT and os.path.islink(path):
        try:
            target = os.readlink(path)
        except OSError:
            target = "?"
        return f"it is a dangling symlink (to {target!r}, which does not exist)"
    return f"it cannot be read: {exc.strerror or exc}"


def read_source(path: str) -> bytes:
    """The bytes of the regular file ``path``; ``Unreadable`` for anything else.

    Opened non-blocking and checked with ``fstat`` before reading, so a FIFO named
    ``*.py`` is refused at once instead of blocking the run."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) \
        | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    try:
        if not hasattr(os, "O_NONBLOCK"):  # no non-blocking open: look before opening
            st = os.stat(path)
            if not stat.S_ISREG(st.st_mode):
                raise Unreadable(f"it is {file_kind(st.st_mode)}, not a regular file")
        fd = os.open(path, flags)
    except OSError as e:
        raise Unreadable(read_error(path, e)) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Unreadable(f"it is {file_kind(st.st_mode)}, not a regular file")
        with os.fdopen(fd, "rb", closefd=True) as f:
            fd = -1
            return f.read()
    except OSError as e:
        raise Unreadable(read_error(path, e)) from None
    finally:
        if fd >= 0:
            os.close(fd)


def _position(data: bytes, offset: int) -> tuple:
    """(1-based line, 1-based column in bytes) of byte ``offset``."""
    row = data.count(b"\n", 0, offset) + 1
    return row, offset - (data.rfind(b"\n", 0, offset) + 1) + 1


def source_encoding(data: bytes) -> str:
    """The codec CPython decodes the source file ``data`` with, as ``tokenize`` names it:
    ``utf-8-sig`` after a UTF-8 BOM (encoding with it writes the BOM back), else the
    coding cookie's (``iso-8859-1`` for ``latin-1``), else ``utf-8``. Writing a file
    back in it keeps what Python reads; ``SourceError`` naming the problem."""
    if data[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE) or data[:4] in (
            codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE):
        raise SourceError("this file is encoded as UTF-16 or UTF-32 (it starts with that "
                          "byte-order mark); Python reads source files as UTF-8 unless a coding "
                          "cookie says otherwise, and cannot read this one: save it as UTF-8")
    lines = iter(data.splitlines(keepends=True)[:2])
    try:
        encoding, _ = tokenize.detect_encoding(lambda: next(lines, b""))
    except SyntaxError as e:
        raise _cookie_problem(data, str(e)) from None
    return encoding


def decode_source(data: bytes) -> str:
    """``data`` decoded as CPython decodes a source file (a UTF-8 BOM, else a coding
    cookie in the first two lines, else UTF-8); ``SourceError`` naming the problem."""
    encoding = source_encoding(data)
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as e:
        row, col = _position(data, e.start)
        bad = data[e.start:e.start + 1]
        shown = "UTF-8" if encoding in ("utf-8", "utf-8-sig") else encoding
        how = ("and declares no other encoding (PEP 263): save it as UTF-8, or add a coding "
               "cookie such as `# -*- coding: latin-1 -*-` on line 1"
               if shown == "UTF-8" else "which its coding cookie declares")
        raise SourceError(f"this file is not valid {shown} {how}: byte 0x{bad.hex()} at line "
                          f"{row}, column {col} cannot be decoded", row, col) from None
    except LookupError as e:  # an alias tokenize knows but this Python lacks
        raise SourceError(f"this file's coding cookie names an unknown encoding ({e})") from None


def _cookie_problem(data: bytes, what: str) -> SourceError:
    if what.startswith("unknown encoding"):
        name = what.split(":", 1)[-1].strip()
        return SourceError(f"this file's coding cookie names an unknown encoding {name!r}; use a "
                           "codec Python knows, such as utf-8 or latin-1 (PEP 263)")
    if what.startswith("encoding problem") and data.startswith(codecs.BOM_UTF8):
        return SourceError("this file starts with a UTF-8 byte-order mark but its coding cookie "
                           "declares another encoding; Python rejects the pair: drop one of them")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        row, col = _position(data, e.start)
        return SourceError(
            "this file is not valid UTF-8 and declares no other encoding (PEP 263): byte "
            f"0x{data[e.start:e.start + 1].hex()} at line {row}, column {col} cannot be decoded; "
            "save it as UTF-8, or add a coding cookie such as `# -*- coding: latin-1 -*-` on "
            "line 1 (is it a binary file?)", row, col)
    return SourceError(f"this file's encoding cannot be read: {what} (PEP 263)")


# What the compiler rejects because of its own limits (not the grammar): libcst must not
# see such a file, since its native parser can overflow the stack on deep nesting.
_LIMITS = ("too many", "null bytes", "too deeply nested", "too complex", "maximum recursion",
           "recursion depth", "too many levels of indentation", "out of memory")


def _memory_to_spare(size: int) -> bool:
    """Whether memory on the scale of compiling ``size`` characters is still free.

    CPython's parser raises ``MemoryError`` for some deep nesting (3,000 nested
    lambdas: its parser's stack limit) with plenty of memory left; that is the file's
    fault. Under a memory budget a large file can exhaust memory for real (compiling
    takes ~150 bytes per byte of source); that is not. The probe is never touched, so
    it costs address space, not memory."""
    try:
        probe = bytearray(max(size * 200, 64 * 2**20))
    except (MemoryError, OverflowError):
        return False
    del probe
    return True


# CPython's recursion limit when it starts, which `python file.py` compiles the file under.
# The analysis raises the limit (``deep.on_deep_stack``); on 3.11 the compiler's own
# depth check scales with it, so a 100,000-term sum Python rejects compiled there, and
# libcst then spent the whole time budget on a file that is a syntax error.
_STARTUP_RECURSION_LIMIT = 1000


def python_verdict(text: str, path: str) -> Optional[SourceError]:
    """What the running CPython says of ``text`` when it runs it (at its start-up
    recursion limit): ``None`` if it compiles. A rejection is returned, not raised;
    ``limit`` marks rejections that are not grammar."""
    raised = sys.getrecursionlimit()
    try:
        if raised > _STARTUP_RECURSION_LIMIT:
            try:
                sys.setrecursionlimit(_STARTUP_RECURSION_LIMIT)
            except RecursionError:  # already deeper than that here: compile as we are
                pass
        compile(text, path, "exec", dont_inherit=True)
    except SyntaxError as e:
        msg = e.msg or str(e)
        err = SourceError(f"this file does not parse: {msg}", e.lineno or 1, e.offset or 1)
        err.limit = any(k in msg for k in _LIMITS)  # type: ignore[attr-defined]  # our marker on the SyntaxError
        return err
    except (RecursionError, MemoryError) as e:
        # 3.12 words the parser's stack limit ("too complex"); 3.11 gives no message
        if isinstance(e, MemoryError) and "too complex" not in str(e) \
                and not _memory_to_spare(len(text)):
            raise  # truly out of memory (a memory budget): not the file's fault
        err = SourceError("this file is too deeply nested for Python to compile "
                          f"({type(e).__name__}{': ' + str(e) if str(e) else ''})")
        err.limit = True  # type: ignore[attr-defined]  # our marker on the SyntaxError
        return err
    except (ValueError, UnicodeError) as e:  # NUL bytes (older Pythons), lone surrogates
        err = SourceError(f"this file does not parse: {e}")
        err.limit = True  # type: ignore[attr-defined]  # our marker on the SyntaxError
        return err
    finally:
        if sys.getrecursionlimit() != raised:
            sys.setrecursionlimit(raised)
    return None


# Syntax libcst accepts that only a newer Python compiles: (node type, minimum version).
_NEWER_NODES = (("TryStar", (3, 11)), ("TypeAlias", (3, 12)), ("TypeParameters", (3, 12)),
                ("TemplatedString", (3, 14)), ("StarredDictComp", (3, 15)))


def newer_syntax(module: cst.Module) -> Optional[str]:
    """The name of a construct in ``module`` that the running Python is too old to
    compile (any one, if several), or None. A hand walk (``syntax.walk``) that stops
    at the first: libcst's visitor would go on through the siblings of every ancestor."""
    import libcst as cst

    from .syntax import walk
    version = sys.version_info[:2]
    kinds = {getattr(cst, name) for name, v in _NEWER_NODES
             if version < v and hasattr(cst, name)}
    param = cst.TypeParam if version < (3, 13) else None
    formatted = cst.FormattedString if version < (3, 12) else None
    try:
        for node in walk(module, layout=False):
            t = type(node)  # libcst's node classes have no subclasses; isinstance is slower
            if t in kinds:
                return t.__name__
            if t is param and getattr(node, "default", None) is not None:
                return "type parameter default (PEP 696)"
            if t is formatted and _pep701(cst, node):  # type: ignore[arg-type]  # a FormattedString
                return "f-string (PEP 701)"
    except RecursionError:  # generating a deeply nested f-string's code: as the visitor did
        return None
    return None


def _pep701(cst, node: cst.FormattedString) -> bool:
    """Whether an f-string needs Python 3.12: quotes, backslashes or comments inside
    its ``{}``, or a line break there in a single-quoted one."""
    quote = node.start[-1]
    for part in node.parts:
        if isinstance(part, cst.FormattedStringExpression):
            inner = cst.Module([]).code_for_node(part.expression)
            if quote in inner or "\\" in inner or "#" in inner or (
                    len(node.start.lstrip("rRfFbB")) == 1 and "\n" in inner):
                return True
    return False


_UNVALIDATED = threading.Lock()


def cst_parse(text: str) -> cst.Module:
    """``libcst.parse_module(text)``, without each node checking its own fields as the
    parser builds it. libcst validates every node on construction (``__post_init__``),
    which is for trees built by hand: the parser's own output is valid by
    construction, and checking it was a sixth of the parse (libcst's own comment there
    suggests skipping it for parsing). Nodes built elsewhere meanwhile would go
    unchecked too, so the hook is off only inside this lock; the analysis builds no
    nodes in another thread while a file is parsed."""
    import libcst as cst
    from libcst._nodes.base import CSTNode
    hook = CSTNode.__dict__.get("__post_init__")
    if hook is None:  # a libcst that validates otherwise
        return cst.parse_module(text)
    with _UNVALIDATED:
        CSTNode.__post_init__ = _built  # type: ignore[method-assign]  # restored below
        try:
            return cst.parse_module(text)
        finally:
            CSTNode.__post_init__ = hook  # type: ignore[method-assign]  # libcst's own


def _built(self: object) -> None:
    """A parsed node's ``__post_init__``: nothing to check."""


def parse_source(text: str, path: str, kept: Optional[str] = None) -> cst.Module:
    """``text`` as a libcst module, or ``SourceError`` when CPython rejects it.

    CPython compiles first: what it rejects for its limits (nesting, NUL bytes) never
    reaches libcst, whose native parser can crash on it; a grammar error it reports is
    kept only if libcst's tree holds no syntax newer than the running Python, so files
    written for a newer Python are still checked. ``kept``: ``text`` with the statements
    that cannot matter blanked (``relevance.blanked``), parsed instead when CPython
    compiles ``text``, or when the kept statements alone hold newer syntax (then so
    does the whole tree: ``relevance`` keeps each statement ``pyast`` had to erase)."""
    verdict = python_verdict(text, path)
    if verdict is not None and getattr(verdict, "limit", False):
        raise verdict
    import libcst as cst
    module = None
    read = text  # what libcst reads: the kept statements, or (failing that) the whole
    if kept is not None:
        try:
            module = cst_parse(kept)
            read = kept
        except cst.ParserSyntaxError:
            module = None  # as the whole text says, below
        if module is not None and verdict is not None and newer_syntax(module) is None:
            module, read = None, text  # only the whole tree can say why CPython rejects it
    if module is None:
        try:
            module = cst_parse(text)
        except cst.ParserSyntaxError as e:
            if verdict is not None:
                raise verdict from None
            raise LibcstLimitation(e) from None
        if verdict is not None and newer_syntax(module) is None:
            raise verdict
    remember(module, text, read)
    return module


def remember(module: cst.Module, text: str, read: Optional[str] = None) -> None:
    """``module`` was parsed from ``text`` (libcst read ``read``, the same by default):
    the last few are known to ``parsed_text`` and ``source_of``. A module parsed once
    and used again (``Project.shared_parse``: an imported file that is checked later) is
    remembered again when it is used."""
    _PARSED[:] = [(module, text, text if read is None else read)] + \
        [p for p in _PARSED if p[0] is not module][:3]


# The last modules parsed, with their text: a question about the source ("does it set a
# device count at all?") is answered from the text instead of generating code from the tree.
_PARSED: list = []


def parsed_text(module: cst.Module) -> Optional[str]:
    """The text ``module`` was parsed from by ``parse_source``, if it is one of the last
    few parsed (the one being analysed is); None otherwise."""
    return next((text for m, text, _ in _PARSED if m is module), None)


def source_of(module: cst.Module) -> Optional[str]:
    """The text libcst read to make ``module`` (``parsed_text``'s, or the statements
    ``relevance`` kept of it), if it is one of the last few parsed; None otherwise."""
    return next((read for m, _, read in _PARSED if m is module), None)


class LibcstLimitation(Exception):
    """libcst cannot read a file that the running Python compiles (shardcheck's failure)."""

    def __init__(self, error: cst.ParserSyntaxError):
        super().__init__(str(error).splitlines()[0] if str(error) else "parse error")
        self.row = error.raw_line
        self.column = error.raw_column + 1




_GENERATED = re.compile(rb"@generated|do not edit|auto-?generated|generated by|code generated",
                        re.IGNORECASE)


def looks_generated(path: str, data: bytes) -> bool:
    """A generated file, by its name (protobuf's ``*_pb2.py``) or a marker such as
    ``@generated`` or ``DO NOT EDIT`` in its first lines."""
    name = os.path.basename(path)
    if name.endswith(("_pb2.py", "_pb2_grpc.py")):
        return True
    head = b"\n".join(data[:4096].splitlines()[:10])
    return _GENERATED.search(head) is not None
