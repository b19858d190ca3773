"""Small readings of libcst syntax shared by the interpreter, the API models and rules."""

from __future__ import annotations

from typing import Optional

import libcst as cst


def dotted(node: cst.CSTNode) -> str:
    """``a.b.c`` for a Name/Attribute chain; "" for anything else (``f().b`` included)."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = dotted(node.value)
        return f"{base}.{node.attr.value}" if base else ""
    return ""


def keyword_argument(call: cst.CSTNode, keyword: str) -> Optional[cst.Arg]:
    """The ``keyword=...`` argument of ``call`` (None when not passed that way)."""
    if isinstance(call, cst.Call):
        for a in call.args:
            if a.keyword is not None and a.keyword.value == keyword:
                return a
    return None
