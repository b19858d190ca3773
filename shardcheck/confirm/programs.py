"""``shardcheck confirm``: run programs under JAX and hold the static types against JAX's.

Each program runs in a subprocess as ``__main__``, sandboxed as a test runner would run
it and on the devices a user would choose (``shardcheck.confirm_run``: the accelerator
when it has the devices the source's meshes need, else that many virtual CPU devices,
at least 8), after its AST is instrumented in memory — the file on disk is never
touched: after every assignment, each assigned name holding a JAX array has
``jax.typeof`` recorded (through ``sharding_types.Recorder``) under its line, column
and name. The analyzer's inferred type for the same position
must be exactly that type; where it is not, ``sharding_types.mismatch_reasons`` says
why (the row's ``reasons``).

XLA dumps each of the file's jitted functions after optimisation (``--xla_dump_to``, to
a temporary directory); ``shardcheck.hlo`` reads the collectives out of that text, and
``max_bytes`` fails a file whose function moves more than that per device per call.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import tempfile
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Optional, Set, Tuple

from sharding_types import ShardingSyntaxError, mismatch_reasons, parse
from shardcheck.confirm import sandbox as rn
from shardcheck.confirm import hlo

Key = Tuple[int, int, str]
# how the two sides read in a disagreement's reasons: "dim 1: JAX says size 1, the
# analyzer says 8"
_WORDS = ("JAX says", "the analyzer says")


def _names(target: ast.AST) -> List[ast.Name]:
    if isinstance(target, ast.Name):
        return [target]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for e in target.elts for n in _names(e)]
    return []


class _Instrument(ast.NodeTransformer):
    def body(self, stmts: List[ast.stmt]) -> List[ast.stmt]:
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
                    call = ast.parse(f"__sc_record__(({n.lineno}, {n.col_offset + 1}, "
                                     f"{n.id!r}), {n.id})").body[0]
                    out.append(ast.copy_location(call, s))
        return out

    def generic_visit(self, node: ast.AST) -> ast.AST:
        for attr in ("body", "orelse", "finalbody"):
            val = getattr(node, attr, None)
            if isinstance(val, list) and val and isinstance(val[0], ast.stmt):
                setattr(node, attr, self.body(val))
        for h in getattr(node, "handlers", []) or []:
            h.body = self.body(h.body)
        for c in getattr(node, "cases", []) or []:
            c.body = self.body(c.body)
        return node


def instrumented(path: str):
    """``path`` compiled with a record call after every assignment."""
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read(), filename=path)
    tree.body = _Instrument().body(tree.body)
    ast.fix_missing_locations(tree)
    return compile(tree, path, "exec")


_DRIVER = r"""
import json, os, sys, traceback
import jax
jax.config.update("jax_num_cpu_devices", {devices})  # the CPU backend; a GPU is used as is
import sharding_types as st
from shardcheck.confirm.programs import instrumented
path, result_path = {path!r}, {result!r}
rec = st.Recorder()
ns = {{"__name__": "__main__", "__file__": path, "__sc_record__": rec}}
sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
sys.argv = [path]
error, status, driver_pid, real_exit = None, 0, os.getpid(), os._exit


def where(tb):
    return [f.lineno for f in traceback.extract_tb(tb)
            if os.path.abspath(f.filename) == os.path.abspath(path)]


def write_results():
    # a file the program cannot reach or replace (unlike sys.stdout); written once
    global write_results
    write_results = lambda: None
    try:
        backend, devices = jax.default_backend(), jax.devices()
        kind, count = devices[0].device_kind, len(devices)
    except Exception:  # the backend did not start: the error says why
        backend, kind, count = "", "", 0
    data = {{"types": [[list(k), sorted(v)] for k, v in rec.types.items()], "error": error,
             "status": status, "backend": backend, "device_kind": kind, "devices": count}}
    with open(result_path + ".part", "w") as fh:
        json.dump(data, fh)
    os.replace(result_path + ".part", result_path)


def exit_now(n):  # os._exit skips every handler: the results are written first
    global error, status
    if os.getpid() == driver_pid:
        status = n
        if n:
            error = {{"type": "os._exit", "message": f"exited with status {{n}}",
                      "line": None, "trace": []}}
        write_results()
    real_exit(n)


