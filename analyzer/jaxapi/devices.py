"""How many devices a module sets up for itself, as its source says.

A script or test that simulates devices on the CPU says how many:
``jax.config.update("jax_num_cpu_devices", 8)`` or
``os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"`` (the config
option wins when both are set, as in JAX). ``JAX_PLATFORMS=cpu`` (or the
``jax_platforms`` option) pins the platform, so the count is then the device count
itself. Only unconditional settings count (the module's top level, ``if __name__ ==
"__main__":``, a function's top level), and none where the module checks the device
count or skips (``if jax.device_count() < 8``, ``skipTest``): code written for more
devices than the simulation may guard itself.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import List, Optional, Set, Tuple

import libcst as cst

from ..sources import parsed_text
from ..syntax import dotted

_HOST_COUNT = re.compile(r"--xla_force_host_platform_device_count=(\d+)")
_GUARDS = ("device_count", "devices()", "local_devices", "process_count")


@dataclass(frozen=True)
class DeviceSetup:
    """The device count a module sets up, and how."""

    count: int
    how: str  # the setting, as written
    cpu_pinned: bool  # the module pins the platform to the CPU


class _Scanner(cst.CSTVisitor):
    def __init__(self, module: cst.Module):
        self.module = module
        self.depth = 0  # inside a condition, loop or try: not unconditional
        self.config: List[Tuple[int, cst.CSTNode]] = []
        self.flags: List[Tuple[int, cst.CSTNode]] = []
        self.cpu = False
        self.guarded = False
        # generating a node's code is slow: only where the file spells what is looked for
        text = parsed_text(module) or module.code
        self.flags_spelled = "XLA_FLAGS" in text or "JAX_PLATFORMS" in text
        self.guards_spelled = any(g in text for g in _GUARDS)

    def _conditional(self, node: cst.CSTNode) -> None:
        self.depth += 1

    def _done(self, node: cst.CSTNode) -> None:
        self.depth -= 1

    visit_For = visit_While = visit_Try = visit_TryStar = _conditional
    leave_For = leave_While = leave_Try = leave_TryStar = _done  # type: ignore[assignment]  # libcst's visitor signatures per node type

    def visit_If(self, node: cst.If) -> None:
        if not _is_main_guard(node.test):
            self.depth += 1
        if self.guards_spelled and any(g in self.module.code_for_node(node.test)
                                       for g in _GUARDS):
            self.guarded = True

    def leave_If(self, node: cst.If) -> None:
        if not _is_main_guard(node.test):
            self.depth -= 1

    def visit_Comparison(self, node: cst.Comparison) -> None:
        if self.guards_spelled and any(g in self.module.code_for_node(node) for g in _GUARDS):
            self.guarded = True

    def visit_Call(self, node: cst.Call) -> None:
        name = dotted(node.func)
        if "skip" in name.rsplit(".", 1)[-1].lower():
            self.guarded = True
        if name.endswith("config.update") and len(node.args) >= 2:
            key = _string(node.args[0].value)
            value = node.args[1].value
            if key == "jax_num_cpu_devices" and isinstance(value, cst.Integer) and not self.depth:
                self.config.append((int(value.value), node))
            if key in ("jax_platforms", "jax_platform_name") and _string(value) == "cpu":
                self.cpu = True

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        if not self.flags_spelled:
            return
        code = self.module.code_for_node(node)
        if "XLA_FLAGS" in code and not self.depth:
            for m in _HOST_COUNT.finditer(code):
                self.flags.append((int(m.group(1)), node))
        if "JAX_PLATFORMS" in code and _PLATFORMS_CPU.search(code):
            self.cpu = True


def _is_main_guard(test: cst.BaseExpression) -> bool:
    return (isinstance(test, cst.Comparison) and isinstance(test.left, cst.Name)
            and test.left.value == "__name__")


def _string(e: cst.BaseExpression) -> Optional[str]:
    if isinstance(e, cst.SimpleString):
        v = e.evaluated_value
        return v if isinstance(v, str) else None
    return None


def _scan(module: cst.Module) -> Optional[DeviceSetup]:
    code = parsed_text(module) or module.code
    if "jax_num_cpu_devices" not in code and "xla_force_host_platform_device_count" not in code:
        return None
    try:  # Python's own parser is many times faster than a libcst walk
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        tree = None  # syntax newer than this Python, or too deep: libcst's walk
    if tree is not None:
        a = _AstScanner(code)
        a.visit(tree)
        guarded, cpu, found_ast = a.guarded, a.cpu, a.config or a.flags
        found: List[Tuple[int, object]] = list(found_ast)
    else:
        s = _Scanner(module)
        module.visit(s)
        guarded, cpu, found = s.guarded, s.cpu, list(s.config or s.flags)
    if guarded:
        return None
    counts: Set[int] = {n for n, _ in found}  # jax_num_cpu_devices wins over XLA_FLAGS
    if len(counts) != 1:
        return None
    n, node = found[0]
    if isinstance(node, str):
        how = node
    else:
        shown = node.body[0] if isinstance(node, cst.SimpleStatementLine) and node.body else node
        how = module.code_for_node(shown).strip()  # type: ignore[arg-type]  # a libcst node here
    if len(how) > 80:
        how = how[:77] + "..."
    return DeviceSetup(n, how, cpu)


def _ast_dotted(node: ast.AST) -> str:
    """``syntax.dotted`` for Python's ``ast`` (the scan's tree), not libcst's."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _ast_dotted(node.value)
        return f"{base}.{node.attr}" if base else ""
    return ""


