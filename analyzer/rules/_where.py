"""Where a rule's finding points: the line a user changes (shared by the rules)."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from ..events import ShardMapCall
from ..syntax import keyword_argument, subtree
from ..values import SpecVal


def spec_entry_node(sm: ShardMapCall, spec: Optional[SpecVal], keyword: str) -> cst.CSTNode:
    """Where a spec of this shard_map is written: the P(...) itself when it is written in
    the call, else the ``keyword=`` argument that passes it (a spec made elsewhere, e.g.
    a module constant, is fixed where this shard_map uses it), else the call."""
    arg = keyword_arg(sm.node, keyword)
    if spec is not None and spec.node is not None and contains(sm.node, spec.node):
        return spec.node
    return arg if arg is not None else sm.node


def keyword_arg(call: cst.CSTNode, keyword: str) -> Optional[cst.CSTNode]:
    """The value passed as ``keyword=`` in ``call`` (None when not passed there)."""
    arg = keyword_argument(call, keyword)
    return arg.value if arg is not None else None


def contains(root: cst.CSTNode, node: cst.CSTNode) -> bool:
    """Whether ``node`` is ``root`` or inside it."""
    return root is node or any(n is node for n in subtree(root))
