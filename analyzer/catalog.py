"""The rules' codes and names, without importing the rules.

Choosing rules (``select``, ``ignore``, ``per-file-ignores``) needs only each rule's
code, name and whether the engine reports it itself; importing the rules would import
the analysis (libcst, the interpreter), which a run answered from the cache never needs.
They are read from the generated manifest (``manifest.py``, written from the rule classes
by ``python docs/generate.py``); ``tests/test_docs.py`` fails when it is out of date, and
``tests/check/test_startup.py`` checks that this table is what importing the rules gives.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Dict

from . import manifest


@dataclass(frozen=True)
class RuleInfo:
    """What selecting a rule needs of it (the attributes of ``rule.ShardRule``)."""

    NAME: str
    META: bool = False


_FROM_MANIFEST = {code: RuleInfo(name, meta) for code, (name, _, meta) in manifest.RULES.items()}


def rule_table() -> Dict[str, RuleInfo]:
    """Code -> the rule's name and META flag, sorted by code: the manifest's rules, and
    any rule class registered in this process beyond them (a plugin's, a test's)."""
    table = dict(_FROM_MANIFEST)
    rule = sys.modules.get(f"{__package__}.rule")  # imported: classes may have registered
    if rule is not None:
        for code, cls in rule.ShardRule.registry.items():
            table.setdefault(code, RuleInfo(cls.NAME, cls.META))
    return dict(sorted(table.items()))
