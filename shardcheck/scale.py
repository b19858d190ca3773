"""``shardcheck confirm --mesh data=64,model=8``: the program at production scale, with no
devices.

The analyzer finds each call of a jitted function and the sharding types of its
inputs (``engine.jit_calls``). One subprocess imports every file, instrumented in
memory as for a device run but not as ``__main__`` (its ``if __name__ == "__main__"``
block does not run), builds ``ShapeDtypeStruct`` inputs of those types on an
``AbstractMesh`` of the production shape (``sharding_types.abstract_array``) and
traces — never compiles — each function under ``jax.sharding.use_abstract_mesh``.
JAX's trace-time errors at that scale and the types it records inside the traced
functions come back; the analyzer, re-run with every mesh in the source replaced by the
production one, is held against both.

The mesh keeps the source's global shapes: what changes is how many ways each
dimension is split, so a batch of 16 that 2 'data' devices divide fails on 64.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from shardcheck.confirm import Key, Row

_DRIVER = r"""
import json, os, sys, time, traceback
import jax
from jax.sharding import AbstractMesh, AxisType
import sharding_types as st
from shardcheck.confirm import instrumented

plan = json.loads(sys.stdin.read())
names = [a for a, _ in plan["mesh"]]
sizes = tuple(s for _, s in plan["mesh"])

def build(tree, amesh):
    if "type" in tree:
        return st.abstract_array(tree["type"], amesh)
    if "const" in tree:
        return tree["const"]
    if "tuple" in tree:
        return tuple(build(t, amesh) for t in tree["tuple"])
    if "list" in tree:
        return [build(t, amesh) for t in tree["list"]]
    return {k: build(t, amesh) for k, t in tree["dict"]}

def failure(e, path, stage="trace"):
    lines = [f.lineno for f in traceback.extract_tb(e.__traceback__)
             if os.path.abspath(f.filename) == os.path.abspath(path)]
    msg = str(e).strip()
    return {"type": type(e).__name__, "message": msg.splitlines()[0] if msg else "",
            "line": lines[-1] if lines else None, "trace": lines, "stage": stage}

results = []
for item in plan["files"]:
    path = item["path"]
    out = {"path": path, "import_error": None, "calls": [], "types": []}
    rec = st.Recorder()
    ns = {"__name__": "__shardcheck_confirm__", "__file__": path, "__sc_record__": rec}
    sys.path.insert(0, os.path.dirname(path))
    try:
        exec(instrumented(path), ns)
    except BaseException as e:
        out["import_error"] = failure(e, path)
        results.append(out)
        continue
    for call in item["calls"]:
        t0 = time.perf_counter()
        res = {"index": call["index"], "error": None, "outputs": None, "seconds": 0.0}
        try:
            program = dict(zip(call["mesh"]["names"], call["mesh"]["types"]))
            amesh = AbstractMesh(sizes, tuple(names), axis_types=tuple(
                getattr(AxisType, program.get(a, "Explicit")) for a in names))
            fn = ns[call["target"]]
            if call["wrap"]:
                fn = jax.jit(fn)
            try:
                args = [build(t, amesh) for t in call["args"]]
                kwargs = {k: build(t, amesh) for k, t in call["kwargs"].items()}
            except ValueError as e:
                res["error"] = failure(e, path, "inputs")
                out["calls"].append(res)
                continue
            with rec, jax.sharding.use_abstract_mesh(amesh):
                traced = fn.trace(*args, **kwargs)
            res["outputs"] = [str(a) for a in traced.jaxpr.out_avals]
        except BaseException as e:
            res["error"] = failure(e, path)
        res["seconds"] = time.perf_counter() - t0
        out["calls"].append(res)
    out["types"] = [[list(k), sorted(v)] for k, v in rec.types.items()]
    results.append(out)
