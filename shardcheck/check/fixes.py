"""Apply the fixes findings carry (``check --fix``, ``--diff``, ``--unsafe-fixes``).

A file is changed only if one of its findings has a fix that applies; the edits of a
file are applied from the end backwards, overlapping ones skipped (the next run gets
them), a fix's line breaks are written as the file writes its own, and the result must
still compile and be encodable in the file's encoding before ``writeback`` writes it
(atomically, keeping the file's encoding, links, owner and mode).
"""

from __future__ import annotations

import difflib
import io
import os
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from shardcheck.analyzer.ftypes import Finding
from .writeback import (Original, WritePhase, WriteRefused, directories_of, encoded, read_original,
                        write_back)


@dataclass
class FileFix:
    """What fixing one file gives: its new text and the fixes applied."""

    path: str
    old: str
    new: str
    applied: List[Finding] = field(default_factory=list)
    error: Optional[str] = None  # why nothing was written
    original: Optional[Original] = None  # the file as read (None: it could not be read)


def fixable(finding: Finding, unsafe: bool) -> bool:
    fix = finding.fix
    return fix is not None and (fix.applicability == "safe" or unsafe)


def _offsets(text: str) -> List[int]:
    """The offset each row starts at (rows split as libcst and ast split them)."""
    starts, pos = [0], 0
    for line in io.StringIO(text, newline="").readlines():
        pos += len(line)
        starts.append(pos)
    return starts


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def _newline(text: str) -> str:
    r"""The file's line break, as libcst takes it (its first): a fix's text is generated
    with ``\n`` (libcst's code for a node, the lines of a moved import), and a CRLF
    file must stay CRLF. In a string literal too: Python reads either as ``\n``."""
    m = _LINE_BREAK.search(text)
    return m.group() if m else "\n"


def _span(starts: List[int], row: int, column: int, end_row: int,
          end_column: int) -> Optional[Tuple[int, int]]:
    if not 1 <= row <= end_row <= len(starts):
        return None
    a = starts[row - 1] + column - 1
    b = starts[end_row - 1] + end_column - 1
    return (a, b) if a <= b else None


def _overlap(x: Tuple[int, int], y: Tuple[int, int]) -> bool:
    """Two edits collide: their spans share text, or both insert at one point."""
    return x[0] < y[1] and y[0] < x[1] or x == y or \
        (x[0] == x[1] and y[0] < x[0] < y[1]) or (y[0] == y[1] and x[0] < y[0] < x[1])


def apply_to_text(text: str, findings: Sequence[Finding]) -> Tuple[str, List[Finding]]:
    """``text`` with the findings' fixes applied, and the findings whose fix was applied.

    A fix is all its edits or none. Fixes are taken from the end of the text backwards;
    one that collides with a fix already taken is left for the next run."""
    starts = _offsets(text)
    newline = _newline(text)
    taken: List[Tuple[Tuple[int, int], str]] = []
    applied: List[Finding] = []
    candidates: List[Tuple[Tuple[int, int], Finding, List[Tuple[Tuple[int, int], str]]]] = []
    for f in findings:
        if f.fix is None:
            continue
        edits = []
        for r, c, er, ec, content in f.fix.edits():
            span = _span(starts, r, c, er, ec)
            if span is None:
                break
            edits.append((span, content))
        else:
            candidates.append((min(s for s, _ in edits), f, edits))
    for _, f, edits in sorted(candidates, key=lambda c: c[0], reverse=True):
        spans = [s for s, _ in edits]
        if any(_overlap(s, t) for s in spans for t, _ in taken) or \
                any(_overlap(a, b) for i, a in enumerate(spans) for b in spans[i + 1:]):
            continue
        taken += edits
        applied.insert(0, f)
    for (a, b), content in sorted(taken, key=lambda e: e[0], reverse=True):
        if newline != "\n":
            content = _LINE_BREAK.sub(newline, content)
        text = text[:a] + content + text[b:]
    return text, applied


def fix_file(path: str, findings: Sequence[Finding], unsafe: bool) -> Optional[FileFix]:
    """The fixed text of ``path`` (None when none of its findings has a fix to apply);
    ``error`` set when the fixed text would not compile, or its encoding cannot hold it
    (then nothing is written, and ``--diff`` says so as ``--fix`` would)."""
    chosen = [f for f in findings if fixable(f, unsafe)]
    if not chosen:
        return None
    try:
        original = read_original(path)
    except Exception as e:  # unreadable now: the run reported it already
        return FileFix(path, "", "", error=f"cannot read it: {e}")
    new, applied = apply_to_text(original.text, chosen)
    result = FileFix(path, original.text, new, applied, original=original)
    try:
        compile(new, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as e:
        result.error = f"the fixed file would not compile ({e}); left unchanged"
        return result
    try:
        encoded(original, new)
    except WriteRefused as e:
        result.error = str(e)
    return result


def unified_diff(fixed: FileFix) -> str:
    return "".join(difflib.unified_diff(
        fixed.old.splitlines(keepends=True), fixed.new.splitlines(keepends=True),
        fromfile=f"a/{fixed.path.lstrip(os.sep)}", tofile=f"b/{fixed.path.lstrip(os.sep)}"))


def by_file(findings: Sequence[Finding]) -> Dict[str, List[Finding]]:
    out: Dict[str, List[Finding]] = {}
    for f in findings:
        out.setdefault(f.filename, []).append(f)
    return out


@dataclass
class FixRun:
    """What ``--fix``/``--diff`` did over a run's findings."""

    files: List[FileFix] = field(default_factory=list)  # files with a fix applied (or not)
    problems: List[str] = field(default_factory=list)  # files left alone, and why
    unwritten: int = 0  # files whose write was refused or failed (the run exits 2)

    @property
    def applied(self) -> int:
        return sum(len(f.applied) for f in self.files if f.error is None)


def fix_findings(findings: Sequence[Finding], checked: Sequence[str], unsafe: bool,
                 write: bool) -> FixRun:
    """Apply the fixes of ``findings`` in the ``checked`` files (a finding placed in an
    imported module that was not checked is left alone); ``write``: replace the files,
    else only compute the new texts (``--diff``)."""
    run = FixRun()
    wanted = {os.path.normpath(p) for p in checked}
    ready: List[Tuple[FileFix, Original]] = []
    for path, found in sorted(by_file(findings).items()):
        if os.path.normpath(path) not in wanted:
            continue
        fixed = fix_file(path, found, unsafe)
        if fixed is None:
            continue
        if fixed.error is not None:
            run.problems.append(f"{path}: {fixed.error}")
        elif fixed.new != fixed.old and fixed.original is not None:  # None: unreadable
            ready.append((fixed, fixed.original))
    if not write:
        run.files = [fixed for fixed, _ in ready]
        return run
    with WritePhase(directories_of(checked)) as phase:
        for fixed, original in ready:
            if phase.stopped:  # SIGINT or SIGTERM: the file written last is whole
                break
            try:
                write_back(original, fixed.new)
            except WriteRefused as e:
                run.problems.append(f"{fixed.path}: {e}")
                run.unwritten += 1
                continue
            run.files.append(fixed)
    return run
