"""``shardcheck check --add-noqa``: a suppression comment for each finding that stands, so
a big codebase adopts shardcheck at zero findings and only new code is held to it (as
ruff's ``--add-noqa``). Each line gets ``# shardcheck: ignore[CODES]`` (merged into one it
already has); a file is written back as ``writeback`` writes (its encoding, line
endings, links, owner and mode kept), and only if the result still compiles.

A finding whose line ends inside a string (a triple-quoted literal) cannot take a
comment there and is left, and so are the file-level findings (a file that does not
parse, an internal error, a skipped file), which no comment suppresses, and findings in
notebooks (their cells are JSON strings: add the comment in the notebook's editor)."""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field
from typing import Dict, List, Sequence, Set, Tuple

from shardcheck.analyzer.codes import INTERNAL_ERROR, SKIPPED_FILE, SYNTAX_ERROR
from .fixes import by_file
from shardcheck.analyzer.ftypes import Finding
from .writeback import (Original, WritePhase, WriteRefused, directories_of, encoded, read_original,
                        write_back)

_FILE_LEVEL = {SYNTAX_ERROR, INTERNAL_ERROR, SKIPPED_FILE}
_EXISTING = re.compile(r"#\s*shardcheck:\s*ignore\[(?P<codes>[^\]]*)\]", re.IGNORECASE)


@dataclass
class NoqaRun:
    """What ``--add-noqa`` did: the lines it commented, the files it left alone and why."""

    added: int = 0
    problems: List[str] = field(default_factory=list)
    unwritten: int = 0  # files whose write was refused or failed (the run exits 2)


def add_noqa(findings: Sequence[Finding], write: bool = True,
             checked: Sequence[str] = ()) -> NoqaRun:
    """Comment the lines of ``findings``; files written unless not ``write`` (the
    temporary files killed runs left beside the ``checked`` files are removed first)."""
    run = NoqaRun()
    kept = [f for f in findings if f.code not in _FILE_LEVEL and f.cell is None]  # not cells
    ready: List[Tuple[Original, str, int]] = []
    for path, fs in by_file(kept).items():
        try:
            original = read_original(path)
        except Exception as e:
            run.problems.append(f"{path}: cannot read it ({e}); left unchanged")
            continue
        new, n = comment_lines(original.text, fs)
        if n == 0:
            continue
        try:
            compile(new, path, "exec", dont_inherit=True)
        except (SyntaxError, ValueError) as e:
            run.problems.append(f"{path}: with the comments it would not compile ({e}); left "
                                "unchanged")
            continue
        try:
            encoded(original, new)
        except WriteRefused as e:
            run.problems.append(f"{path}: {e}")
            continue
        ready.append((original, new, n))
    if not write:
        run.added = sum(n for _, _, n in ready)
        return run
    with WritePhase(directories_of([*checked, *(o.path for o, _, _ in ready)])) as phase:
        for original, new, n in ready:
            if phase.stopped:  # SIGINT or SIGTERM: the file written last is whole
                break
            try:
                write_back(original, new)
            except WriteRefused as e:
                run.problems.append(f"{original.path}: {e}")
                run.unwritten += 1
                continue
            run.added += n
    return run


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
