"""A baseline file: the findings a codebase had when it adopted shardcheck, hidden from
later runs so new code is held to the rules while old findings are fixed over time
(``--write-baseline FILE``, then ``--baseline FILE`` or ``baseline = "FILE"``).

A finding is matched by its file (relative to the baseline's directory), its rule and
the text of its line with surrounding whitespace removed, never by line number: code that
moves keeps its entry, and a line that is edited shows its finding again. Each entry
hides one finding, so a second copy of a baselined mistake is still reported. An
internal error is never baselined.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from typing import Dict, List, Sequence, Tuple

from shardcheck.analyzer.codes import INTERNAL_ERROR
from shardcheck.analyzer.ftypes import Finding
from shardcheck.output.findings import source_line

VERSION = 1
Key = Tuple[str, str, str]


class BaselineError(Exception):
    """A baseline file that cannot be read or is not one shardcheck wrote."""


def _key(f: Finding, root: str, cache: Dict[str, List[str]]) -> Key:
    rel = os.path.relpath(os.path.abspath(f.filename), root).replace(os.sep, "/")
    where = f"cell {f.cell}: " if f.cell is not None else ""
    return (rel, f.code, where + source_line(f.filename, f.row, cache).strip())


def write(path: str, findings: Sequence[Finding]) -> int:
    """Write the baseline of ``findings`` to ``path`` (atomically); how many entries."""
    root = os.path.dirname(os.path.abspath(path))
    cache: Dict[str, List[str]] = {}
    entries = sorted(
        ({"filename": k[0], "code": k[1], "line": k[2], "message": f.message}
         for f in findings if f.code != INTERNAL_ERROR for k in [_key(f, root, cache)]),
        key=lambda e: (e["filename"], e["code"], e["line"], e["message"]))
    doc = {"shardcheck-baseline": VERSION, "findings": entries}
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        with open(tmp, "w", encoding="utf-8") as out:
            json.dump(doc, out, indent=1)
            out.write("\n")
        os.replace(tmp, path)
    except OSError as e:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise BaselineError(f"cannot write {path}: {e.strerror or e}") from None
    return len(entries)


def load(path: str) -> "Baseline":
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as e:
        raise BaselineError(f"cannot read {path}: {e.strerror or e}") from None
    except ValueError as e:
        raise BaselineError(f"{path} is not JSON: {e}") from None
    if not isinstance(doc, dict) or doc.get("shardcheck-baseline") != VERSION or \
            not isinstance(doc.get("findings"), list):
        raise BaselineError(f"{path} is not a shardcheck baseline (version {VERSION}); "
                            "write one with --write-baseline")
    keys: Counter = Counter()
    for entry in doc["findings"]:
        if not (isinstance(entry, dict) and all(isinstance(entry.get(k), str)
                                                for k in ("filename", "code", "line"))):
            raise BaselineError(f"{path}: an entry is not {{filename, code, line, message}}: "
                                f"{entry!r}")
        keys[(entry["filename"], entry["code"], entry["line"])] += 1
    return Baseline(os.path.dirname(os.path.abspath(path)), keys)


class Baseline:
    def __init__(self, root: str, keys: Counter) -> None:
        self.root, self.keys = root, keys

    def __len__(self) -> int:
        return sum(self.keys.values())

    def split(self, findings: Sequence[Finding]) -> Tuple[List[Finding], int, int]:
        """(the findings to report, how many the baseline hid, how many of its entries
        matched nothing: fixed since, and ready to be dropped with --write-baseline)."""
        left = Counter(self.keys)
        cache: Dict[str, List[str]] = {}
        kept: List[Finding] = []
        hidden = 0
        for f in findings:
            k = _key(f, self.root, cache)
            if f.code != INTERNAL_ERROR and left[k] > 0:
                left[k] -= 1
                hidden += 1
            else:
                kept.append(f)
        return kept, hidden, sum(left.values())
