"""A project's logical axis rule table written in Python, found for ``shardcheck specs``.

T5X-style projects keep their rules in code, not in a YAML config: a function whose
name ends in ``axis_rules`` (``standard_logical_axis_rules(activation_partitioning_dims=1,
parameter_partitioning_dims=1)``) that its partitioner calls when it is given no rules,
or a module constant named ``..._AXIS_RULES``. The sharding map of such a project resolves
nothing without them: every ``with_sharding_constraint(x, ('batch', 'length', 'embed'))``
of its layers waits for rules the partitioner installs at run time.

``discover`` finds such a table and reads it as Python runs it under its parameters'
defaults, with a small evaluator over ``ast``: literals, names bound to them, ``if``
chains on the parameters, ``extend``/``append``/``+=``, ``return``. Anything else (a
call of another helper, a loop, a parameter with no default) leaves the table unread,
never guessed. Where several tables read, the shallowest file's comes first (as
``logical_config.discover`` orders YAML configs); the map names the one it used.
"""

from __future__ import annotations

import ast
import os
from typing import Any, Dict, Iterator, List, Optional, Tuple

from .pyast import parse
from .pyconfig import read as read_small

_SKIP = {"__pycache__", "node_modules", "build", "dist", "site-packages", "venv", "env",
         "tests", "test"}
_MAX_FILES = 20000  # directory entries looked at, at most: discovery must stay cheap
_MAX_STEPS = 500  # statements evaluated in one table's function, at most


class _Unread(Exception):
    """The table uses something the evaluator does not read."""


def discover(root: str) -> Optional[Tuple[List[Tuple[str, Any]], str]]:
    """(the rules, where they were read: ``path:row name()``) of the first table under
    ``root`` that reads, or None."""
    for rel in _candidates(root):
        text = read_small(os.path.join(root, rel))
        if text is None or "axis_rules" not in text.lower():
            continue
        parsed = parse(text)
        if parsed is None:
            continue
        for row, name, rules in _tables(parsed.tree):
            return rules, f"{rel}:{row} {name}"
    return None


def _candidates(root: str) -> List[str]:
    found: List[str] = []
    seen = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in _SKIP)
        seen += len(dirnames) + len(filenames)
        found.extend(os.path.relpath(os.path.join(dirpath, n), root) for n in filenames
                     if n.endswith(".py") and not n.startswith("test") and
                     not n.endswith("_test.py"))
        if seen > _MAX_FILES:
            break
    return sorted(found, key=lambda rel: (rel.count(os.sep), rel))


def _tables(tree: ast.Module) -> Iterator[Tuple[int, str, List[Tuple[str, Any]]]]:
    """(row, shown name, rules) of each rule table of the module that reads."""
    for stmt in tree.body:
        try:
            if isinstance(stmt, ast.FunctionDef) and stmt.name.lower().endswith("axis_rules"):
                yield stmt.lineno, f"{stmt.name}()", _rules(_Function(stmt).run())
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                if len(targets) == 1 and isinstance(targets[0], ast.Name) \
                        and targets[0].id.upper().endswith("AXIS_RULES") \
                        and stmt.value is not None:
                    yield stmt.lineno, targets[0].id, _rules(_literal(stmt.value, {}))
        except (_Unread, RecursionError):
            continue


def _rules(value: Any) -> List[Tuple[str, Any]]:
    """``value`` as a rule table: (logical name, None, a mesh axis or a tuple of them)
    pairs, at least one."""
    if not isinstance(value, list) or not value:
        raise _Unread
    out = []
    for pair in value:
        if not (isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[0], str)):
            raise _Unread
        axes = pair[1]
        if not (axes is None or isinstance(axes, str) or (
                isinstance(axes, tuple) and all(isinstance(a, str) for a in axes))):
            raise _Unread
        out.append(pair)
    return out


