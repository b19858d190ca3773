"""``shardcheck confirm --mesh data=64,model=8``: the program at production scale, with no
devices; and ``shardcheck confirm prog.py::fn``: one jitted function run alone.

The analyzer finds each call of a jitted function and the sharding types of its
inputs (``inferred_types.jit_calls``). One subprocess imports every file, instrumented in
memory as for a device run but not as ``__main__`` (its ``if __name__ == "__main__"``
block does not run), builds ``ShapeDtypeStruct`` inputs of those types on an
``AbstractMesh`` of the production shape (``sharding_types.abstract_array``) and
traces — never compiles — each function under ``jax.sharding.use_abstract_mesh``.
JAX's trace-time errors at that scale and the types it records inside the traced
functions come back; the analyzer, re-run with every mesh in the source replaced by the
production one, is held against both.

The mesh keeps the source's global shapes: what changes is how many ways each
dimension is split, so a batch of 16 that 2 'data' devices divide fails on 64.

Without a production mesh, the same driver runs the named functions on real devices
instead: each call's mesh is the program's own (``jax.make_mesh`` of the sizes the
analyzer read), its inputs are zeros of the inferred types placed with
``jax.device_put``, and the function compiles and runs, so XLA's dump of it gives the
collective report as for a whole program.
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import asdict, dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from sharding_types import MeshModel, PartialMesh
from shardcheck.confirm import hlo
from shardcheck.confirm import sandbox as rn
from shardcheck.confirm.programs import Key, Row, compare

_DRIVER = r"""
import json, os, sys, time, traceback
import jax
from jax.sharding import AbstractMesh, AxisType
import sharding_types as st
from shardcheck.confirm.instrument import instrumented

with open(sys.argv[1], encoding="utf-8") as fh:  # stdin is the program's, and closed
    plan = json.load(fh)
devices = plan.get("devices")
if devices:
    jax.config.update("jax_num_cpu_devices", devices)  # the CPU backend; a GPU is used as is
prod = plan.get("mesh")

def concrete(sds):
    import jax.numpy as jnp
    if jax.dtypes.issubdtype(sds.dtype, jax.dtypes.prng_key):
        n = 1
        for d in sds.shape:
            n *= d
        value = jax.random.split(jax.random.key(0), n).reshape(sds.shape)
    else:
        value = jnp.zeros(sds.shape, sds.dtype)
    return jax.device_put(value, sds.sharding)

def make_mesh(call):
    program = dict(zip(call["mesh"]["names"], call["mesh"]["types"]))
    if prod is None:  # the program's own mesh, on devices
        return jax.make_mesh(tuple(call["mesh"]["sizes"]), tuple(call["mesh"]["names"]),
                             axis_types=tuple(getattr(AxisType, t) for t in call["mesh"]["types"]))
    names = [a for a, _ in prod]
    return AbstractMesh(tuple(s for _, s in prod), tuple(names), axis_types=tuple(
        getattr(AxisType, program.get(a, "Explicit")) for a in names))

def build(tree, amesh):
    if "type" in tree:
        sds = st.abstract_array(tree["type"], amesh)
        return concrete(sds) if prod is None else sds
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
            amesh = make_mesh(call)
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
            if prod is None:
                with rec, jax.set_mesh(amesh):
                    outs = jax.block_until_ready(fn(*args, **kwargs))
                res["outputs"] = [str(jax.typeof(o)) for o in jax.tree.leaves(outs)]
            else:
                with rec, jax.sharding.use_abstract_mesh(amesh):
                    traced = fn.trace(*args, **kwargs)
                res["outputs"] = [str(a) for a in traced.jaxpr.out_avals]
        except BaseException as e:
            res["error"] = failure(e, path)
        res["seconds"] = time.perf_counter() - t0
        out["calls"].append(res)
    out["types"] = [[list(k), sorted(v)] for k, v in rec.types.items()]
    results.append(out)