print("@@SCALE@@" + json.dumps(results))
"""


@dataclass
class CallResult:
    target: str
    rows: Tuple[int, ...]  # the lines that make this call
    skipped: str = ""  # why it was not traced
    error: Optional[dict] = None  # what JAX raised at this scale
    predicted: List[str] = field(default_factory=list)  # static findings at this scale
    outputs: Optional[List[str]] = None  # the traced function's result types
    seconds: float = 0.0


@dataclass
class ScaleResult:
    path: str
    mesh: Tuple[Tuple[str, int], ...]
    calls: List[CallResult]
    rows: List[Row]
    import_error: Optional[dict] = None

    @property
    def ok(self) -> bool:
        return (self.import_error is None and not any(c.error for c in self.calls)
                and not any(r.status == "disagree" for r in self.rows))


def mesh_label(mesh: Sequence[Tuple[str, int]]) -> str:
    total = 1
    for _, s in mesh:
        total *= s
    return f"{', '.join(f'{a}={s}' for a, s in mesh)} ({total} devices, abstract)"


def run_plan(plan: dict, timeout: float = 600) -> List[dict]:
    """Trace every planned call in one subprocess; JAX never sees a device."""
    env = dict(os.environ)
    env["JAX_PLATFORMS"] = "cpu"  # tracing needs no accelerator: never initialise one
    proc = subprocess.run([sys.executable, "-c", _DRIVER], input=json.dumps(plan),
                          capture_output=True, text=True, timeout=timeout, env=env)
    marker = [l for l in proc.stdout.splitlines() if l.startswith("@@SCALE@@")]
    if not marker:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        err = {"type": "RunFailed", "message": tail[0], "line": None, "trace": []}
        return [{"path": f["path"], "import_error": err, "calls": [], "types": []}
                for f in plan["files"]]
    return json.loads(marker[-1][len("@@SCALE@@"):])


def confirm_scale(paths: Sequence[str], mesh, config=None, project=None) -> List[ScaleResult]:
    """Trace each file's jitted functions on ``mesh`` (a ``DeclaredMesh``)."""
    from shardcheck.analyzer.config import Config
    from shardcheck.analyzer.engine import check_source, infer_types, jit_calls
    from shardcheck.analyzer.ftypes import ERROR
    base = config or Config()
    scaled = dataclasses.replace(base, scale_mesh=mesh, _codes=None)
    axes = tuple(mesh.axes)
    plan_files, sites_by_path = [], {}
    for path in paths:
        with open(path, "rb") as fh:
            source = fh.read()
        sites = jit_calls(source, path, base, project)
        sites_by_path[path] = (source, sites)
        calls = [{"index": i, "target": s.target, "wrap": s.wrap, "args": s.args,
                  "kwargs": s.kwargs, "mesh": s.mesh}
                 for i, s in enumerate(sites) if not s.skipped]
        plan_files.append({"path": os.path.abspath(path), "calls": calls})
    runs = run_plan({"mesh": [list(a) for a in axes], "files": plan_files}) if plan_files else []
    results = []
    for path, run in zip(paths, runs):
        source, sites = sites_by_path[path]
        traced = {c["index"]: c for c in run["calls"]}
        static: Dict[Key, Optional[str]] = {(t.row, t.column, t.name): t.type
                                            for t in infer_types(source, path, scaled, project)}
        errors = [f for f in check_source(source, path, scaled, project) if f.severity == ERROR]
        calls = []
        for i, s in enumerate(sites):
            c = CallResult(s.target, s.rows, s.skipped)
            t = traced.get(i)
            if t is not None:
                c.error, c.outputs, c.seconds = t["error"], t["outputs"], t["seconds"]
            if c.error is not None:
                lines = set(c.error.get("trace") or []) | set(s.rows)
                near = [f for f in errors if f.row in lines]
                c.predicted = [f"{f.code} {f.name} (line {f.row})" for f in (near or errors)]
            calls.append(c)
        runtime = {tuple(k): sorted(v) for k, v in run["types"]}
        rows = []
        for key in sorted(runtime):
            st_t, rt = static.get(key), runtime[key]  # type: ignore[call-overload]
            status = ("unknown" if st_t is None else "agree" if rt == [st_t] else "disagree")
            rows.append(Row(path, key[0], key[1], key[2], st_t, rt, status))
        results.append(ScaleResult(path, axes, calls, rows, run.get("import_error")))
    return results


def render_text(results: List[ScaleResult]) -> str:
    out = []
    for res in results:
        out.append(f"{res.path} at {mesh_label(res.mesh)}")
        if res.import_error is not None:
            e = res.import_error
            out.append(f"  importing it raised {e['type']}: {e['message'][:200]}")
        if not res.calls and res.import_error is None:
            out.append("  no call of a jitted function found")
        for c in res.calls:
            at = f"{c.target} (called at line {', '.join(map(str, c.rows))})"
            if c.skipped:
                out.append(f"  {at}: not traced: {c.skipped}")
            elif c.error is not None:
                line = f" at line {c.error['line']}" if c.error.get("line") else ""
                what = ("its inputs cannot be built at this scale" if c.error.get("stage") == "inputs"
                        else f"JAX raised {c.error['type']}{line}")
                out.append(f"  {at}: {what}: {c.error['message'][:240]}")
                out.append("    " + (f"static analysis at this scale: {', '.join(c.predicted)}"
                                     if c.predicted else "NOT predicted by the static analysis at this scale"))
            else:
                out.append(f"  {at}: traced in {c.seconds * 1000:.0f} ms -> "
                           f"{', '.join(c.outputs or []) or 'no outputs'}")
        w = max([len(f"{r.line}:{r.column} {r.name}") for r in res.rows] + [10])
        for r in res.rows:
            where = f"{r.line}:{r.column} {r.name}"
            out.append(f"    {where:<{w}}  {r.static or '?':<34} {' | '.join(r.runtime):<34} {r.status}")
    calls = [c for res in results for c in res.calls]
    failed = sum(1 for c in calls if c.error is not None)
    traced = sum(1 for c in calls if not c.skipped and c.error is None)
    skipped = sum(1 for c in calls if c.skipped)
    agree = sum(r.status == "agree" for res in results for r in res.rows)
    disagree = sum(r.status == "disagree" for res in results for r in res.rows)
    mesh = mesh_label(results[0].mesh) if results else ""
    out.append(f"at {mesh}: {traced} call(s) traced, {failed} raised, {skipped} not traced; "
               f"{agree} type(s) agree, {disagree} disagree, in {len(results)} file(s)")
    return "\n".join(out)


def render_json(results: List[ScaleResult]) -> str:
    return json.dumps([{"path": r.path, "ok": r.ok, "mesh": dict(r.mesh),
                        "import_error": r.import_error,
                        "calls": [asdict(c) for c in r.calls],
                        "rows": [asdict(x) for x in r.rows]} for r in results], indent=2)