os._exit = exit_now
with rec:
    try:
        exec(instrumented(path), ns)
    except SystemExit as e:  # sys.exit(0), sys.exit(main()) or absl's app.run end normally
        code = e.code
        if code not in (None, 0):
            status = code if isinstance(code, int) else 1
            text = "" if isinstance(code, int) else f": {{code}}"
            lines = where(e.__traceback__)
            error = {{"type": "SystemExit", "message": f"exited with status {{status}}{{text}}",
                      "line": lines[-1] if lines else None, "trace": lines}}
    except BaseException as e:
        lines = where(e.__traceback__)
        status = 1
        error = {{"type": type(e).__name__, "message": str(e).splitlines()[0] if str(e) else "",
                  "line": lines[-1] if lines else None, "trace": lines}}
write_results()
os._exit = real_exit
"""


@dataclass
class Row:
    path: str
    line: int
    column: int
    name: str
    static: Optional[str]
    runtime: List[str]
    status: str  # agree | disagree | unknown (no static type) | not-run
    reasons: List[str] = field(default_factory=list)  # why a disagreement disagrees


def compare(static: Optional[str], runtime: List[str]) -> Tuple[str, List[str]]:
    """The status of one position and, for a disagreement, why: ``static`` is the
    analyzer's type (None: unknown), ``runtime`` every type JAX recorded there."""
    if not runtime:
        return ("not-run" if static is not None else "unknown"), []
    if static is None:
        return "unknown", []
    reasons: List[str] = []
    for r in runtime:
        why = _differences(static, r)
        reasons += [f"{r}: {w}" for w in why] if len(runtime) > 1 else why
    if len(runtime) > 1:
        reasons.insert(0, f"JAX records {len(runtime)} different types here, the analyzer one")
    return ("agree" if not reasons else "disagree"), reasons


def _differences(static: str, runtime: str) -> List[str]:
    """How ``static`` differs from JAX's ``runtime`` type ([] when they are the same)."""
    if static == runtime:
        return []
    try:
        reasons = mismatch_reasons(parse(runtime), parse(static), exact=True, words=_WORDS)
    except ShardingSyntaxError as e:
        return [f"the types cannot be compared: {str(e).splitlines()[0]}"]
    return reasons or [f"the same type printed differently: JAX {runtime}, the analyzer {static}"]


@dataclass
class FileResult:
    path: str
    rows: List[Row]
    error: Optional[dict]  # what JAX raised (type, message, line), or how the run ended
    predicted: List[str]  # static error findings at the error's line
    backend: str = ""
    devices: int = 0
    collectives: List[hlo.HloModule] = field(default_factory=list)
    max_bytes: Optional[int] = None  # the budget per jitted function, per device per call
    device_kind: str = ""
    needs: Optional[int] = None  # the devices the meshes the source states need
    note: str = ""  # where it ran, when not where a user would expect
    not_run: str = ""  # why the program could not run here ("needs 8 devices; ...")
    seconds: float = 0.0

    @property
    def over_budget(self) -> List[hlo.HloModule]:
        if self.max_bytes is None:
            return []
        return [m for m in self.collectives if m.bytes > self.max_bytes]

    @property
    def ok(self) -> bool:
        """Ran to a clean end, every type agreed, within the collective budget (a failure
        a finding predicted still fails: the program is broken)."""
        if any(r.status == "disagree" for r in self.rows) or self.over_budget:
            return False
        return self.error is None and not self.not_run

    @property
    def verdict(self) -> str:
        """One word or phrase for the progress line: ok, disagree, failed, not run..."""
        if self.not_run:
            return "not run"
        if self.error is not None:
            if self.error["type"] == "Timeout":
                return self.error["message"]
            if self.error["type"] == "DiskFull":
                return "out of disk space"
            return "failed (predicted)" if self.predicted else "failed"
        return "disagree" if not self.ok else "ok"


def defined_functions(path: str) -> List[str]:
    """Names of the functions ``path`` defines (a jitted one compiles as ``jit_<name>``)."""
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read(), filename=path)
    names = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    if any(isinstance(n, ast.Lambda) for n in ast.walk(tree)):
        names.add("_lambda_")
    return sorted(names)