def _ast_string(node: ast.AST) -> Optional[str]:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


class _AstScanner(ast.NodeVisitor):
    """``_Scanner`` on Python's ``ast``: the same settings, conditions and guards; a
    setting is kept as its source text."""

    def __init__(self, text: str) -> None:
        self.lines = [line.encode() for line in text.splitlines(keepends=True)]
        self.depth = 0
        self.config: List[Tuple[int, str]] = []
        self.flags: List[Tuple[int, str]] = []
        self.cpu = False
        self.guarded = False
        # a node's text is cut out only where the file spells what is looked for
        self.flags_spelled = "XLA_FLAGS" in text or "JAX_PLATFORMS" in text
        self.guards_spelled = any(g in text for g in _GUARDS)

    def _segment(self, node: ast.AST) -> str:
        """The node's source (``ast.get_source_segment`` splits the whole text per call)."""
        first, last = node.lineno - 1, node.end_lineno - 1  # type: ignore[attr-defined]  # stmt and expr nodes have them
        col, end = node.col_offset, node.end_col_offset  # type: ignore[attr-defined]  # UTF-8 byte offsets
        if first == last:
            raw = self.lines[first][col:end]
        else:
            raw = b"".join([self.lines[first][col:], *self.lines[first + 1:last],
                            self.lines[last][:end]])
        return raw.decode("utf-8", errors="replace")

    def _nested(self, node: ast.AST) -> None:
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_For = visit_AsyncFor = visit_While = visit_Try = _nested
    visit_TryStar = _nested

    def visit_If(self, node: ast.If) -> None:
        if self.guards_spelled and any(g in self._segment(node.test) for g in _GUARDS):
            self.guarded = True
        main = isinstance(node.test, ast.Compare) and isinstance(node.test.left, ast.Name) \
            and node.test.left.id == "__name__"
        self.depth += not main
        self.generic_visit(node)
        self.depth -= not main

    def visit_Compare(self, node: ast.Compare) -> None:
        if self.guards_spelled and any(g in self._segment(node) for g in _GUARDS):
            self.guarded = True
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        name = _ast_dotted(node.func)
        if "skip" in name.rsplit(".", 1)[-1].lower():
            self.guarded = True
        values = list(node.args) + [k.value for k in node.keywords]
        if name.endswith("config.update") and len(values) >= 2:
            key, value = _ast_string(values[0]), values[1]
            if key == "jax_num_cpu_devices" and isinstance(value, ast.Constant) \
                    and type(value.value) is int and not self.depth:
                self.config.append((value.value, self._segment(node).strip()))
            if key in ("jax_platforms", "jax_platform_name") and _ast_string(value) == "cpu":
                self.cpu = True
        self.generic_visit(node)

    def generic_visit(self, node: ast.AST) -> None:
        if self.flags_spelled and isinstance(node, ast.stmt) and not isinstance(node, _COMPOUND):
            code = self._segment(node)
            if "XLA_FLAGS" in code and not self.depth:
                for m in _HOST_COUNT.finditer(code):
                    self.flags.append((int(m.group(1)), code.strip()))
            if "JAX_PLATFORMS" in code and _PLATFORMS_CPU.search(code):
                self.cpu = True
        super().generic_visit(node)


_COMPOUND = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try, ast.With, ast.AsyncWith,
             ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef) + \
    ((ast.TryStar,) if hasattr(ast, "TryStar") else ()) + \
    ((ast.Match,) if hasattr(ast, "Match") else ())
_PLATFORMS_CPU = re.compile(r"""JAX_PLATFORMS['"]\s*[\],:]\s*=?\s*['"]cpu['"]""")


_CACHE: List[Tuple[cst.Module, Optional[DeviceSetup]]] = []


def device_setup(module: cst.Module) -> Optional[DeviceSetup]:
    """The device count ``module`` sets up for itself, or None when it sets none (or
    guards code by the device count)."""
    for m, found in _CACHE:
        if m is module:
            return found
    text = parsed_text(module)  # the scan generates code statement by statement: skip it
    if text is not None and "jax_num_cpu_devices" not in text and "device_count=" not in text:
        found = None  # when the source spells neither setting
    else:
        found = _scan(module)
    _CACHE.insert(0, (module, found))
    del _CACHE[4:]
    return found
