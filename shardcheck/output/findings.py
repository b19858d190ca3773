"""Findings as text, JSON, SARIF 2.1.0 (GitHub code scanning) or GitHub annotations."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from typing import Dict, List, Sequence, Union

from .._version import __version__
from shardcheck.analyzer.codes import INTERNAL_ERROR, SKIPPED_FILE
from shardcheck.analyzer.ftypes import ERROR, Finding

FORMATS = ("text", "json", "sarif", "github")


def _rel(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        rel = path
    if rel.startswith(".."):
        rel = os.path.abspath(path)
    return rel.replace(os.sep, "/")


def _in_cell(f: Finding) -> str:
    """Where formats with no place for a notebook's cell say it: in the message."""
    return f"(cell {f.cell}, line {f.row}) " if f.cell is not None else ""


def text(findings: List[Finding], files: Union[int, Sequence[str]], quiet: bool = False,
         frames: bool = False) -> str:
    """One line per finding (and its notes), then the summary unless ``quiet``;
    ``frames``: each finding's source line under it, a caret under the span (ruff's full
    output, mypy's ``--pretty``). ``files``: the files checked (or how many)."""
    lines = []
    cache: Dict[str, List[str]] = {}
    for f in findings:
        where = f"{_rel(f.filename)}:" + (f"cell {f.cell}:" if f.cell is not None else "")
        mark = " [*]" if f.fix is not None and f.fix.applicability == "safe" else ""
        lines.append(f"{where}{f.row}:{f.column}: {f.code}{mark} {f.severity}: {f.message} [{f.name}]")
        if frames:
            lines.extend(_frame(f, cache))
        lines.extend(f"{_rel(r.filename)}:{r.row}:{r.column}: note: {r.message}" for r in f.related)
    if quiet:
        return "\n".join(lines)
    return "\n".join(lines + _summary(findings, files))


def grouped(findings: List[Finding], files: Union[int, Sequence[str]], quiet: bool = False) -> str:
    """ruff's ``grouped`` output: each file's name once, its findings under it (line and
    column, then as ``text`` words them), a blank line between files; then the summary
    unless ``quiet``."""
    lines: List[str] = []
    by_file: Dict[str, List[Finding]] = {}
    for f in findings:
        by_file.setdefault(_rel(f.filename), []).append(f)
    for name, found in by_file.items():
        if lines:
            lines.append("")
        lines.append(f"{name}:")
        for f in found:
            cell = f"cell {f.cell}:" if f.cell is not None else ""
            mark = " [*]" if f.fix is not None and f.fix.applicability == "safe" else ""
            lines.append(f"  {cell}{f.row}:{f.column}: {f.code}{mark} {f.severity}: {f.message} "
                         f"[{f.name}]")
            lines.extend(f"    {_rel(r.filename)}:{r.row}:{r.column}: note: {r.message}"
                         for r in f.related)
    if quiet:
        return "\n".join(lines)
    return "\n".join(lines + ([""] if lines else []) + _summary(findings, files))


def _summary(findings: List[Finding], files: Union[int, Sequence[str]]) -> List[str]:
    """The lines after the findings: how many, where, by rule, and what ``--fix`` fixes."""
    lines: List[str] = []
    errors = sum(f.severity == ERROR for f in findings)
    warnings = len(findings) - errors
    checked = files if isinstance(files, int) else len(files)
    if findings:
        lines.append(f"Found {errors} error{'s' * (errors != 1)} and {warnings} "
                     f"warning{'s' * (warnings != 1)} in {_where(findings, files)}.")
        if len({f.code for f in findings}) > 1:
            lines.append("By rule: " + ", ".join(_per_rule(findings)) + ".")
    else:
        lines.append(f"All checks passed ({checked} file{'s' * (checked != 1)}).")
    safe = sum(f.fix is not None and f.fix.applicability == "safe" for f in findings)
    unsafe = sum(f.fix is not None and f.fix.applicability != "safe" for f in findings)
    if safe:
        lines.append(f"[*] {safe} fixable with `--fix`.")
    if unsafe:
        lines.append(f"{unsafe} more fixable with `--fix --unsafe-fixes` (review them: "
                     "they may change what the code means).")
    return lines


