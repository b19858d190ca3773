"""The rules' codes and names, read from the rule files' text without importing them.

Choosing rules (``select``, ``ignore``, ``per-file-ignores``) needs only each rule's
code, name and whether the engine reports it itself; importing the rules would import
the analysis (libcst, the interpreter), which a run answered from the cache never needs.
A rule stays one file: its class attributes are read here, and ``tests/test_startup.py``
checks that this table is exactly what importing the rules gives.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from typing import Dict, Optional

_FIELD = re.compile(r'^    (CODE|NAME) = "([^"\n]+)"$|^    (META) = (True|False)$', re.MULTILINE)


@dataclass(frozen=True)
class RuleInfo:
    """What selecting a rule needs of it (the attributes of ``rule.ShardRule``)."""

    NAME: str
    META: bool = False


_SCANNED: Optional[Dict[str, RuleInfo]] = None


def rule_table() -> Dict[str, RuleInfo]:
    """Code -> the rule's name and META flag, sorted by code: the rule files', and any
    rule class registered in this process beyond them (a plugin's, a test's)."""
    global _SCANNED
    if _SCANNED is None:
        here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rules")
        table = {}
        for name in sorted(os.listdir(here)):
            if not name.endswith(".py") or name.startswith("_"):
                continue
            with open(os.path.join(here, name), encoding="utf-8") as f:
                fields = {m.group(1) or m.group(3): m.group(2) or m.group(4)
                          for m in _FIELD.finditer(f.read())}
            if "CODE" in fields and "NAME" in fields:
                table[fields["CODE"]] = RuleInfo(fields["NAME"], fields.get("META") == "True")
        _SCANNED = table
    table = dict(_SCANNED)
    rule = sys.modules.get(f"{__package__}.rule")  # imported: classes may have registered
    if rule is not None:
        for code, cls in rule.ShardRule.registry.items():
            table.setdefault(code, RuleInfo(cls.NAME, cls.META))
    return dict(sorted(table.items()))
