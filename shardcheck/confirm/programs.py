"""``shardcheck confirm``: run programs under JAX and hold the static types against JAX's.

Each program runs in a subprocess as ``__main__``, sandboxed as a test runner would run
it and on the devices a user would choose (``shardcheck.confirm_run``: the accelerator
when it has the devices the source's meshes need, else that many virtual CPU devices,
at least 8), after its AST is instrumented in memory — the file on disk is never
touched: after every assignment, each assigned name holding a JAX array has
``jax.typeof`` recorded (through ``sharding_types.Recorder``) under its file, line,
column and name. The project's own modules the program imports are instrumented the
same way as they are imported (``instrument.ProjectImporter``), so the types of a
package whose scripts only call it are recorded too. The analyzer's inferred type for
the same position (in an imported module: as the analysis of the program's calls into
it infers it) must be exactly that type; where it is not,
``sharding_types.mismatch_reasons`` says why (the row's ``reasons``). JAX's error is
matched to the findings by the file and line of each frame of its traceback.

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
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

from sharding_types import ShardingSyntaxError, mismatch_reasons, parse
from shardcheck.confirm import sandbox as rn
from shardcheck.confirm import hlo

Key = Tuple[int, int, str]  # a position in one file: line, column, name
FileKey = Tuple[str, int, int, str]  # the file's real path, line, column, name
# how the two sides read in a disagreement's reasons: "dim 1: JAX says size 1, the
# analyzer says 8"
_WORDS = ("JAX says", "the analyzer says")


_DRIVER = r"""
import json, os, sys, traceback
import jax
jax.config.update("jax_num_cpu_devices", {devices})  # the CPU backend; a GPU is used as is
import sharding_types as st
from shardcheck.confirm.instrument import ProjectImporter, instrumented
path, result_path = {path!r}, {result!r}
rec = st.Recorder()
ns = {{"__name__": "__main__", "__file__": path, "__sc_record__": rec}}
sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
sys.argv = [path]
# the project's own modules, as the program imports them, are instrumented too
importer = ProjectImporter(rec, {inside!r})
sys.meta_path.insert(0, importer)
error, status, driver_pid, real_exit = None, 0, os.getpid(), os._exit


def where(tb):
    # the traceback's frames in the program and the project modules it imported
    ours = {{os.path.realpath(path)}} | {{f for _, f in importer.loaded}}
    return [[os.path.realpath(f.filename), f.lineno] for f in traceback.extract_tb(tb)
            if os.path.realpath(f.filename) in ours]


def failed(kind, message, trace):
    at = trace[-1] if trace else [None, None]
    return {{"type": kind, "message": message, "file": at[0], "line": at[1], "trace": trace}}


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
             "status": status, "backend": backend, "device_kind": kind, "devices": count,
             "modules": importer.loaded}}
    with open(result_path + ".part", "w") as fh:
        json.dump(data, fh)
    os.replace(result_path + ".part", result_path)


def exit_now(n):  # os._exit skips every handler: the results are written first
    global error, status
    if os.getpid() == driver_pid:
        status = n
        if n:
            error = failed("os._exit", f"exited with status {{n}}", [])
        write_results()
    real_exit(n)


os._exit = exit_now
with rec:
    try:
        exec(instrumented(path, keyed=True), ns)
    except SystemExit as e:  # sys.exit(0), sys.exit(main()) or absl's app.run end normally
        code = e.code
        if code not in (None, 0):
            status = code if isinstance(code, int) else 1
            text = "" if isinstance(code, int) else f": {{code}}"
            error = failed("SystemExit", f"exited with status {{status}}{{text}}",
                           where(e.__traceback__))
    except BaseException as e:
        status = 1
        error = failed(type(e).__name__, str(e).splitlines()[0] if str(e) else "",
                       where(e.__traceback__))
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


@dataclass(frozen=True)
class Prediction:
    """An error-level finding that predicted the program's error, where it is."""

    code: str
    name: str
    path: str  # as the analysis names it (relative when the program was named so)
    line: int

    @classmethod
    def of(cls, finding) -> "Prediction":
        return cls(finding.code, finding.name, finding.filename, finding.row)

    def text(self, program: str) -> str:
        """``SC101 unknown-mesh-axis (line 20)`` in the program itself, else with the
        file: ``(src/pkg/model.py:20)``."""
        same = os.path.realpath(self.path) == os.path.realpath(program)
        return f"{self.code} {self.name} ({f'line {self.line}' if same else f'{self.path}:{self.line}'})"