def _per_rule(findings: List[Finding]) -> List[str]:
    """``2 SC101 unknown-mesh-axis (1 fixable)`` per rule, the most frequent first."""
    counts: Dict[str, List[int]] = {}
    names: Dict[str, str] = {}
    for f in findings:
        c = counts.setdefault(f.code, [0, 0])
        c[0] += 1
        c[1] += f.fix is not None and f.fix.applicability == "safe"
        names[f.code] = f.name
    order = sorted(counts, key=lambda code: (-counts[code][0], code))
    return [f"{counts[c][0]} {c} {names[c]}" + (f" ({counts[c][1]} fixable)" if counts[c][1] else "")
            for c in order]


def _frame(f: Finding, cache: Dict[str, List[str]]) -> List[str]:
    """The finding's source line with a caret under its span, as ruff's full output
    shows it (none for a notebook's cell, a file not analysed, or a line not read)."""
    if f.cell is not None or f.row < 1 or f.code in (INTERNAL_ERROR, SKIPPED_FILE):
        return []
    line = source_line(f.filename, f.row, cache)
    if not line.strip():
        return []
    start = max(f.column - 1, 0)
    end = f.end_column - 1 if f.end_row == f.row and f.end_column > f.column else len(line)
    end = max(min(end, len(line)), start + 1)
    number = str(f.row)
    pad = " " * len(number)
    text = line.expandtabs(1)
    return [f"{pad} |", f"{number} | {text}", f"{pad} | {' ' * start}{'^' * (end - start)}"]


def as_json(findings: List[Finding]) -> str:
    return json.dumps([f.as_json() for f in findings], indent=2)


def _fingerprint(f: Finding, line_text: str, occurrence: int) -> str:
    raw = f"{f.code}\0{_rel(f.filename)}\0{line_text.strip()}"
    return f"{hashlib.sha256(raw.encode()).hexdigest()[:32]}:{occurrence}"


def source_line(path: str, row: int, cache: Dict[str, List[str]]) -> str:
    """Line ``row`` of the file at ``path`` ("" if it cannot be read). Only a regular file
    is opened: a FIFO a run reported as skipped would block the report forever."""
    if path not in cache:
        cache[path] = []
        try:
            if stat.S_ISREG(os.stat(path).st_mode):
                with open(path, encoding="utf-8", errors="replace") as fh:
                    cache[path] = fh.read().splitlines()
        except (OSError, ValueError):
            pass
    lines = cache[path]
    return lines[row - 1] if 0 < row <= len(lines) else ""


def sarif(findings: List[Finding]) -> str:
    from shardcheck.analyzer.rules import all_rules  # their docs: only SARIF carries them
    rules = all_rules()
    ids = list(rules)
    driver_rules = []
    for code, r in rules.items():
        driver_rules.append({
            "id": code, "name": r.NAME,
            "shortDescription": {"text": r.summary() or r.NAME},
            "fullDescription": {"text": r.docs()},
            "help": {"text": r.docs(), "markdown": r.docs()},
            "defaultConfiguration": {"level": "error" if r.SEVERITY == ERROR else "warning"},
            "properties": {"tags": ["sharding", "jax"]},
        })
    cache: Dict[str, List[str]] = {}
    seen: Dict[str, int] = {}
    results = []
    for f in findings:
        line_text = source_line(f.filename, f.row, cache)
        base = f"{f.code}\0{_rel(f.filename)}\0{line_text.strip()}"
        seen[base] = seen.get(base, 0) + 1
        results.append({
            "ruleId": f.code, "ruleIndex": ids.index(f.code) if f.code in ids else 0,
            "level": "error" if f.severity == ERROR else "warning",
            "message": {"text": _in_cell(f) + f.message},
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": _rel(f.filename), "uriBaseId": "%SRCROOT%"},
                "region": {"startLine": f.row, "startColumn": f.column,
                           "endLine": f.end_row, "endColumn": f.end_column}}}],
            "partialFingerprints": {"shardcheck/v1": _fingerprint(f, line_text, seen[base])},
        })
        if f.fix is not None:  # SARIF 2.1.0 §3.55: each edit a replacement of a region
            results[-1]["fixes"] = [{
                "description": {"text": f.fix.message + (" (unsafe: review it)"
                                                         if f.fix.applicability != "safe" else "")},
                "artifactChanges": [{
                    "artifactLocation": {"uri": _rel(f.filename), "uriBaseId": "%SRCROOT%"},
                    "replacements": [{
                        "deletedRegion": {"startLine": r, "startColumn": c, "endLine": er,
                                          "endColumn": ec},
                        "insertedContent": {"text": content}}
                        for r, c, er, ec, content in f.fix.edits()]}]}]
        if f.related:
            results[-1]["relatedLocations"] = [{
                "id": i, "message": {"text": r.message},
                "physicalLocation": {
                    "artifactLocation": {"uri": _rel(r.filename), "uriBaseId": "%SRCROOT%"},
                    "region": {"startLine": r.row, "startColumn": r.column,
                               "endLine": r.end_row, "endColumn": r.end_column}}}
                for i, r in enumerate(f.related)]
    doc = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "shardcheck", "version": __version__,
                                "semanticVersion": __version__,
                                "informationUri": "https://pypi.org/project/shardcheck/",
                                "rules": driver_rules}},
            "columnKind": "unicodeCodePoints",
            "originalUriBaseIds": {"%SRCROOT%": {"uri": "file://" + os.getcwd().replace(os.sep, "/") + "/"}},
            "results": results,
        }],
    }
    return json.dumps(doc, indent=2)


