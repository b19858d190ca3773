"""Codemods for imports JAX moved: ``from jax.experimental.shard_map import shard_map``
and ``from jax.experimental.pjit import pjit`` become ``jax.shard_map`` / ``jax.jit``,
with every use of the imported name rewritten in the same fix (SC401's ``--fix``).

A move is offered only when every use of the name can be rewritten: a call, the first
argument of ``functools.partial``, or (``pjit``) a bare decorator. A name that is
rebound, passed as a value, starred into, or imported inside a block gets no fix.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

import libcst as cst

from .syntax import dotted

DELETE_LINE = "\0delete-line"  # an edit that removes the node's whole line(s)


@dataclass(frozen=True)
class Move:
    """An import JAX moved: the name it had, the call it is now, the old positional
    order of its parameters after the function, keyword renames, and the keywords that
    make the rewrite unsafe (with why)."""

    old: str
    new: str  # after the ``jax.`` alias
    positional: Tuple[str, ...]
    renames: Dict[str, str]
    unsafe_keywords: Tuple[str, ...] = ()
    unsafe_why: str = ""


MOVES = {
    # jax.experimental.shard_map.shard_map(f, mesh, in_specs, out_specs, check_rep=True)
    # calls jax's _shard_map(f, mesh=, in_specs=, out_specs=, axis_names=set(),
    # check_vma=check_rep), as jax.shard_map does (checked on JAX 0.10.2): the move is safe
    "jax.experimental.shard_map.shard_map": Move(
        "shard_map", "shard_map", ("mesh", "in_specs", "out_specs", "check_vma"),
        {"check_rep": "check_vma"}),
    # pjit resolves PartitionSpec shardings against the mesh of `with mesh:` and moves
    # its arguments to them; jax.jit reads only jax.set_mesh's mesh (JAX 0.10.2 raises
    # "jit requires a non-empty mesh in context" under `with mesh:`), and under set_mesh
    # an argument already placed on the mesh must match ("Sharding passed to jit does not
    # match the sharding on the respective arg"): unsafe unless the shardings are None or
    # NamedShardings written out (which need no context mesh)
    "jax.experimental.pjit.pjit": Move(
        "pjit", "jit", ("in_shardings", "out_shardings", "static_argnums", "static_argnames",
                        "donate_argnums", "donate_argnames", "keep_unused", "device", "backend",
                        "inline", "compiler_options"),
        {"in_axis_resources": "in_shardings", "out_axis_resources": "out_shardings"},
        ("in_shardings", "out_shardings", "in_axis_resources", "out_axis_resources"),
        "unsafe: pjit resolves PartitionSpecs against `with mesh:` and moves its arguments "
        "to them; jax.jit needs `jax.set_mesh` for PartitionSpecs and raises where an "
        "argument placed on the mesh differs: review the placements"),
}


@dataclass
class Rewrite:
    """The fix: the import statement's replacement, the other edits, and whether it is
    unsafe (and why)."""

    statement: cst.CSTNode
    replacement: str
    edits: List[Tuple[cst.CSTNode, str]]
    unsafe: bool
    message: str


def _statement_of(module: cst.Module, alias: cst.ImportAlias):
    """The top-level ``from ... import`` line holding ``alias``, alone on its line."""
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
            small = stmt.body[0]
            if isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar) \
                    and any(a is alias for a in small.names):
                return stmt, small
    return None, None


class _Uses(cst.CSTVisitor):
    """Every ``Name`` spelled ``name`` and the nodes above it."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.stack: List[cst.CSTNode] = []
        self.found: List[Tuple[cst.Name, Tuple[cst.CSTNode, ...]]] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.Name) and node.value == self.name:
            self.found.append((node, tuple(self.stack[-6:])))
        self.stack.append(node)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.stack.pop()


def _is_partial(func: cst.BaseExpression) -> bool:
    return dotted(func) in ("partial", "functools.partial")


def _args(move: Move, args: Sequence[cst.Arg], skip: int) -> Optional[List[cst.Arg]]:
    """The call's arguments with the old positional ones (after the first ``skip``) as
    keywords and old keywords renamed; None where that cannot be done."""
    if any(a.star for a in args):
        return None
    positional = [a for a in args if a.keyword is None]
    if tuple(args[:len(positional)]) != tuple(positional) or \
            len(positional) - skip > len(move.positional):
        return None
    equal = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                            whitespace_after=cst.SimpleWhitespace(""))
    named = [a.with_changes(keyword=cst.Name(k), equal=equal)
             for k, a in zip(move.positional, positional[skip:])]
    rest = []
    for a in args[len(positional):]:
        key = a.keyword.value if a.keyword is not None else ""
        rest.append(a.with_changes(keyword=cst.Name(move.renames[key])) if key in move.renames else a)
    out = list(positional[:skip]) + named + rest
    keys = [a.keyword.value for a in out if a.keyword is not None]
    return out if len(keys) == len(set(keys)) else None