@dataclass
class FileResult:
    path: str
    rows: List[Row]
    error: Optional[dict]  # what JAX raised (type, message, file, line, trace), or how the run ended
    predicted: List[str]  # the error-level findings that predicted it, as shown
    backend: str = ""
    devices: int = 0
    collectives: List[hlo.HloModule] = field(default_factory=list)
    max_bytes: Optional[int] = None  # the budget per jitted function, per device per call
    device_kind: str = ""
    needs: Optional[int] = None  # the devices the meshes the source states need
    note: str = ""  # where it ran, when not where a user would expect
    not_run: str = ""  # why the program could not run here ("needs 8 devices; ...")
    seconds: float = 0.0
    predictions: List[Prediction] = field(default_factory=list)  # ``predicted``'s findings
    imported: List[str] = field(default_factory=list)  # the project modules it imported

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
                dump_dir: Optional[str] = None, plan: Optional[rn.DevicePlan] = None,
                inside: Sequence[str] = ()) -> dict:
    """Run ``path`` instrumented in a subprocess, as a test runner would (see
    ``confirm_run``): the recorded types, how it ended (``error``, ``status``), where
    it ran and the project modules it imported (``modules``: those in a file under a
    directory of ``inside`` or the program's, instrumented too). ``dump_dir``: XLA
    dumps the file's jitted functions there (optimised HLO)."""
    plan = plan or rn.DevicePlan("cpu", devices)
    flags = _dump_flags(dump_dir, defined_functions(path)) if dump_dir is not None else None
    env = rn.program_env(plan, flags)
    try:
        with rn.Sandbox() as box:
            code = _DRIVER.format(path=os.path.abspath(path), devices=plan.devices,
                                  result=box.result, inside=sorted(
                                      {os.path.dirname(os.path.abspath(path)), *inside}))
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
    hold every inferred type against ``jax.typeof``, in the program and in the project
    modules it imported; report the compiled collectives."""
    from shardcheck.analyzer.inferred_types import infer_types
    with open(path, "rb") as fh:
        source = fh.read()
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
            run = run_program(path, plan.devices, timeout, dump_dir=dump_dir, plan=plan,
                              inside=project_dirs(config, project))
            modules = hlo.read_dump(dump_dir, os.path.abspath(path), defined_functions(path))
        finally:
            shutil.rmtree(dump_dir, ignore_errors=True)
    if max_bytes is None and config is not None:
        max_bytes = getattr(config, "max_collective_bytes", None)
    imported = [(str(name), str(file)) for name, file in run.get("modules", [])]
    project = _static_project(project, config, path, imported)
    # the program's rows, and those of the imported modules as the analysis sees them
    # from the program's calls (a module it never imported has no runtime side)
    ran = {os.path.realpath(path)} | {file for _, file in imported}
    static: Dict[FileKey, Optional[str]] = {
        (os.path.realpath(t.path or path), t.row, t.column, t.name): t.type
        for t in infer_types(source, path, config, project, imported=True)
        if os.path.realpath(t.path or path) in ran}
    runtime: Dict[FileKey, Set[str]] = {(k[0], k[1], k[2], k[3]): set(v) for k, v in run["types"]}
    err = run.get("error")
    predictions = _predictions(err, source, path, config, project)
    not_run = ""
    if rn.device_shortage(err) and not predictions:
        not_run = (f"needs {needs or 'more'} devices; ran with {run.get('devices') or plan.devices}"
                   f" {plan.platform}")
    return FileResult(path, _rows(path, static, runtime), _shown_error(err, path),
                      [p.text(path) for p in predictions], run.get("backend", "") or plan.platform,
                      run.get("devices", 0) or plan.devices, _distinct(modules), max_bytes,
                      run.get("device_kind", ""), needs, plan.note, not_run,
                      run.get("seconds", 0.0), predictions,
                      [_shown(path, file) for _, file in imported])


def project_dirs(config, project) -> List[str]:
    """The directories whose modules are the project's own (``instrument``): the
    config's root (the ``pyproject.toml``'s directory, or the one confirm was pointed
    at) and the source roots of the files confirm was given."""
    dirs = set(project.roots) if project is not None else set()
    if config is not None:
        dirs.add(os.path.abspath(config.root))
    return sorted(dirs)


def _static_project(project, config, path: str, imported: List[Tuple[str, str]]):
    """The project the analysis of ``path`` reads: ``project``, or where it does not
    resolve a module the program imported to the file the program ran (a src layout
    confirmed as ``confirm scripts/``: nothing names ``src/``), a copy of it that
    reads that file as the module, its source root added as if it had been named."""
    from shardcheck.analyzer.project import Project

    def resolved(name: str, file: str) -> bool:
        found = project.path_of(name) if project is not None and project.has_module(name) else None
        return found is not None and os.path.realpath(found) == file
    missing = [file for name, file in imported if not resolved(name, file)]
    if not missing:
        return project
    # a copy, not the shared project: the other programs' analyses run beside this one
    copy = Project(config)
    if project is not None:
        copy.roots.update(project.roots)
        copy.modules.update(project.modules)
    else:
        copy.add_file(path)
    for file in missing:
        copy.add_file(file)
    return copy


def _shown(program: str, file: str) -> str:
    """``file`` as the report names it: the program as given, another file relative to
    the working directory where the program was given so, else absolute."""
    if os.path.realpath(file) == os.path.realpath(program):
        return program
    return file if os.path.isabs(program) else os.path.relpath(file)


def _rows(path: str, static: Dict[FileKey, Optional[str]],
          runtime: Dict[FileKey, Set[str]]) -> List[Row]:
    """A row per position either side knows: the program's first, then each imported
    module's, each by line."""
    program = os.path.realpath(path)

    def order(key: FileKey):
        return (key[0] != program, _shown(path, key[0]), key[1], key[2], key[3])
    rows = []
    for key in sorted(set(static) | set(runtime), key=order):
        s, r = static.get(key), sorted(runtime.get(key, ()))
        status, reasons = compare(s, r)
        rows.append(Row(_shown(path, key[0]), key[1], key[2], key[3], s, r, status, reasons))
    return rows