with open(plan["result"] + ".part", "w", encoding="utf-8") as fh:  # not stdout: the program's
    json.dump({"results": results, "backend": jax.default_backend(),
               "devices": jax.device_count() if prod is None else 0}, fh)
os.replace(plan["result"] + ".part", plan["result"])
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
    mesh: Optional[MeshModel]  # the production mesh; None when run on devices
    calls: List[CallResult]
    rows: List[Row]
    import_error: Optional[dict] = None
    collectives: List[hlo.HloModule] = field(default_factory=list)  # on devices
    max_bytes: Optional[int] = None
    backend: str = ""
    devices: int = 0
    named: bool = False  # the user named the functions (PATH::NAME): each must run

    @property
    def ok(self) -> bool:
        if self.import_error is not None or any(r.status == "disagree" for r in self.rows):
            return False
        if self.named and any(c.skipped for c in self.calls):
            return False
        if self.max_bytes is not None and any(m.bytes > self.max_bytes for m in self.collectives):
            return False
        if self.mesh is not None:  # at production scale, any error is news
            return not any(c.error for c in self.calls)
        return not any(c.error for c in self.calls)  # on devices, as for a program: any fails


def mesh_label(mesh: MeshModel) -> str:
    """``data=64, model=8 (512 devices, abstract)``."""
    axes = ", ".join(f"{a}={s}" for a, s in zip(mesh.axis_names, mesh.axis_sizes))
    return f"{axes} ({mesh.size} devices, abstract)"


def _mesh_plan(mesh: Optional[PartialMesh]) -> Optional[dict]:
    """A call's mesh as the driver reads it: names, type names, sizes (a size None)."""
    if mesh is None or mesh.names is None or mesh.types is None:
        return None
    return {"names": list(mesh.names), "types": [t.name for t in mesh.types],
            "sizes": list(mesh.sizes) if mesh.sizes is not None else None}


def run_plan(plan: dict, timeout: Optional[float] = 600, dump_dir: Optional[str] = None,
             devices: Optional[rn.DevicePlan] = None) -> dict:
    """Run every planned call in one subprocess, sandboxed as a program is
    (``confirm_run``): traced on the production mesh (JAX never sees a device), or, with
    no ``plan["mesh"]``, run on devices (``dump_dir``: XLA dumps the compiled functions
    there; ``devices``: where, by default the CPU)."""
    from shardcheck.confirm.programs import _dump_flags
    if plan.get("mesh") is not None:  # tracing needs no accelerator: never initialise one
        where, flags = rn.DevicePlan("cpu", 1), None
    else:
        where = devices or rn.DevicePlan("cpu", plan.get("devices") or rn.DEFAULT_CPU_DEVICES)
        flags = _dump_flags(dump_dir, sorted({c["target"] for f in plan["files"]
                                              for c in f["calls"]})) if dump_dir else None
    with rn.Sandbox() as box:
        plan_path = os.path.join(box.root, "plan.json")
        with open(plan_path, "w", encoding="utf-8") as fh:
            json.dump(dict(plan, result=box.result), fh)
        outcome = rn.run_sandboxed(_DRIVER, rn.program_env(where, flags), timeout, box.cwd,
                                   box.result, [plan_path])
    failed = rn.failure(outcome, timeout)
    if outcome.results is None or failed is not None:
        err = failed or {"type": "RunFailed", "message": "no results", "line": None, "trace": []}
        return {"results": [{"path": f["path"], "import_error": err, "calls": [], "types": []}
                            for f in plan["files"]], "backend": "", "devices": 0}
    return outcome.results