def _dump_flags(dump_dir: str, functions: List[str]) -> str:
    pattern = "jit_(" + "|".join(re.escape(f) for f in functions) + ")" if functions else "^$"
    return (f"--xla_dump_to={dump_dir} --xla_dump_hlo_as_text "
            f"--xla_dump_hlo_module_re={pattern}")


def run_program(path: str, devices: int = 8, timeout: Optional[float] = rn.DEFAULT_TIMEOUT,
                dump_dir: Optional[str] = None, plan: Optional[rn.DevicePlan] = None) -> dict:
    """Run ``path`` instrumented in a subprocess, as a test runner would (see
    ``confirm_run``): the recorded types, how it ended (``error``, ``status``) and where
    it ran. ``dump_dir``: XLA dumps the file's jitted functions there (optimised HLO)."""
    plan = plan or rn.DevicePlan("cpu", devices)
    flags = _dump_flags(dump_dir, defined_functions(path)) if dump_dir is not None else None
    env = rn.program_env(plan, flags)
    try:
        with rn.Sandbox() as box:
            code = _DRIVER.format(path=os.path.abspath(path), devices=plan.devices,
                                  result=box.result)
            outcome = rn.run_sandboxed(code, env, timeout, box.cwd, box.result)
    except OSError as e:  # no sandbox (a full disk, an unwritable TMPDIR): it did not run
        return {"types": [], "status": None, "backend": "", "device_kind": "", "devices": 0,
                "seconds": 0.0, "error": _no_sandbox(e)}
    run = outcome.results or {"types": [], "status": outcome.status, "backend": "",
                              "device_kind": "", "devices": 0}
    failed = rn.failure(outcome, timeout)
    if failed is not None:
        run["error"] = failed
    run["seconds"] = outcome.seconds
    return run


def _no_sandbox(e: OSError) -> dict:
    import errno
    if e.errno == errno.ENOSPC:
        return rn.out_of_space(tempfile.gettempdir())
    return {"type": "RunFailed", "message": f"could not be run: no directory for it in "
            f"{tempfile.gettempdir()} ({e.strerror or e})", "line": None, "trace": []}


def confirm_file(path: str, config=None, project=None, devices: Optional[int] = None,
                 max_bytes: Optional[int] = None, timeout: Optional[float] = rn.DEFAULT_TIMEOUT,
                 found: Optional[Dict[str, rn.Platform]] = None,
                 platform: Optional[str] = None) -> FileResult:
    """Run ``path`` where a user would (``confirm_run.choose_devices``: the accelerator
    when it has the devices the source's meshes need, else as many CPU devices) and
    hold every inferred type against ``jax.typeof``; report the compiled collectives."""
    from shardcheck.analyzer.engine import check_source
    from shardcheck.analyzer.inferred_types import infer_types
    from shardcheck.analyzer.ftypes import ERROR
    with open(path, "rb") as fh:
        source = fh.read()
    static: Dict[Key, Optional[str]] = {(t.row, t.column, t.name): t.type
                                        for t in infer_types(source, path, config, project)}
    needs = rn.mesh_devices(source, path, config, project)
    plan = rn.choose_devices(found or {"cpu": rn.Platform("cpu", "cpu", 0)}, needs,
                             platform, devices)
    run: Dict[str, Any]
    try:
        dump_dir: Optional[str] = tempfile.mkdtemp(prefix="shardcheck-hlo-")
    except OSError as e:
        dump_dir, run = None, {"types": [], "seconds": 0.0, "error": _no_sandbox(e)}
    modules: List[hlo.HloModule] = []
    if dump_dir is not None:
        try:
            run = run_program(path, plan.devices, timeout, dump_dir=dump_dir, plan=plan)
            modules = hlo.read_dump(dump_dir, os.path.abspath(path), defined_functions(path))
        finally:
            shutil.rmtree(dump_dir, ignore_errors=True)
    if max_bytes is None and config is not None:
        max_bytes = getattr(config, "max_collective_bytes", None)
    runtime: Dict[Key, Set[str]] = {(k[0], k[1], k[2]): set(v) for k, v in run["types"]}
    rows = []
    for key in sorted(set(static) | set(runtime)):
        s, r = static.get(key), sorted(runtime.get(key, ()))
        status, reasons = compare(s, r)
        rows.append(Row(path, key[0], key[1], key[2], s, r, status, reasons))
    predicted: List[str] = []
    err = run.get("error")
    if err is not None and err["type"] not in ("Timeout", "DiskFull"):
        # JAX's error is predicted by an error-level finding on a line of its traceback
        # in this file or, failing that (an error raised when a traced function returns,
        # say), anywhere in the file; the line is shown either way
        findings = check_source(source, path, config, project)
        errors = [f for f in findings if f.severity == ERROR]
        on_trace = [f for f in errors if f.row in (err.get("trace") or [])]
        predicted = [f"{f.code} {f.name} (line {f.row})" for f in (on_trace or errors)]
        if rn.device_shortage(err):
            # the program set up too few devices itself (SC109: a warning off the CPU, but
            # confirm ran it on the CPU), or this machine has too few: then it did not run
            own = [f for f in findings if f.name == "mesh-device-count"]
            predicted = [f"{f.code} {f.name} (line {f.row})" for f in own]
    not_run = ""
    if rn.device_shortage(err) and not predicted:
        not_run = (f"needs {needs or 'more'} devices; ran with {run.get('devices') or plan.devices}"
                   f" {plan.platform}")
    return FileResult(path, rows, err, predicted, run.get("backend", "") or plan.platform,
                      run.get("devices", 0) or plan.devices, _distinct(modules), max_bytes,
                      run.get("device_kind", ""), needs, plan.note, not_run,
                      run.get("seconds", 0.0))