def _shown_error(err: Optional[dict], path: str) -> Optional[dict]:
    """The run's error with its files as the report names them (the driver's are real
    paths); ``file`` and ``line``: its innermost frame in the program or a project module."""
    if err is None:
        return None
    trace = [[_shown(path, f), line] for f, line in err.get("trace") or []]
    file = err.get("file")
    return dict(err, file=_shown(path, file) if file else None, trace=trace)


def _predictions(err: Optional[dict], source: bytes, path: str, config,
                 project) -> List[Prediction]:
    """The error-level findings that predicted the run's error: those on a frame of its
    traceback, matched by file and line (the program's, or a project module's), or
    failing that (an error raised when a traced function returns, say) any the program's
    analysis makes, in its file or in a module whose function it calls."""
    from shardcheck.analyzer.engine import check_source
    from shardcheck.analyzer.ftypes import ERROR
    if err is None or err["type"] in ("Timeout", "DiskFull"):
        return []
    findings = check_source(source, path, config, project)
    if rn.device_shortage(err):
        # the program set up too few devices itself (SC109: a warning off the CPU, but
        # confirm ran it on the CPU), or this machine has too few: then it did not run
        return [Prediction.of(f) for f in findings if f.name == "mesh-device-count"]
    trace = {(os.path.realpath(f), line) for f, line in err.get("trace") or []}
    errors = [f for f in findings if f.severity == ERROR]
    on_trace = [f for f in errors if (os.path.realpath(f.filename), f.row) in trace]
    return [Prediction.of(f) for f in (on_trace or errors)]


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
    at = ""
    if err.get("line"):
        same = err.get("file") in (None, res.path)
        at = f" at line {err['line']}" if same else f" at {err['file']}:{err['line']}"
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
        for i, r in enumerate(shown):
            if r.path != res.path and (i == 0 or shown[i - 1].path != r.path):
                out.append(f"  {r.path} (imported):")  # the rows of a module it imported
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
                        "predictions": [asdict(p) for p in r.predictions],
                        "imported": r.imported,
                        "rows": [asdict(x) for x in r.rows],
                        "max_collective_bytes": r.max_bytes,
                        "collectives": [module_json(m, r.max_bytes) for m in r.collectives]}
                       for r in results], indent=2)
