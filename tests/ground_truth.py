"""Ground truth for inference: run a program under JAX and record ``jax.typeof`` at
every assignment, to hold the analyzer's inferred types against.

``record(path)`` runs the program in a subprocess on 8 CPU devices (as ``__main__``)
after instrumenting its AST in memory (the file on disk is never changed): after each
assignment, every assigned name whose value is a ``jax.Array`` (or a tracer) has its
type recorded under (line, column, name), the position of the name in the source.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from typing import Dict, List, Set, Tuple

Key = Tuple[int, int, str]


def _names(target: ast.AST) -> List[ast.Name]:
    if isinstance(target, ast.Name):
        return [target]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for e in target.elts for n in _names(e)]
    return []


class _Instrument(ast.NodeTransformer):
    def _body(self, stmts: List[ast.stmt]) -> List[ast.stmt]:
        out: List[ast.stmt] = []
        for s in stmts:
            s = self.visit(s)
            out.append(s)
            targets: List[ast.AST] = []
            if isinstance(s, ast.Assign):
                targets = list(s.targets)
            elif isinstance(s, ast.AnnAssign) and s.value is not None:
                targets = [s.target]
            for t in targets:
                for n in _names(t):
                    call = ast.parse(f"__sc_record__({n.lineno}, {n.col_offset + 1}, "
                                     f"{n.id!r}, {n.id})").body[0]
                    out.append(ast.copy_location(call, s))
        return out

    def generic_visit(self, node: ast.AST) -> ast.AST:
        for field in ("body", "orelse", "finalbody"):
            val = getattr(node, field, None)
            if isinstance(val, list) and val and isinstance(val[0], ast.stmt):
                setattr(node, field, self._body(val))
        for h in getattr(node, "handlers", []) or []:
            h.body = self._body(h.body)
        for c in getattr(node, "cases", []) or []:
            c.body = self._body(c.body)
        return node


_DRIVER = r"""
import ast, json, os, sys
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax
jax.config.update("jax_num_cpu_devices", 8)
sys.path.insert(0, {tests!r})
from ground_truth import instrumented
path = {path!r}
seen = {{}}
def __sc_record__(line, col, name, value):
    if isinstance(value, (jax.Array, jax.core.Tracer)):
        seen.setdefault(f"{{line}}:{{col}}:{{name}}", set()).add(str(jax.typeof(value)))
code = instrumented(path)
ns = {{"__name__": "__main__", "__file__": path, "__sc_record__": __sc_record__}}
sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
error = None
try:
    exec(code, ns)
except BaseException as e:
    error = f"{{type(e).__name__}}: {{e}}"
print("@@RESULT@@" + json.dumps({{"types": {{k: sorted(v) for k, v in seen.items()}},
                                  "error": error}}))
"""


def instrumented(path: str):
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read(), filename=path)
    tree = _Instrument().visit(tree)
    tree.body = _Instrument()._body(tree.body)
    ast.fix_missing_locations(tree)
    return compile(tree, path, "exec")


def record(path: str, timeout: float = 300) -> Tuple[Dict[Key, Set[str]], str | None]:
    """(types recorded at each (line, column, name), the error the program raised)."""
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ)
    env.pop("XLA_FLAGS", None)
    proc = subprocess.run([sys.executable, "-c", _DRIVER.format(tests=here, path=path)],
                          capture_output=True, text=True, timeout=timeout, env=env)
    marker = [l for l in proc.stdout.splitlines() if l.startswith("@@RESULT@@")]
    if not marker:
        raise RuntimeError(f"recording {path} failed:\n{proc.stderr[-3000:]}")
    data = json.loads(marker[-1][len("@@RESULT@@"):])
    out: Dict[Key, Set[str]] = {}
    for k, v in data["types"].items():
        line, col, name = k.split(":", 2)
        out[(int(line), int(col), name)] = set(v)
    return out, data["error"]