def _distinct(modules: List[hlo.HloModule]) -> List[hlo.HloModule]:
    """One entry per function and set of collectives (a function compiled again for the
    same shapes shows once)."""
    out, seen = [], set()
    for m in modules:
        key = (m.name, tuple((c.kind, c.shape, c.groups, c.line) for c in m.collectives))
        if key not in seen:
            seen.add(key)
            out.append(m)
    return out


def render_reasons(row: Row, indent: str) -> List[str]:
    """A disagreeing row's reasons, one line each under the row."""
    return [f"{indent}- {why}" for why in row.reasons]


def render_collectives(res) -> List[str]:
    """The collective report of a FileResult or a ScaleResult."""
    out: List[str] = []
    if not res.collectives:
        return out
    out.append("  collectives in the compiled HLO (per device, per call):")
    for m in res.collectives:
        over = (f"  OVER the budget of {hlo.fmt_bytes(res.max_bytes)}"
                if res.max_bytes is not None and m.bytes > res.max_bytes else "")
        count = len(m.collectives)
        out.append(f"    {m.function}: {count or 'no'} collective{'s' if count != 1 else ''}"
                   f"{', ' + hlo.fmt_bytes(m.bytes) if count else ''}{over}")
        for c in m.collectives:
            axes = (f"over {','.join(c.axes)}" if c.axes else
                    f"over groups of {c.group_size}")
            where = f"line {c.line}" if c.line and c.file and os.path.abspath(c.file) == os.path.abspath(res.path) \
                else (f"{os.path.basename(c.file)}:{c.line}" if c.line else "line unknown")
            op = c.op
            out.append(f"      {c.kind:<18} {axes:<14} {c.short_shape:<20} {hlo.fmt_bytes(c.bytes):>10}  "
                       f"{where}{f' ({op})' if op else ''}")
    return out


def where_it_ran(res: FileResult) -> str:
    """``8 cpu devices`` or ``1 gpu device, NVIDIA H100 80GB HBM3``, and the plan's note."""
    kind = f", {res.device_kind}" if res.device_kind and res.device_kind != res.backend else ""
    note = f"; {res.note}" if res.note else ""
    return f"{res.devices} {res.backend} device{'s' if res.devices != 1 else ''}{kind}{note}"