def _risky(move: Move, args: Sequence[cst.Arg]) -> bool:
    """A keyword that makes the move unsafe, given a value other than ``None`` or
    ``NamedSharding(...)`` calls written out (in a tuple, list or dict too): with those,
    pjit and jax.jit agree (JAX 0.10.2, 18 cases: Auto and Explicit axes; under ``with
    mesh:``, ``jax.set_mesh`` or no mesh; uncommitted, matching and mismatching inputs)."""
    return any(a.keyword is not None and a.keyword.value in move.unsafe_keywords
               and not _named_shardings(a.value) for a in args)


def _named_shardings(e: cst.BaseExpression) -> bool:
    if isinstance(e, cst.Name) and e.value == "None":
        return True
    if isinstance(e, cst.Call):
        return dotted(e.func).rsplit(".", 1)[-1] == "NamedSharding"
    if isinstance(e, (cst.Tuple, cst.List)):
        return all(isinstance(x, cst.Element) and _named_shardings(x.value) for x in e.elements)
    if isinstance(e, cst.Dict):
        return all(isinstance(x, cst.DictElement) and _named_shardings(x.value) for x in e.elements)
    return False


def rewrite(module: cst.Module, alias: cst.ImportAlias, api: str, jax_alias: Optional[str]) -> Optional[Rewrite]:
    """The fix that moves ``alias`` (an import of ``api``) and rewrites its uses."""
    move = MOVES.get(api)
    stmt, imp = _statement_of(module, alias)
    if move is None or stmt is None or imp is None or dotted(alias.name) != move.old:
        return None
    local = alias.asname.name.value if alias.asname is not None and \
        isinstance(alias.asname.name, cst.Name) else move.old
    jax = jax_alias or "jax"
    new = f"{jax}.{move.new}"
    uses = _Uses(local)
    module.visit(uses)
    if jax_alias is None:  # `import jax` is added: `jax` must name nothing else
        probe = _Uses("jax")
        module.visit(probe)
        if any(not isinstance(above[-1], cst.Attribute) or above[-1].value is not name
               or not any(isinstance(a, (cst.Import, cst.ImportFrom)) for a in above)
               for name, above in probe.found):  # only module paths (`jax.numpy`) spell it
            return None
    edits: List[Tuple[cst.CSTNode, str]] = []
    unsafe = False
    code = cst.Module([]).code_for_node
    for name, above in uses.found:
        parent = above[-1] if above else None
        if isinstance(parent, cst.ImportAlias) and parent is alias or \
                isinstance(parent, cst.AsName) and alias.asname is parent:
            continue
        if isinstance(parent, cst.Attribute) and parent.attr is name or \
                isinstance(parent, cst.Arg) and parent.keyword is name:
            continue  # `x.shard_map`, `f(shard_map=...)`: not this name
        if isinstance(parent, cst.Call) and parent.func is name:
            args = _args(move, parent.args, 1)
            if args is None:
                return None
            unsafe |= _risky(move, args)
            edits.append((parent, code(parent.with_changes(func=cst.parse_expression(new), args=args))))
            continue
        if isinstance(parent, cst.Arg) and len(above) >= 2 and isinstance(above[-2], cst.Call) \
                and _is_partial(above[-2].func) and above[-2].args and above[-2].args[0] is parent \
                and parent.keyword is None and not parent.star:
            call = above[-2]
            args = _args(move, call.args[1:], 0)
            if args is None or any(a.keyword is None for a in call.args[1:]):
                return None
            unsafe |= _risky(move, args)
            edits.append((call, code(call.with_changes(
                args=[parent.with_changes(value=cst.parse_expression(new))] + args))))
            continue
        if isinstance(parent, cst.Decorator) and parent.decorator is name and move.new == "jit":
            edits.append((name, new))
            continue
        return None  # rebound, or used as a value: leave the import alone
    rest = [a for a in imp.names if a is not alias]
    lines = [] if jax_alias is not None else [f"import {jax}"]
    if rest:
        last = rest[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        lines.append(code(imp.with_changes(names=rest[:-1] + [last])))
    why = f" ({move.unsafe_why})" if unsafe else ""
    return Rewrite(stmt, "\n".join(lines) if lines else DELETE_LINE, edits, unsafe,
                   f"Use {new} (import and {len(edits)} use(s) rewritten){why}")
