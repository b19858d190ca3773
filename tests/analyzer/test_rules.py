"""Every rule's VALID/INVALID examples: against the analyzer, and against JAX itself.

An INVALID example must be flagged by its rule at its line, and must really fail under
JAX 0.10.2 on 8 CPU devices (raise, warn with a DeprecationWarning, or give a result
its witness rejects). A VALID example must give no error-level finding and run cleanly.
"""

import re

import pytest

from shardcheck.analyzer import config_checks
from shardcheck.analyzer.config import Config
from shardcheck.analyzer.engine import check_source
from shardcheck.analyzer.ftypes import ERROR
from shardcheck.analyzer.rules import all_rules
from shardcheck.check.project_checks import project_findings

RULES = all_rules()
INVALID = [(code, i, ex) for code, r in RULES.items() for i, ex in enumerate(r.INVALID)]
VALID = [(code, i, ex) for code, r in RULES.items() for i, ex in enumerate(r.VALID)]


def _findings(code, ex, tmp_path):
    """A rule's findings on its example: a config rule's on the YAML, written to a file;
    a project rule's on a project of the example alone, as the runner adds them."""
    if RULES[code].PROJECT:
        path = tmp_path / "example.py"
        path.write_text(ex.code)
        own = check_source(ex.code, str(path))
        return own + project_findings([str(path)], [str(path)], Config(), own)
    if not RULES[code].CONFIG:
        return check_source(ex.code, "example.py")
    path = tmp_path / "config.yml"
    path.write_text(ex.code)
    return config_checks.check(str(path))


def _program(code, ex):
    """What runs under JAX: the example, or a config rule's driver given the YAML."""
    return f"CONFIG = {ex.code!r}\n{ex.driver}" if RULES[code].CONFIG else ex.code


@pytest.mark.parametrize("code,i,ex", INVALID, ids=[f"{c}-invalid{i}" for c, i, _ in INVALID])
def test_invalid_example_is_flagged_at_its_line(code, i, ex, tmp_path):
    found = [f for f in _findings(code, ex, tmp_path) if f.code == code]
    assert any(f.row == ex.line for f in found), found
    assert any(ex.message in f.message for f in found if f.row == ex.line), found


@pytest.mark.parametrize("code,i,ex", VALID, ids=[f"{c}-valid{i}" for c, i, _ in VALID])
def test_valid_example_gives_no_error(code, i, ex, tmp_path):
    found = [f for f in _findings(code, ex, tmp_path) if f.severity == ERROR or f.code == code]
    assert found == []


@pytest.fixture(scope="module")
def jax_results():
    from jax_snippets import run_snippets
    jobs = [_program(code, ex) for code, _, ex in VALID]
    jobs += [_program(code, ex) + ("\n" + ex.witness + "\n" if ex.witness else "")
             for code, _, ex in INVALID]
    results = run_snippets(jobs)
    return {"valid": results[:len(VALID)], "invalid": results[len(VALID):]}


@pytest.mark.parametrize("k", range(len(INVALID)), ids=[f"{c}-invalid{i}" for c, i, _ in INVALID])
def test_invalid_example_really_fails_under_jax(jax_results, k):
    code, i, ex = INVALID[k]
    res = jax_results["invalid"][k]
    if code == "SC001":
        assert res["type"] == "SyntaxError"
        return
    expected = {"error": "error", "deprecation": "deprecation", "wrong-result": "error"}[ex.jax_outcome]
    assert res["status"] == expected, res
    if ex.jax_outcome == "wrong-result":
        assert res["type"] == "AssertionError", res  # the witness saw the wrong result
    if ex.jax_error:  # a regex: JAX versions word some errors differently
        assert re.search(ex.jax_error, res["error"], re.I), res


@pytest.mark.parametrize("k", range(len(VALID)), ids=[f"{c}-valid{i}" for c, i, _ in VALID])
def test_valid_example_runs_under_jax(jax_results, k):
    assert jax_results["valid"][k]["status"] == "ok", jax_results["valid"][k]


SECTIONS = ("## What it does", "## Why is this bad?", "## Example", "Use instead:")


@pytest.mark.parametrize("code", list(RULES))
def test_rule_conventions(code):
    rule = RULES[code]
    assert re.fullmatch(r"SC\d{3}", code)
    assert re.fullmatch(r"[a-z]+(-[a-z]+)*", rule.NAME)
    docs = rule.docs()
    for section in SECTIONS:
        assert section in docs, f"{code} lacks {section!r}"
    assert rule.summary()
    # engine-reported conditions of a file, not of code JAX could run: no examples
    if not (rule.META and rule.NAME in ("internal-error", "skipped-file", "invalid-suppression",
                                        "unused-suppression")):
        assert rule.VALID and rule.INVALID, f"{code} needs VALID and INVALID examples"


def test_names_are_unique():
    names = [r.NAME for r in RULES.values()]
    assert len(names) == len(set(names))


def test_the_issue_rule_names_exist():
    names = {r.NAME for r in RULES.values()}
    assert {"unknown-mesh-axis", "duplicate-mesh-axis", "spec-rank-mismatch",
            "indivisible-dimension", "unbound-collective-axis", "shard-map-arity-mismatch",
            "no-mesh-context", "axis-type-mismatch", "mesh-mismatch", "deprecated-api",
            "missing-collective", "contracting-sharding-mismatch", "elementwise-sharding-conflict",
            "illegal-result-sharding", "operand-sharding-mismatch", "reshape-sharded-dim",
            "sharded-axis-op", "sharding-annotation-mismatch"} <= names