def _error_lines(res: FileResult) -> List[str]:
    err = res.error
    if res.not_run:
        return [f"  not run: {res.not_run} ({rn.shorten(err['message'], 160) if err else ''})"]
    if err is None:
        return []
    if err["type"] == "Timeout":
        return [f"  {err['message']}; the whole process group was killed"]
    if err["type"] == "DiskFull":  # the machine's, not the program's: nothing to predict
        return [f"  the program {err['message']}"]
    at = f" at line {err['line']}" if err.get("line") else ""
    what = ("the program " + err["message"] if err["type"] in ("SystemExit", "os._exit", "RunFailed")
            else f"the program raised {err['type']}{at}: {rn.shorten(err['message'], 160)}")
    pred = (f"predicted by {', '.join(res.predicted)}" if res.predicted
            else "NOT predicted by the static analysis")
    return [f"  {what}", f"    {pred}"]


def render_text(results: List[FileResult]) -> str:
    out = []
    for res in results:
        out.append(f"{res.path} ({where_it_ran(res)})")
        shown = [r for r in res.rows if r.status != "unknown" or r.runtime]
        w = max([len(f"{r.line}:{r.column} {r.name}") for r in shown] + [len("line:col name")])
        if shown:
            out.append(f"  {'line:col name':<{w}}  {'inferred type':<34} {'jax.typeof':<34} status")
        for r in shown:
            where = f"{r.line}:{r.column} {r.name}"
            rt = " | ".join(r.runtime) if r.runtime else "-"
            out.append(f"  {where:<{w}}  {r.static or '?':<34} {rt:<34} {r.status}")
            out.extend(render_reasons(r, "    "))
        out.extend(_error_lines(res))
        out.extend(render_collectives(res))
    out.append(summary(results))
    return "\n".join(out)


def summary(results: List[FileResult]) -> str:
    """The last line: what agreed, what failed, and whether the run passes."""
    agree = sum(r.status == "agree" for res in results for r in res.rows)
    disagree = sum(r.status == "disagree" for res in results for r in res.rows)
    ran = [res for res in results if not res.not_run]
    timed_out = sum(1 for res in ran if res.error is not None and res.error["type"] == "Timeout")
    no_space = sum(1 for res in ran if res.error is not None and res.error["type"] == "DiskFull")
    failed = [res for res in ran if res.error is not None
              and res.error["type"] not in ("Timeout", "DiskFull")]
    unpredicted = sum(1 for res in failed if not res.predicted)
    over = sum(len(res.over_budget) for res in results)
    parts = [f"{agree} agree, {disagree} disagree",
             f"{len(failed)} program(s) failed ({unpredicted} unpredicted runtime error(s))"]
    if timed_out:
        parts.append(f"{timed_out} timed out")
    if no_space:
        parts.append(f"{no_space} ran out of disk space")
    if len(ran) < len(results):
        parts.append(f"{len(results) - len(ran)} not run")
    if over:
        parts.append(f"{over} function(s) over the collective budget")
    return ", ".join(parts) + f" in {len(results)} file(s)"


def module_json(m: hlo.HloModule, budget: Optional[int] = None) -> dict:
    return {"function": m.function, "module": m.name, "devices": m.num_partitions,
            "mesh": m.mesh.shape if m.mesh is not None else None, "bytes": m.bytes,
            "over_budget": budget is not None and m.bytes > budget,
            "collectives": [{"kind": c.kind, "axes": list(c.axes) if c.axes is not None else None,
                             "groups": [list(g) for g in c.groups], "shape": c.short_shape,
                             "result_bytes": c.result_bytes, "bytes": c.bytes,
                             "op": c.op, "op_name": c.op_name, "file": c.file, "line": c.line}
                            for c in m.collectives]}


def render_json(results: List[FileResult]) -> str:
    return json.dumps([{"path": r.path, "ok": r.ok, "backend": r.backend, "devices": r.devices,
                        "device_kind": r.device_kind, "needs_devices": r.needs,
                        "note": r.note or None, "not_run": r.not_run or None,
                        "seconds": round(r.seconds, 3), "error": r.error, "predicted": r.predicted,
                        "rows": [asdict(x) for x in r.rows],
                        "max_collective_bytes": r.max_bytes,
                        "collectives": [module_json(m, r.max_bytes) for m in r.collectives]}
                       for r in results], indent=2)
