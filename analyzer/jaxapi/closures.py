"""The arrays a ``shard_map`` body closes over.

Inside the body every operation runs under the body's mesh, whose mapped axes are Manual.
An array from outside that lives on a mesh with Explicit axes cannot enter: JAX 0.10.2
(and 0.12) raise ``NotImplementedError: Closing over inputs to shard_map where the input
is sharded on `Explicit` axes is not implemented`` (or a ``ValueError`` about the context
mesh, for indexing or when some axes stay Explicit) as soon as an operation uses it.
Reading its ``.shape``/``.dtype``/``len()`` or returning it untouched does not.
"""

from __future__ import annotations

from typing import Dict, Iterator, List, Optional, Set, Tuple

import libcst as cst

from sharding_types import AxisType

from ..events import MeshCtx, ShardMapCall
from ..facts import ClosedOverExplicitArray
from ..syntax import root_name, subtree
from ..api import ApiContext
from ..values import ArrayVal, FuncVal, PartialVal, QualName, Value


# attributes that read the array's metadata only (no operation is traced)
_METADATA = frozenset(("shape", "ndim", "dtype", "size", "sharding", "aval", "itemsize",
                       "nbytes", "weak_type", "format"))


def check_closures(it: ApiContext, event: ShardMapCall, ctx: MeshCtx) -> None:
    """Prove a fact at the first use, in an operation, of each global array on a mesh with
    Explicit axes that the body of ``event`` reads from an enclosing scope."""
    func = event.func.func if isinstance(event.func, PartialVal) else event.func
    if not isinstance(func, FuncVal) or ctx.manual_axes or not it.recording():
        return  # nested shard_maps: outer values are the outer body's, typed otherwise
    scope = func.scope
    if scope is None:
        return
    local = _bound_names(func.node)
    seen: Set[str] = set()
    for name, use in _operand_uses(func.node, scope):
        if name in local or name in seen:
            continue
        value = scope.lookup(name)
        if _explicit_global(value):
            seen.add(name)
            assert isinstance(value, ArrayVal)
            it.prove(ClosedOverExplicitArray(name, value, event.node), use)


def _explicit_global(v: Value) -> bool:
    """An array placed on a mesh with Explicit axes, outside any shard_map."""
    return (isinstance(v, ArrayVal) and not v.numpy and v.mesh is not None
            and v.mesh.types is not None and AxisType.Explicit in v.mesh.types
            and v.varying == frozenset() and not v.unreduced)


def _bound_names(fn: cst.CSTNode) -> Set[str]:
    """Every name the function (or a function inside it) binds: parameters, assignment
    and loop targets, ``with ... as``, imports, nested ``def``/``class``. A name bound
    anywhere inside counts as local (fewer reports, never a wrong one)."""
    out: Set[str] = set()
    for node in subtree(fn):  # a set: any order
        if isinstance(node, cst.Param):
            out.add(node.name.value)
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef)) and node is not fn:
            out.add(node.name.value)
        elif isinstance(node, (cst.AssignTarget, cst.AnnAssign, cst.AugAssign, cst.For,
                               cst.CompFor, cst.AsName, cst.NamedExpr)):
            target = getattr(node, "target", None) or getattr(node, "name", None)
            out.update(_names_in(target))
        elif isinstance(node, (cst.Global, cst.Nonlocal)):
            out.update(n.name.value for n in node.names)
        elif isinstance(node, (cst.Import, cst.ImportFrom)) and not isinstance(node.names, cst.ImportStar):
            for alias in node.names:
                bound = alias.asname.name if alias.asname is not None else alias.name
                out.update(_names_in(bound))
                if isinstance(bound, cst.Attribute):
                    out.add(root_name(bound) or "")
    return out


def _names_in(target: Optional[cst.CSTNode]) -> Iterator[str]:
    if target is None:
        return
    for node in subtree(target):  # into a set: any order
        if isinstance(node, cst.Name):
            yield node.value


def _operand_uses(fn: cst.CSTNode, scope) -> Iterator[Tuple[str, cst.Name]]:
    """(name, node) for each plain name the body uses in a traced operation: an operand
    of an operator, an indexed value, the object of a method or array attribute other than
    metadata, or an argument of a JAX function."""
    parents: Dict[int, cst.CSTNode] = {}
    order: List[cst.CSTNode] = []
    stack = [fn]
    while stack:  # source order; each node's children read once (libcst rebuilds them)
        node = stack.pop()
        order.append(node)
        kids = node.children
        for child in kids:
            parents[id(child)] = node
        stack.extend(reversed(kids))
    for node in order:
        if not isinstance(node, cst.Name):
            continue
        parent = parents.get(id(node))
        if _traced_use(node, parent, parents, scope):
            yield node.value, node


def _traced_use(name: cst.Name, parent: Optional[cst.CSTNode], parents: Dict[int, cst.CSTNode],
                scope) -> bool:
    if isinstance(parent, (cst.BinaryOperation, cst.UnaryOperation, cst.ComparisonTarget)):
        return True
    if isinstance(parent, cst.Comparison) and parent.left is name:
        return True
    if isinstance(parent, cst.Subscript) and parent.value is name:
        return True
    if isinstance(parent, cst.Attribute) and parent.value is name:
        return parent.attr.value not in _METADATA
    if isinstance(parent, cst.Arg) and parent.value is name:
        call = parents.get(id(parent))
        if isinstance(call, cst.Call):
            root = root_name(call.func)
            callee = scope.lookup(root) if root else None
            return isinstance(callee, QualName) and callee.name.split(".")[0] == "jax"
    return False
