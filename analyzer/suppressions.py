"""Suppression comments: ``# shardcheck: ignore[CODES]`` and ruff's ``# noqa`` forms,
read from a file's comments; the findings each file's selection and comments keep, and
the comments that silenced nothing (``unused-suppression``)."""

from __future__ import annotations

import io
import re
import tokenize
from typing import TYPE_CHECKING, Dict, List, Mapping, Optional, Tuple

from .codes import INVALID_SUPPRESSION, PROJECT_CODES, UNUSED_SUPPRESSION
from .config import Config
from .ftypes import Finding
from .catalog import rule_table

if TYPE_CHECKING:
    from .project import Project


# ruff's forms, case-insensitive: a bare noqa, or noqa followed by ': SC101, SC102'
_SUPPRESS = re.compile(r"#\s*(?:shardcheck:\s*ignore(?:\[(?P<codes>[^\]]*)\])?"
                       r"|noqa(?::\s*(?P<noqa>[A-Za-z0-9_\-]+(?:[,\s]+[A-Za-z0-9_\-]+)*))?)",
                       re.IGNORECASE)


_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # Python's line breaks (str.splitlines has more)


def _suppressions(text: str, comments_out: Optional[list] = None
                  ) -> Tuple[dict, List[Tuple[int, int, str]]]:
    """(line number -> codes/names suppressed there, '*' for all; the unknown names
    in `# shardcheck: ignore[...]` comments as (line, column, name)). Only comments
    count, not the same text inside a string. ``comments_out`` collects each comment as
    (line, column, "shardcheck" or "noqa", the items it names)."""
    out: dict = {}
    unknown: List[Tuple[int, int, str]] = []
    known: Optional[set] = None
    comments: Optional[Dict[int, int]] = None
    tokenized = False
    for i, line in enumerate(_LINE_BREAK.split(text), 1):
        if "#" not in line:
            continue
        for m in _SUPPRESS.finditer(line):
            if not tokenized:
                comments, tokenized = _comment_starts(text), True
            if comments is not None and not (i in comments and comments[i] <= m.start()):
                continue
            if m.group("noqa") is not None:
                items = {c.strip().upper() if c.strip().upper().startswith("SC") else c.strip()
                         for c in re.split(r"[,\s]+", m.group("noqa")) if c.strip()}
            elif m.group("codes") is not None:
                items = {c.strip() for c in m.group("codes").split(",") if c.strip()}
                if known is None:
                    table = rule_table()
                    known = set(table) | {r.NAME for r in table.values()}
                for c in sorted(items):
                    if c not in known and c.upper() not in known:
                        unknown.append((i, m.start() + 1, c))
                items = {c.upper() if c.upper() in known else c for c in items}
            else:
                items = {"*"}
            out.setdefault(i, set()).update(items)
            if comments_out is not None:
                kind = "noqa" if m.group(0).lstrip("#").strip().lower().startswith("noqa") \
                    else "shardcheck"
                comments_out.append((i, m.start() + 1, kind, items))
    return out, unknown


def _comment_starts(text: str) -> Optional[Dict[int, int]]:
    """Line -> column where its comment starts; None if the text does not tokenize
    (then every match counts, as a best effort for a file that does not parse)."""
    starts: Dict[int, int] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                starts[tok.start[0]] = tok.start[1]
    except (tokenize.TokenError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return starts


def suppressed_rows(path: str, overlay: Optional[Mapping[str, bytes]] = None) -> dict:
    """Line number -> the codes and names the suppression comments of the file ``path``
    (its unsaved content in ``overlay``) silence there ('*' for all)."""
    from .project_names import buffer_of
    from .sources import Unreadable, decode_source, read_source
    data = buffer_of(path, overlay)
    try:
        return _suppressions(decode_source(data if data is not None else read_source(path)))[0]
    except (Unreadable, SyntaxError, UnicodeDecodeError, LookupError, ValueError):
        return {}


def _suppressed(f: Finding, sup: dict) -> bool:
    for row in {f.row, f.end_row}:
        items = sup.get(row)
        if items and ("*" in items or f.code in items or f.name in items):
            return True
    return False


def kept_findings(findings: List[Finding], path: str, text: str, codes: set, config: Config,
          project: Optional[Project]) -> List[Finding]:
    """The findings each file's selection and suppression comments keep, sorted (this
    file's first, then those placed in modules it imports), without duplicates."""
    from .meta_findings import meta_finding
    comments: list = []
    sup, unknown = _suppressions(text, comments)
    for row, col, name in unknown:
        findings.append(meta_finding(INVALID_SUPPRESSION, f"`# shardcheck: ignore[...]` names {name!r}, "
                              "which is not a rule code or name, so it suppresses nothing; "
                              "`shardcheck rules` lists them", path, row, col))
    sups = {path: sup}
    allowed = {path: codes}
    seen = set()
    used: set = set()  # (line, item) of this file's comments that silenced a finding
    out = []
    for f in sorted(findings, key=lambda f: (f.filename != path, f.filename, f.row, f.column,
                                             f.code, f.message)):
        if f.filename not in sups:  # a module this file imports
            sups[f.filename] = _suppressions(project.text_of(f.filename)
                                             if project is not None else "")[0]
            allowed[f.filename] = set() if config.is_excluded(f.filename) else (
                codes - set(config.ignored_for(f.filename)))
        key = (f.filename, f.code, f.row, f.column, f.message)
        if key in seen or f.code not in allowed[f.filename]:
            continue
        if f.code != INVALID_SUPPRESSION and _suppressed(f, sups[f.filename]):
            if f.filename == path:
                used.update((row, item) for row in (f.row, f.end_row)
                            for item in ("*", f.code, f.name))
            continue
        seen.add(key)
        out.append(f)
    if config.warn_unused_ignores:
        out.extend(_unused(comments, used, codes, path))
    return out


def _unused(comments: list, used: set, codes: set, path: str) -> List[Finding]:
    """``unused-suppression`` findings: the items of each comment that silenced no
    finding on their line. In a ``# noqa``, only shardcheck's codes count (other tools
    read the same comment), and a bare ``# noqa`` never; a code not enabled here is left
    alone (another configuration may need it)."""
    from .catalog import rule_table
    from .meta_findings import meta_finding
    names = {r.NAME: c for c, r in rule_table().items()}
    out = []
    for row, col, kind, items in comments:
        for item in sorted(items):
            code = names.get(item, item.upper())
            if kind == "noqa" and (item == "*" or code not in rule_table()):
                continue
            if item != "*" and (code not in codes or code not in rule_table()):
                continue
            if (row, item) in used or (row, code) in used or code in PROJECT_CODES:
                continue  # a project finding is suppressed after the file's analysis
            what = ("`# shardcheck: ignore` silences nothing: no finding is reported on this "
                    "line" if item == "*" else f"{item!r} in this suppression comment silences "
                    f"nothing: no {item} finding is reported on this line")
            out.append(meta_finding(UNUSED_SUPPRESSION, f"{what}. Remove it, so a later finding here "
                             "is not silenced unseen", path, row, col))
    return out
