"""The realistic corpus: programs in the shape of real JAX code, each wrong in one place
(``buggy.py``) beside its correct twin (``fixed.py``), one directory per case.

Each case's ``case.toml`` says where the program comes from and what it must do:

- ``family``: nnx | linen | optax | config | classes | shard_map (the code shape);
- ``url``: the public report the bug class comes from;
- ``bug``: the bug, in one line;
- ``line``: the line of ``buggy.py`` a user would change (the twins differ there);
- ``site``: the line of ``buggy.py`` JAX raises from (the innermost frame of the
  program in the traceback), when it is not ``line``;
- ``rule``: the shardcheck rule that should report the bug, at ``line`` or ``site``
  (``""`` where no rule fits, and then ``missing_rule`` says what the missing rule
  would flag);
- ``error``, ``message``: the type of the exception JAX 0.10.2 raises on 8 CPU devices
  and a substring of its message (``"silent"`` for a wrong-numbers bug);
- ``follows``: what the analyzer must follow to see the bug (the objects, configs and
  calls between the values and the line JAX raises from).

``tests/analyzer/test_realistic_corpus.py`` holds every case to this and measures the
analyzer on the corpus; ``python tests/realistic/corpus.py`` prints the measurement
without running JAX.
"""

from __future__ import annotations

import ast
import collections
import pathlib
import sys
import tomllib
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

HERE = pathlib.Path(__file__).resolve().parent
FAMILIES = ("nnx", "linen", "optax", "config", "classes", "shard_map")
# what the programs import besides JAX: the JAX server imports these once, before it forks
PRELOAD = ("flax.linen", "flax.nnx", "flax.training.train_state", "optax", "ml_collections")
_KEYS = {"family", "url", "bug", "line", "site", "rule", "missing_rule", "error", "message",
         "follows", "signature"}


@dataclass(frozen=True)
class Case:
    name: str
    family: str
    url: str
    bug: str
    line: int
    rule: str
    error: str
    message: str
    follows: str
    site: Optional[int] = None
    missing_rule: str = ""
    # where JAX words the error differently across versions: the name of its signature in
    # analyzer/compat/errors.py, matched for the installed JAX (``message`` is 0.10.2's)
    signature: str = ""

    @property
    def dir(self) -> pathlib.Path:
        return HERE / self.name

    @property
    def buggy(self) -> pathlib.Path:
        return self.dir / "buggy.py"

    @property
    def fixed(self) -> pathlib.Path:
        return self.dir / "fixed.py"

    @property
    def raise_line(self) -> int:
        """The line of buggy.py JAX raises from."""
        return self.site if self.site is not None else self.line

    @property
    def report_lines(self) -> Tuple[int, ...]:
        """Where a finding of ``rule`` counts as seeing the bug: the line a user would
        change, and every line of the statement JAX raises from (the traceback names a
        call's first line; a finding points at the argument at fault)."""
        tree = ast.parse(self.buggy.read_text())
        spans = [(n.lineno, n.end_lineno or n.lineno) for n in ast.walk(tree)
                 if isinstance(n, ast.stmt) and n.lineno <= self.raise_line <= (n.end_lineno or n.lineno)]
        first, last = min(spans, key=lambda s: s[1] - s[0])
        return tuple(sorted({self.line, *range(first, last + 1)}))


def load(root: pathlib.Path = HERE) -> List[Case]:
    """Every case under ``root``, by name."""
    cases = []
    for toml in sorted(root.glob("*/case.toml")):
        data = tomllib.loads(toml.read_text())
        unknown = set(data) - _KEYS
        if unknown:
            raise ValueError(f"{toml}: unknown keys {sorted(unknown)}")
        cases.append(Case(name=toml.parent.name, **data))
    return cases