def confirm_scale(paths: Sequence[str], mesh: Optional[MeshModel] = None, config=None,
                  project=None, functions: Optional[Dict[str, Sequence[str]]] = None,
                  devices: int = 8, max_bytes: Optional[int] = None,
                  timeout: Optional[float] = rn.DEFAULT_TIMEOUT,
                  where: Optional[rn.DevicePlan] = None) -> List[ScaleResult]:
    """Trace each file's jitted calls on ``mesh`` (the production mesh), or with no mesh
    run them on ``devices`` CPU devices on the program's own meshes. ``functions``:
    per path, the function names to keep (all when a path has none)."""
    import shutil
    import tempfile

    from shardcheck.analyzer.config import Config
    from shardcheck.analyzer.engine import check_source
    from shardcheck.analyzer.inferred_types import JitCallSite, infer_types, jit_calls
    from shardcheck.analyzer.ftypes import ERROR
    base = config or Config()
    if where is not None:
        devices = where.devices
    scaled = dataclasses.replace(base, scale_mesh=mesh, _codes=None) if mesh is not None else base
    if max_bytes is None:
        max_bytes = base.max_collective_bytes
    plan_files, sites_by_path = [], {}
    for path in paths:
        with open(path, "rb") as fh:
            source = fh.read()
        sites = jit_calls(source, path, base, project)
        wanted = (functions or {}).get(path)
        if wanted:
            sites = [s for s in sites if s.target in wanted]
            found = {s.target for s in sites}
            sites += [JitCallSite((), n, False, None, None, None,
                                  f"no call of a jitted function {n} found in this file")
                      for n in wanted if n not in found]
        if mesh is None:  # on devices the program's mesh must be fully known
            sites = [s if s.skipped or (s.mesh is not None and s.mesh.model() is not None)
                     else dataclasses.replace(s, skipped="the sizes of the mesh at the call are unknown")
                     for s in sites]
        sites_by_path[path] = (source, sites)
        planned = [{"index": i, "target": s.target, "wrap": s.wrap, "args": s.args,
                    "kwargs": s.kwargs, "mesh": _mesh_plan(s.mesh)}
                   for i, s in enumerate(sites) if not s.skipped]
        plan_files.append({"path": os.path.abspath(path), "calls": planned})
    plan = {"mesh": [list(a) for a in zip(mesh.axis_names, mesh.axis_sizes)]
            if mesh is not None else None, "devices": devices, "files": plan_files}
    dump_dir = tempfile.mkdtemp(prefix="shardcheck-hlo-") if mesh is None else None
    try:
        run = run_plan(plan, timeout, dump_dir, where) if plan_files else {"results": []}
        modules = hlo.read_dump(dump_dir) if dump_dir else []
    finally:
        if dump_dir:
            shutil.rmtree(dump_dir, ignore_errors=True)
    results = []
    for path, res in zip(paths, run["results"]):
        source, sites = sites_by_path[path]
        traced = {c["index"]: c for c in res["calls"]}
        static: Dict[Key, Optional[str]] = {(t.row, t.column, t.name): t.type
                                            for t in infer_types(source, path, scaled, project)}
        errors = [f for f in check_source(source, path, scaled, project) if f.severity == ERROR]
        calls = []
        for i, s in enumerate(sites):
            c = CallResult(s.target, s.rows, s.skipped)
            t = traced.get(i)
            if t is not None:
                c.error, c.outputs, c.seconds = t["error"], t["outputs"], t["seconds"]
            elif not c.skipped:
                c.skipped = "the file failed to import" if res.get("import_error") else "not reached"
            if c.error is not None:
                lines = set(c.error.get("trace") or []) | set(s.rows)
                near = [f for f in errors if f.row in lines]
                c.predicted = [f"{f.code} {f.name} (line {f.row})" for f in (near or errors)]
            calls.append(c)
        runtime: Dict[Key, List[str]] = {(k[0], k[1], k[2]): sorted(v) for k, v in res["types"]}
        rows = []
        for key in sorted(runtime):
            st_t, rt = static.get(key), runtime[key]
            status, reasons = compare(st_t, rt)
            rows.append(Row(path, key[0], key[1], key[2], st_t, rt, status, reasons))
        mine = [m for m in modules if any(
            os.path.abspath(c.file) == os.path.abspath(path) for c in m.collectives)
            or m.function in {c.target for c in calls}] if len(paths) > 1 else modules
        from shardcheck.confirm.programs import _distinct
        results.append(ScaleResult(path, mesh, calls, rows, res.get("import_error"),
                                   _distinct(mine), max_bytes, run.get("backend", ""),
                                   run.get("devices", 0), bool((functions or {}).get(path))))
    return results


