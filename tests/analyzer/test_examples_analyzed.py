"""The analyzer on the bundled examples: clean ones give nothing, broken ones are
reported at the line marked `# error: <rule-name>`, with that rule, and really fail
under JAX on 8 CPU devices."""

import pathlib
import re

import pytest

from shardcheck.analyzer.engine import check_file
from shardcheck.analyzer.ftypes import ERROR
from shardcheck.analyzer.project import Project

ROOT = pathlib.Path(__file__).resolve().parents[2]
CLEAN = sorted((ROOT / "examples").glob("*.py"))
BROKEN = sorted((ROOT / "examples" / "broken").glob("*.py"))
MARK = re.compile(r"#\s*error:\s*([a-z-]+)")


def _expected(path):
    out = set()
    for i, line in enumerate(path.read_text().splitlines(), 1):
        for m in MARK.finditer(line):
            out.add((i, m.group(1)))
    return out


@pytest.mark.parametrize("path", CLEAN, ids=lambda p: p.stem)
def test_clean_example_has_no_error(path):
    assert [f for f in check_file(str(path)) if f.severity == ERROR] == []


@pytest.mark.parametrize("path", BROKEN, ids=lambda p: p.stem)
def test_broken_example_is_reported_at_the_marked_line(path):
    expected = _expected(path)
    assert expected, "a broken example marks its defect with `# error: <rule-name>`"
    project = Project()
    project.add_file(str(path))
    found = {(f.row, f.name) for f in check_file(str(path), project=project) if f.severity == ERROR}
    assert found == expected


def test_every_rule_of_issue_3_has_a_broken_example():
    names = {name for p in BROKEN for _, name in _expected(p)}
    assert {"unknown-mesh-axis", "duplicate-mesh-axis", "spec-rank-mismatch",
            "indivisible-dimension", "unbound-collective-axis", "shard-map-arity-mismatch",
            "no-mesh-context", "axis-type-mismatch", "mesh-mismatch", "deprecated-api"} <= names


def test_every_rule_of_issue_4_has_a_broken_example():
    names = {name for p in BROKEN for _, name in _expected(p)}
    assert {"missing-collective", "contracting-sharding-mismatch",
            "elementwise-sharding-conflict", "illegal-result-sharding",
            "operand-sharding-mismatch", "reshape-sharded-dim", "sharded-axis-op",
            "sharding-annotation-mismatch"} <= names


@pytest.fixture(scope="module")
def broken_runs():
    from jax_snippets import run_snippets
    return run_snippets([p.read_text() for p in BROKEN])


@pytest.mark.parametrize("k", range(len(BROKEN)), ids=[p.stem for p in BROKEN])
def test_broken_example_really_fails_under_jax(broken_runs, k):
    """Its docstring quotes JAX's error (`JAX: ValueError: ...`); the real run raises that
    type. An example that JAX runs silently with a wrong result asserts what its author
    meant, and that assertion fails."""
    res = broken_runs[k]
    assert res["status"] in ("error", "deprecation"), res
    doc = BROKEN[k].read_text().split('"""')[1]
    # "JAX: ValueError: ..." or, where versions differ, "JAX 0.10.2: ..." and "JAX 0.12: ..."
    quoted = re.findall(r"^JAX[ 0-9.]*: (\w+)", doc, re.M)
    assert res["type"] in (quoted or ["AssertionError"]), res
