"""``shardcheck check --add-noqa``: a suppression comment for each finding that stands, so
a big codebase adopts shardcheck at zero findings and only new code is held to it (as
ruff's ``--add-noqa``). Each line gets ``# shardcheck: ignore[CODES]`` (merged into one it
already has); a file is rewritten atomically, and only if the result still compiles.

A finding whose line ends inside a string (a triple-quoted literal) cannot take a
comment there and is left, and so are the file-level findings (a file that does not
parse, an internal error, a skipped file), which no comment suppresses, and findings in
notebooks (their cells are JSON strings: add the comment in the notebook's editor)."""

from __future__ import annotations

import io
import re
import tokenize
from typing import Dict, List, Sequence, Set, Tuple

from .codes import INTERNAL_ERROR, SKIPPED_FILE, SYNTAX_ERROR
from .fixes import by_file, write_atomically
from .ftypes import Finding
from .sources import decode_source, read_source

_FILE_LEVEL = {SYNTAX_ERROR, INTERNAL_ERROR, SKIPPED_FILE}
_EXISTING = re.compile(r"#\s*shardcheck:\s*ignore\[(?P<codes>[^\]]*)\]", re.IGNORECASE)


def add_noqa(findings: Sequence[Finding], write: bool = True) -> Tuple[int, List[str]]:
    """(how many lines got a comment, problems to report); files written unless not
    ``write``."""
    added, problems = 0, []
    kept = [f for f in findings if f.code not in _FILE_LEVEL and f.cell is None]  # not cells
    for path, fs in by_file(kept).items():
        try:
            text = decode_source(read_source(path))
        except Exception as e:
            problems.append(f"{path}: cannot read it ({e}); left unchanged")
            continue
        new, n = comment_lines(text, fs)
        if n == 0:
            continue
        try:
            compile(new, path, "exec", dont_inherit=True)
        except (SyntaxError, ValueError) as e:
            problems.append(f"{path}: with the comments it would not compile ({e}); left "
                            "unchanged")
            continue
        if write:
            write_atomically(path, new)
        added += n
    return added, problems


def comment_lines(text: str, findings: Sequence[Finding]) -> Tuple[str, int]:
    """``text`` with each finding's line carrying its codes in a suppression comment."""
    codes: Dict[int, Set[str]] = {}
    for f in findings:
        codes.setdefault(f.row, set()).add(f.code)
    open_ended = _lines_ending_in_strings(text)
    # rows as libcst counts them: str.splitlines would also split at a form feed or a
    # U+2028 inside a string, and the comment would land in the string
    lines = io.StringIO(text, newline="").readlines()
    n = 0
    for row, cs in sorted(codes.items()):
        if row < 1 or row > len(lines) or row in open_ended:
            continue
        line = lines[row - 1]
        body = line.rstrip("\r\n")
        end = line[len(body):]
        m = _EXISTING.search(body)
        if m is not None:
            have = [c.strip() for c in m.group("codes").split(",") if c.strip()]
            merged = ", ".join(have + sorted(cs - set(have)))
            body = body[:m.start("codes")] + merged + body[m.end("codes"):]
        else:
            body = f"{body}  # shardcheck: ignore[{', '.join(sorted(cs))}]"
        lines[row - 1] = body + end
        n += 1
    return "".join(lines), n


def _lines_ending_in_strings(text: str) -> Set[int]:
    """Lines a string token spans past their end (a comment there would be text)."""
    out: Set[int] = set()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.STRING and tok.end[0] > tok.start[0]:
                out.update(range(tok.start[0], tok.end[0]))
            elif tok.type == getattr(tokenize, "FSTRING_MIDDLE", -1) and tok.end[0] > tok.start[0]:
                out.update(range(tok.start[0], tok.end[0]))
    except (tokenize.TokenError, SyntaxError, ValueError):
        pass
    return out