def _gh_escape(s: str, prop: bool = False) -> str:
    s = s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        s = s.replace(":", "%3A").replace(",", "%2C")
    return s


def github(findings: List[Finding]) -> str:
    out = []
    for f in findings:
        level = "error" if f.severity == ERROR else "warning"
        props = (f"file={_gh_escape(_rel(f.filename), True)},line={f.row},col={f.column},"
                 f"endLine={f.end_row},endColumn={f.end_column},"
                 f"title={_gh_escape(f'{f.code} {f.name}', True)}")
        notes = "".join(f"\n{_rel(r.filename)}:{r.row}: {r.message}" for r in f.related)
        out.append(f"::{level} {props}::{_gh_escape(_in_cell(f) + f.message + notes)}")
    return "\n".join(out)


def statistics(fmt: str, findings: List[Finding]) -> str:
    """``--statistics``: how many findings each rule has, most first (as ruff prints them:
    count, code, ``[*]`` where some are fixable, name); JSON: a list of those rows."""
    rows: dict = {}
    for f in findings:
        row = rows.setdefault(f.code, {"code": f.code, "name": f.name, "count": 0,
                                       "fixable": 0})
        row["count"] += 1
        row["fixable"] += f.fix is not None and f.fix.applicability == "safe"
    ordered = sorted(rows.values(), key=lambda r: (-r["count"], r["code"]))
    if fmt == "json":
        return json.dumps(ordered, indent=2)
    width = max((len(str(r["count"])) for r in ordered), default=1)
    return "\n".join(f"{r['count']:>{width}}  {r['code']}  {'[*]' if r['fixable'] else '   '} "
                     f"{r['name']}" for r in ordered)


def _where(findings: List[Finding], files: Union[int, Sequence[str]]) -> str:
    """``1 of 2 files``; and where a checked file's call makes a finding in a module it
    calls (not checked itself), ``..., and 1 file whose functions they call``."""
    placed = {os.path.abspath(f.filename) for f in findings}
    if isinstance(files, int):
        inside, checked, outside = len(placed), files, 0
    else:
        named = {os.path.abspath(p) for p in files}
        inside, checked = len(placed & named), len(named)
        outside = len(placed - named)
    files_ = f"file{'s' * (checked != 1)}"
    if not outside:
        return f"{inside} of {checked} {files_}"
    called = f"{outside} file{'s' * (outside != 1)} whose functions"
    if not inside:
        return f"{called} the {checked} {files_} checked call{'s' * (checked == 1)}"
    return f"{inside} of {checked} {files_} checked, and in {called} they call"


def render(fmt: str, findings: List[Finding], files: Union[int, Sequence[str]],
           quiet: bool = False,
           frames: bool = False, group: bool = False) -> str:
    """The report in ``fmt`` (``FORMATS``); for text, ``frames`` (full) or ``group``
    (grouped by file) or neither (concise)."""
    if fmt == "text" and group:
        return grouped(findings, files, quiet)
    if fmt == "json":
        return as_json(findings)
    if fmt == "sarif":
        return sarif(findings)
    if fmt == "github":
        return github(findings)
    return text(findings, files, quiet, frames)
