"""Regex rule tables that shard a tree by its leaves' paths, for ``shardcheck specs``.

EasyLM and the code that copies it keep their parameter layout as an ordered table of
``(regex, PartitionSpec)`` pairs and a helper that gives each leaf of a parameter tree
the spec of the first pattern matching its path::

    def match_partition_rules(rules, params):
        def get_partition_spec(name, leaf):
            for rule, ps in rules:
                if re.search(rule, name) is not None:
                    return ps
        return named_tree_map(get_partition_spec, params, sep='/')

A helper defined in the checked code is recognised by that shape, whatever its name: a loop ``for PATTERN, SPEC in
RULES`` over one of its parameters whose body calls ``re.search``/``re.match``/
``re.fullmatch`` with ``PATTERN`` first and returns ``SPEC``. Its result is a
``RuleTreeVal`` holding the table; ``jit(..., out_shardings=tree)`` is then one site per
rule (the leaves it matches are not known, the spec each rule gives is), and so is an
attribute of the tree (``tree.params``: the same rules).
A library's copy of the helper, imported and so not in view (fjformer's and eformer's
``match_partition_rules``), is recognised by the name ``match_partition_rules`` with the
table as its first argument (or ``rules=``).
"""

from __future__ import annotations

from typing import Dict, Optional

import libcst as cst

from ..syntax import dotted, subtree
from ..values import UNKNOWN, RuleTreeVal, Value, str_keyed_pairs

_MATCHERS = ("re.search", "re.match", "re.fullmatch")
RULE_MATCHERS = ("match_partition_rules",)  # an imported helper's name
def rules_parameter(fdef: cst.CSTNode, seen: Dict[cst.CSTNode, Optional[int]]) -> Optional[int]:
    """The position of the rule-table parameter of a rule-matching helper, else None;
    ``seen``: the analysis's answers so far, by function."""
    if fdef not in seen:
        seen[fdef] = _find(fdef) if isinstance(fdef, cst.FunctionDef) else None
    return seen[fdef]


def _find(fdef: cst.FunctionDef) -> Optional[int]:
    params = [p.name.value for p in fdef.params.params]
    for node in subtree(fdef.body):
        if not isinstance(node, cst.For) or not isinstance(node.iter, cst.Name) \
                or node.iter.value not in params:
            continue
        t = node.target
        if not isinstance(t, (cst.Tuple, cst.List)) or len(t.elements) != 2 or not all(
                isinstance(el.value, cst.Name) for el in t.elements):
            continue
        pattern, spec = (el.value.value for el in t.elements)  # type: ignore[attr-defined]
        if _matches_and_returns(node.body, pattern, spec):
            return params.index(node.iter.value)
    return None


def _matches_and_returns(body: cst.CSTNode, pattern: str, spec: str) -> bool:
    matched = returned = False
    for n in subtree(body):
        if isinstance(n, cst.Call) and dotted(n.func) in _MATCHERS and n.args \
                and isinstance(n.args[0].value, cst.Name) and n.args[0].value.value == pattern:
            matched = True
        elif isinstance(n, cst.Return) and isinstance(n.value, cst.Name) \
                and n.value.value == spec:
            returned = True
    return matched and returned


def rule_tree(table: Value) -> Value:
    """The tree a rule-matching helper makes from ``table``: unknown unless the table is
    a sequence of (pattern string, spec) pairs."""
    rules = str_keyed_pairs(table)
    return RuleTreeVal(tuple(rules)) if rules else UNKNOWN
