"""Every op transfer rule, checked from one table (tests/transfer_table.py) two ways:
the analyzer's op registry must give each row's type or conflict, and JAX on 8 CPU
devices must give the row's ``jax.typeof`` result or raise its error. A rule that reports
a conflict quotes JAX: each quote must appear in the error JAX raised for that row.
"""

import re

import pytest

from transfer_eval import jax_program, static_outcome
from transfer_table import ROWS, SAME, UNKNOWN, Raises
from shardcheck.analyzer import facts, transfer
from shardcheck.analyzer.events import FactAt
from shardcheck.analyzer.rule import RuleContext
from shardcheck.analyzer.rules import all_rules

IDS = [r.id for r in ROWS]


@pytest.fixture(scope="module")
def static():
    return {r.id: static_outcome(r.call, r.inputs, r.mode) for r in ROWS}


@pytest.fixture(scope="module")
def jax_results(jax8):
    from jax_snippets import run_snippets
    program = jax_program([{"call": r.call, "inputs": list(r.inputs), "mode": r.mode} for r in ROWS])
    [res] = run_snippets([program])
    assert res["status"] == "ok", res
    version, outcomes = res["result"]["version"], res["result"]["rows"]
    return version, dict(zip(IDS, outcomes))


def _expected_static(row):
    if row.static is not SAME:
        return row.static
    return row.expect


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_the_registry_gives_the_tables_answer(row, static):
    kind, value, _ = static[row.id]
    expected = _expected_static(row)
    if expected == UNKNOWN:
        assert kind == "type" and value is None, (kind, value)
    elif isinstance(expected, Raises):
        assert kind == "conflict", (kind, value)
        assert type(value) is expected.fact, value
        assert getattr(value, "check", None) == expected.check, value
    else:
        assert (kind, value) == ("type", expected)


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_jax_gives_the_tables_answer(row, jax_results):
    version, outcomes = jax_results
    out = outcomes[row.id]
    expected = row.jax012 if row.jax012 is not SAME and version.startswith("0.12") else row.expect
    if isinstance(expected, Raises):
        assert out["status"] == "error", out
        assert re.search(expected.error, f"{out['type']}: {out['error']}"), out
    else:
        assert out["status"] == "ok", out
        got = tuple(out["out"]) if isinstance(out["out"], list) else out["out"]
        assert got == expected


class _OnlyFacts:
    """A file's records holding just one fact: every other record list is empty."""

    def __init__(self, fact_at):
        self.facts = [fact_at]

    def __getattr__(self, name):
        return []


def _findings(fact):
    """(code, message) of every rule's finding on a file whose only record is ``fact``."""
    import types

    import libcst as cst

    from shardcheck.analyzer.config import Config
    module = cst.parse_module("pass\n")
    events = _OnlyFacts(FactAt(fact, module.body[0]))
    ctx = RuleContext(types.SimpleNamespace(module=module, events=events), "<table>", Config())
    return [(code, p.message) for code, rule in all_rules().items() if not rule.META
            for p in rule().check(ctx)]


CONFLICT_ROWS = [r for r in ROWS if isinstance(_expected_static(r), Raises)]


@pytest.mark.parametrize("row", CONFLICT_ROWS, ids=[r.id for r in CONFLICT_ROWS])
def test_the_rule_quotes_what_jax_raised(row, static, jax_results):
    """The consuming rule's message says "JAX raises <Type> ("<quote>")"; the quote, with
    "..." for what JAX fills in, is JAX's own text for this row."""
    _, fact, _ = static[row.id]
    [(code, message)] = _findings(fact)
    version, outcomes = jax_results
    out = outcomes[row.id]
    raised = re.search(r'JAX raises (\w+) \((".*?")\)\.', message)
    assert raised, message
    error_type, quote = raised.group(1), _quote_for(raised.group(2), version)
    if quote is None:
        pytest.skip(f"the rule quotes no text for JAX {version} (the table: {row.jax012})")
    assert error_type == out["type"], (message, out)
    fragments = [re.escape(f.strip()) for f in quote.split("...") if f.strip()]
    assert re.search(".*".join(fragments), out["error"], re.S), (quote, out["error"])


def _quote_for(quotes: str, version: str):
    """The quote for ``version`` in '"text"' or '"text"; JAX 0.12: "other text"'."""
    default = re.match(r'"(.+?)"', quotes)
    labelled = dict(re.findall(r'JAX (\d+\.\d+): "(.+?)"', quotes))
    minor = ".".join(version.split(".")[:2])
    return labelled.get(minor, default.group(1) if default else None)


def test_every_registered_op_has_a_row(static):
    covered = set().union(*(ops for _, _, ops in static.values()))
    assert sorted(set(transfer.OPS) - covered) == []


# checks proved outside the op registry, each by its API's handler: `lax.scan` over a sharded
# leading dim (jaxapi/control_flow.py; SC306's INVALID example runs it under JAX)
PROVED_BY_HANDLERS = {(facts.ShardedAxisConflict, "scan")}


def test_every_conflict_check_has_a_row(static):
    seen = {(type(v), getattr(v, "check", None)) for k, v, _ in static.values() if k == "conflict"}
    expected = {(f, c) for f in facts.FACT_TYPES for c in (f.CHECKS or (None,))}
    assert seen == expected - PROVED_BY_HANDLERS


def test_every_fact_type_is_consumed_by_exactly_one_rule(static):
    examples = {type(v): v for k, v, _ in static.values() if k == "conflict"}
    assert set(examples) == set(facts.FACT_TYPES)
    for fact_type, fact in examples.items():
        codes = [code for code, _ in _findings(fact)]
        assert len(codes) == 1, (fact_type.__name__, codes)


def test_table_rows_are_unique():
    assert len(IDS) == len(set(IDS))
