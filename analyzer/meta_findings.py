"""The findings shardcheck reports about a file itself, not its sharding: it does not
parse, it was skipped (a budget, its nesting), shardcheck failed on it."""

from __future__ import annotations

import os
import traceback

from .codes import INTERNAL_ERROR, SKIPPED_FILE
from .ftypes import Finding
from .rules import all_rules


def meta_finding(code: str, message: str, path: str, row: int, col: int) -> Finding:
    rule = all_rules()[code]
    return Finding(code, rule.NAME, message, rule.SEVERITY, path, row, col, row, col)


def skipped(path: str, why: str) -> Finding:
    """The one finding of a file shardcheck did not analyse (``skipped-file``)."""
    return meta_finding(SKIPPED_FILE, f"this file was not analysed: {why}", path, 1, 1)


def crashed(path: str, why: str) -> Finding:
    """The finding of a file whose check failed inside shardcheck, not for a budget of
    the file's (a worker that died, an exception outside the rules): an internal error,
    so the run exits 2 rather than pass with the file's findings missing."""
    return meta_finding(INTERNAL_ERROR, f"shardcheck failed while checking this file ({why}), so "
                 "its findings are missing; please report it with this file", path, 1, 1)


def too_deep(path: str, exc: BaseException) -> Finding:
    """The finding of a file whose analysis ran out of stack or memory: a limit of
    shardcheck's, reported as a skipped file, not an internal error."""
    if isinstance(exc, RecursionError):
        return skipped(path, "it is too deeply nested to analyse")
    return skipped(path, "it is too large to analyse in the memory available (memory-per-file)")


def internal_error(path: str, what: str, exc: BaseException) -> Finding:
    tb = traceback.extract_tb(exc.__traceback__)
    where = f" at {os.path.basename(tb[-1].filename)}:{tb[-1].lineno}" if tb else ""
    return meta_finding(INTERNAL_ERROR, f"{what} crashed on this file ({type(exc).__name__}: {exc}"
                 f"{where}); please report it. Other rules' findings are kept.", path, 1, 1)