def render_text(results: List[ScaleResult]) -> str:
    out = []
    from shardcheck.confirm.programs import render_collectives, render_reasons
    for res in results:
        out.append(f"{res.path} at {mesh_label(res.mesh)}" if res.mesh is not None else
                   f"{res.path} (named functions alone, {res.devices} {res.backend} devices)")
        if res.import_error is not None:
            e = res.import_error
            out.append(f"  importing it {e['message']}" if e["type"] == "Timeout" else
                       f"  importing it raised {e['type']}: {rn.shorten(e['message'], 200)}")
        if not res.calls and res.import_error is None:
            out.append("  no call of a jitted function found")
        for c in res.calls:
            at = (f"{c.target} (called at line {', '.join(map(str, c.rows))})" if c.rows
                  else c.target)
            if c.skipped:
                out.append(f"  {at}: not traced: {c.skipped}")
            elif c.error is not None:
                line = f" at line {c.error['line']}" if c.error.get("line") else ""
                what = ("its inputs cannot be built at this scale" if c.error.get("stage") == "inputs"
                        else f"JAX raised {c.error['type']}{line}")
                out.append(f"  {at}: {what}: {rn.shorten(c.error['message'], 240)}")
                out.append("    " + (f"static analysis at this scale: {', '.join(c.predicted)}"
                                     if c.predicted else "NOT predicted by the static analysis at this scale"))
            else:
                verb = "traced" if res.mesh is not None else "ran"
                out.append(f"  {at}: {verb} in {c.seconds * 1000:.0f} ms -> "
                           f"{', '.join(c.outputs or []) or 'no outputs'}")
        w = max([len(f"{r.line}:{r.column} {r.name}") for r in res.rows] + [10])
        for r in res.rows:
            where = f"{r.line}:{r.column} {r.name}"
            out.append(f"    {where:<{w}}  {r.static or '?':<34} {' | '.join(r.runtime):<34} {r.status}")
            out.extend(render_reasons(r, "      "))
        out.extend(render_collectives(res))
    calls = [c for res in results for c in res.calls]
    failed = sum(1 for c in calls if c.error is not None)
    traced = sum(1 for c in calls if not c.skipped and c.error is None)
    skipped = sum(1 for c in calls if c.skipped)
    agree = sum(r.status == "agree" for res in results for r in res.rows)
    disagree = sum(r.status == "disagree" for res in results for r in res.rows)
    at_scale = results[0].mesh if results else None
    where = f"at {mesh_label(at_scale)}" if at_scale is not None else "on devices"
    verb = "traced" if at_scale is not None else "run"
    out.append(f"{where}: {traced} call(s) {verb}, {failed} raised, {skipped} not {verb}; "
               f"{agree} type(s) agree, {disagree} disagree, in {len(results)} file(s)")
    return "\n".join(out)


def render_json(results: List[ScaleResult]) -> str:
    return json.dumps(json_rows(results), indent=2)


def json_rows(results: List[ScaleResult]) -> List[dict]:
    from shardcheck.confirm.programs import module_json
    return [{"path": r.path, "ok": r.ok, "mesh": r.mesh.shape if r.mesh is not None else None,
             "backend": r.backend or None, "devices": r.devices or None,
             "import_error": r.import_error,
             "calls": [asdict(c) for c in r.calls],
             "rows": [asdict(x) for x in r.rows],
             "max_collective_bytes": r.max_bytes,
             "collectives": [module_json(m, r.max_bytes) for m in r.collectives]} for r in results]
