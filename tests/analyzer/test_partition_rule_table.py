"""Regex partition-rule tables (analyzer/rules/partition_rule_table.py, SC112), in the
shapes EasyLM, EasyDeL and big_vision write them: each case gives the (line, severity)
findings it must have, and runs under JAX with an EasyLM-style matcher: a buggy case
must raise what the message says (or, for a rule that never applies, give the wrong
spec), its correct twin must give every parameter the spec meant for it.
"""

import re

import pytest

from shardcheck.analyzer.engine import check_source
from shardcheck.analyzer.rules.partition_rule_table import MATCHER

HEAD = MATCHER + """
params = {"transformer": {"wte": {"embedding": jnp.ones((64, 16))},
                          "h": {"0": {"attn": {"wq": {"kernel": jnp.ones((16, 16))},
                                               "wo": {"kernel": jnp.ones((16, 16))}},
                                      "mlp": {"fc_in": {"kernel": jnp.ones((16, 64))}}}},
                          "ln_f": {"scale": jnp.ones((16,))}}}
"""  # 19 lines; a case's first line is line 20

WITNESS = """
specs = match_partition_rules(get_partition_rules(), params)
assert specs["transformer"]["h"]["0"]["attn"]["wq"]["kernel"] == PS("fsdp", "mp")
assert specs["transformer"]["h"]["0"]["mlp"]["fc_in"]["kernel"] == PS("fsdp", "mp")
"""

# id -> (code after HEAD, {(line, severity)}, JAX: "ok" or a regex of the error raised)
CASES = {
    "easylm-table": ("""\
def get_partition_rules():
    return (
        ("transformer/wte/embedding", PS("mp", "fsdp")),
        ("attn/(wq|wk|wv)/kernel", PS("fsdp", "mp")),
        ("attn/wo/kernel", PS("mp", "fsdp")),
        ("mlp/fc_in/kernel", PS("fsdp", "mp")),
        ("ln_f/scale", PS(None)),
        (".*", PS(None)),
    )
""", set(), "ok"),
    "missing-parenthesis": ("""\
def get_partition_rules():
    return (
        ("transformer/wte/embedding", PS("mp", "fsdp")),
        ("attn/(wq|wk|wv)/kernel", PS("fsdp", "mp"),
        ("attn/wo/kernel", PS("mp", "fsdp"))),
        ("mlp/fc_in/kernel", PS("fsdp", "mp")),
        (".*", PS(None)),
    )
""", {(23, "error")}, "too many values to unpack"),
    "spec-before-regex": ("""\
def get_partition_rules():
    return [
        ("transformer/wte/embedding", PS("mp", "fsdp")),
        (PS("fsdp", "mp"), "attn/(wq|wk|wv)/kernel"),
        ("mlp/fc_in/kernel", PS("fsdp", "mp")),
        (".*", PS(None)),
    ]
""", {(23, "error")}, "first argument must be string or compiled pattern"),
    "regex-does-not-compile": ("""\
def get_partition_rules():
    return (
        ("transformer/wte/embedding", PS("mp", "fsdp")),
        ("attn/(wq|wk|wv/kernel", PS("fsdp", "mp")),
        ("mlp/fc_in/kernel", PS("fsdp", "mp")),
        (".*", PS(None)),
    )
""", {(23, "error")}, "missing \\)"),
    "no-return": ("""\
def get_partition_rules():
    rules = (
        ("transformer/wte/embedding", PS("mp", "fsdp")),
        ("attn/(wq|wk|wv)/kernel", PS("fsdp", "mp")),
        ("mlp/fc_in/kernel", PS("fsdp", "mp")),
        (".*", PS(None)),
    )
""", {(21, "error")}, "'NoneType' object is not iterable"),
    "table-read-after-built": ("""\
def get_partition_rules(extra=()):
    rules = (
        ("transformer/wte/embedding", PS("mp", "fsdp")),
        ("attn/(wq|wk|wv)/kernel", PS("fsdp", "mp")),
        ("mlp/fc_in/kernel", PS("fsdp", "mp")),
        (".*", PS(None)),
    )
    return tuple(extra) + rules
""", set(), "ok"),
    "catch-all-first": ("""\
def get_partition_rules():
    return (
        ("transformer/wte/embedding", PS("mp", "fsdp")),
        (".*", PS(None)),
        ("attn/(wq|wk|wv)/kernel", PS("fsdp", "mp")),
        ("mlp/fc_in/kernel", PS("fsdp", "mp")),
    )
""", {(24, "warning"), (25, "warning")}, "AssertionError"),
    "repeated-regex": ("""\
def get_partition_rules():
    return (
        ("attn/(wq|wk|wv)/kernel", PS("fsdp", "mp")),
        ("mlp/fc_in/kernel", PS("fsdp", "mp")),
        ("attn/(wq|wk|wv)/kernel", PS("mp", "fsdp")),
        (".*", PS(None)),
    )
""", {(24, "warning")}, "ok"),
    "pairs-that-are-not-rules": ("""\
def get_partition_rules():
    return (
        ("transformer/wte/embedding", PS("mp", "fsdp")),
        ("attn/(wq|wk|wv)/kernel", PS("fsdp", "mp")),
        ("mlp/fc_in/kernel", PS("fsdp", "mp")),
        (".*", PS(None)),
    )

SHAPES = (("batch", 8), ("length", 128), ("embed", 16))
""", set(), "ok"),
}


def _found(code):
    return {(f.row, f.severity) for f in check_source(code, "case.py") if f.code == "SC112"}


@pytest.mark.parametrize("case", list(CASES))
def test_findings(case):
    assert _found(HEAD + CASES[case][0]) == CASES[case][1]


@pytest.fixture(scope="module")
def jax_runs(jax8):
    from jax_snippets import run_snippets
    return dict(zip(CASES, run_snippets([HEAD + body + WITNESS for body, _, _ in CASES.values()])))


@pytest.mark.parametrize("case", list(CASES))
def test_jax_agrees(case, jax_runs):
    _, _, outcome = CASES[case]
    run = jax_runs[case]
    if outcome == "ok":
        assert run["status"] == "ok", run
    else:
        assert run["status"] == "error" and re.search(outcome, run["type"] + " " + run["error"]), run