@dataclass
class StaticResult:
    """What shardcheck says about one case today."""

    case: Case
    detected: bool
    buggy_findings: List[Tuple[int, str]]  # (row, code) of every finding on buggy.py
    fixed_errors: List[str]  # error-level findings on fixed.py, as text
    types: List[Tuple[int, str, Optional[str]]] = field(default_factory=list)  # fixed.py


def analyse(case: Case) -> StaticResult:
    """check buggy.py and fixed.py in-process; the inferred types of fixed.py."""
    from shardcheck.analyzer.engine import check_file
    from shardcheck.analyzer.ftypes import ERROR
    from shardcheck.analyzer.inferred_types import infer_types
    buggy = check_file(str(case.buggy))
    fixed = check_file(str(case.fixed))
    detected = any(f.code == case.rule and f.row in case.report_lines for f in buggy)
    types = [(t.row, t.name, t.type) for t in infer_types(case.fixed.read_text(), str(case.fixed))]
    return StaticResult(case, detected, [(f.row, f.code) for f in buggy],
                        [f"{f.row}:{f.column}: {f.code} {f.message}" for f in fixed
                         if f.severity == ERROR], types)


def _assignments(static_types, recorded):
    known = {(row, name): t for row, name, t in static_types if t is not None}
    # confirm's recorder: [[path, row, column, name], [the types jax.typeof gave]]
    seen = {(row, name): set(types) for (_, row, _, name), types in recorded if types}
    return known, seen


def coverage(static_types: Sequence[Tuple[int, str, Optional[str]]],
             recorded: Sequence) -> Tuple[int, int, int]:
    """(array assignments JAX saw, of those with a static type, of those whose type
    equals jax.typeof's) for one program. An assignment is a (row, name); JAX's side is
    the program's run under confirm's recorder (``jax_snippets.record_programs``)."""
    known, seen = _assignments(static_types, recorded)
    typed = [k for k in seen if k in known]
    agree = [k for k in typed if seen[k] == {known[k]}]
    return len(seen), len(typed), len(agree)


def disagreements(static_types, recorded) -> List[str]:
    """The assignments whose static type is not what jax.typeof gave: wrong types."""
    known, seen = _assignments(static_types, recorded)
    return [f"{row}: {name}: {known[(row, name)]} vs {sorted(seen[(row, name)])}"
            for row, name in sorted(seen) if (row, name) in known
            and seen[(row, name)] != {known[(row, name)]}]


def summary(results: Sequence[StaticResult],
            cover: Optional[Dict[str, Tuple[int, int, int]]] = None) -> str:
    """One line per family and a total: detection, false errors on the twins, and the
    types' coverage of the twins when ``cover`` (case -> ``coverage(...)``) is given."""
    rows: Dict[str, List[StaticResult]] = collections.defaultdict(list)
    for r in results:
        rows[r.case.family].append(r)
    lines = [f"{'family':<10} {'detected':>9} {'false errors':>13} {'types known':>12}"]

    def line(name: str, rs: List[StaticResult]) -> str:
        det = sum(r.detected for r in rs)
        fe = sum(bool(r.fixed_errors) for r in rs)
        text = f"{name:<10} {det:>4}/{len(rs):<4} {fe:>8}/{len(rs):<4}"
        if cover is not None:
            seen = sum(cover[r.case.name][0] for r in rs)
            typed = sum(cover[r.case.name][1] for r in rs)
            text += f" {typed:>6}/{seen:<5}"
        return text

    for fam in FAMILIES:
        if rows.get(fam):
            lines.append(line(fam, rows[fam]))
    lines.append(line("all", list(results)))
    return "\n".join(lines)


def main(argv: Sequence[str]) -> int:
    results = [analyse(c) for c in load()]
    for r in results:
        mark = "detected" if r.detected else "missed"
        print(f"{r.case.name:<40} {r.case.rule or '-':<6} {mark}"
              + (f"  FALSE ERROR on fixed.py: {r.fixed_errors}" if r.fixed_errors else ""))
    print(summary(results))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