def _literal(node: ast.AST, names: Dict[str, Any]) -> Any:
    """The value of a literal expression (lists read as lists, tuples as tuples), where a
    name is one of ``names``."""
    if isinstance(node, ast.Constant) and (node.value is None or
                                           isinstance(node.value, (str, int, bool))):
        return node.value
    if isinstance(node, ast.Name):
        if node.id in names:
            return names[node.id]
        raise _Unread
    if isinstance(node, ast.Tuple):
        return tuple(_literal(e, names) for e in node.elts)
    if isinstance(node, ast.List):
        return [_literal(e, names) for e in node.elts]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _literal(node.left, names), _literal(node.right, names)
        if type(left) is type(right) and isinstance(left, (list, tuple)):
            return left + right
    raise _Unread


class _Function:
    """A rule table function's body, run under its parameters' defaults."""

    def __init__(self, fn: ast.FunctionDef) -> None:
        args = fn.args
        if args.vararg or args.kwarg or args.posonlyargs:
            raise _Unread
        positional = args.args
        defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
        self.names: Dict[str, Any] = {}
        for a, d in list(zip(positional, defaults)) + list(zip(args.kwonlyargs, args.kw_defaults)):
            if d is None:
                raise _Unread  # a parameter every call must pass
            self.names[a.arg] = _literal(d, {})
        self.body = fn.body
        self.steps = 0

    def run(self) -> Any:
        returned = self._block(self.body)
        if returned is None:
            raise _Unread
        return returned[0]

    def _block(self, body: List[ast.stmt]) -> Optional[Tuple[Any]]:
        """(the value returned,) once a ``return`` runs; None when the block ends."""
        for stmt in body:
            self.steps += 1
            if self.steps > _MAX_STEPS:
                raise _Unread
            out = self._statement(stmt)
            if out is not None:
                return out
        return None

    def _statement(self, stmt: ast.stmt) -> Optional[Tuple[Any]]:
        if isinstance(stmt, ast.Return):
            return (_literal(stmt.value, self.names) if stmt.value is not None else None,)
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
                and isinstance(stmt.targets[0], ast.Name):
            self.names[stmt.targets[0].id] = _literal(stmt.value, self.names)
            return None
        if isinstance(stmt, ast.AugAssign) and isinstance(stmt.op, ast.Add) \
                and isinstance(stmt.target, ast.Name):
            self.names[stmt.target.id] = _literal(
                ast.BinOp(stmt.target, ast.Add(), stmt.value), self.names)
            return None
        if isinstance(stmt, ast.If):
            return self._block(stmt.body if self._truth(stmt.test) else stmt.orelse)
        if isinstance(stmt, ast.Expr):
            self._expression_statement(stmt.value)
            return None
        if isinstance(stmt, ast.Pass):
            return None
        raise _Unread

    def _expression_statement(self, value: ast.expr) -> None:
        """A docstring, ``rules.extend(...)``/``append(...)``, or a call that cannot
        change a local (``logging.info(...)``: its receiver is not a local name)."""
        if isinstance(value, ast.Constant):
            return
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
            receiver = value.func.value
            if isinstance(receiver, ast.Name) and receiver.id in self.names:
                target = self.names[receiver.id]
                if not isinstance(target, list) or value.keywords or len(value.args) != 1:
                    raise _Unread
                arg = _literal(value.args[0], self.names)
                if value.func.attr == "append":
                    target.append(arg)
                elif value.func.attr == "extend" and isinstance(arg, (list, tuple)):
                    target.extend(arg)
                else:
                    raise _Unread
                return
            if isinstance(receiver, ast.Name) and receiver.id in ("logging", "logger", "log"):
                return
        raise _Unread

    def _truth(self, test: ast.expr) -> bool:
        if isinstance(test, ast.BoolOp):
            values = [self._truth(v) for v in test.values]
            return all(values) if isinstance(test.op, ast.And) else any(values)
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return not self._truth(test.operand)
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            left = _literal(test.left, self.names)
            right = _literal(test.comparators[0], self.names)
            op = test.ops[0]
            if isinstance(op, ast.Eq):
                return bool(left == right)
            if isinstance(op, ast.NotEq):
                return bool(left != right)
            if isinstance(op, ast.Is):
                return left is right
            if isinstance(op, ast.IsNot):
                return left is not right
            raise _Unread
        return bool(_literal(test, self.names))
