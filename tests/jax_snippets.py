"""Run code snippets and whole programs under real JAX on 8 CPU devices, cheaply.

One server process per test process (per xdist worker) imports JAX once, without
starting a backend, and stays up for the session; every job runs in a child forked
from it, so each starts fresh (no backend, no mesh set, nothing traced) without
paying JAX's import again. Up to ``parallel()`` children run at once. XLA's compiled
executables are shared through a compilation cache on disk, the server's own: a
computation compiled by one child is loaded, not compiled, by the next.

A job is a snippet (``run_snippets``), a program run as ``python PATH`` would run it
(``run_programs``), or a program run by ``shardcheck confirm``'s own runtime driver,
which records ``jax.typeof`` after every assignment (``record_programs``).
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import threading
from typing import Any, Dict, List, Optional, Sequence, Tuple

_SERVER = textwrap.dedent(r'''
    import io, json, os, runpy, sys, time, traceback, warnings
    import jax  # imported once; each child starts its own backend
    import sharding_types, shardcheck.confirm  # noqa: F401  (what the recording driver imports)

    PARALLEL, OUTDIR = int(sys.argv[1]), sys.argv[2]
    protocol = os.fdopen(os.dup(1), "w")  # the replies; children write nothing to it
    os.dup2(2, 1)  # anything else written to fd 1 (by XLA, by a child) goes to the log

    def run_job(job):
        """In the child: run one job, return what the test needs to know."""
        if job.get("xla_flags"):  # read when this child starts its backend, not before
            os.environ["XLA_FLAGS"] = " ".join([os.environ.get("XLA_FLAGS", "")] + job["xla_flags"])
        out = {"status": "ok", "error": "", "type": "", "result": None, "stdout": ""}
        captured = io.StringIO()
        sys.stdout = captured
        try:
            if job["kind"] == "snippet":
                ns = {"__name__": "__main__"}
                with warnings.catch_warnings():
                    warnings.simplefilter("error", DeprecationWarning)
                    exec(compile(job["code"], "<snippet>", "exec"), ns)
                out["result"] = ns.get("RESULT")  # a snippet may report JSON-able facts
            elif job["kind"] == "program":  # as `python PATH` run in PATH's folder
                path = job["path"]
                os.chdir(os.path.dirname(path))
                sys.path.insert(0, os.path.dirname(path))
                sys.argv = [path]
                try:
                    runpy.run_path(path, run_name="__main__")
                except SystemExit as e:
                    if e.code not in (None, 0):
                        raise
            else:  # "driver": confirm's own driver source, run as its subprocess would
                exec(compile(job["code"], "<driver>", "exec"), {"__name__": "__main__"})
        except BaseException as e:
            kind = "deprecation" if isinstance(e, DeprecationWarning) else "error"
            out.update(status=kind, error=str(e)[:2000], type=type(e).__name__,
                       traceback=traceback.format_exc()[-4000:])
            if job["kind"] == "program":  # the program's own frames, outermost first
                out["lines"] = [f.lineno for f in traceback.extract_tb(e.__traceback__)
                                if f.filename == job["path"]]
        out["stdout"] = captured.getvalue()[-20000:]
        out["cpu_s"] = round(sum(os.times()[:2]), 3)  # this child's CPU time since the fork
        return out

    def start(i, job):
        pid = os.fork()
        if pid == 0:
            try:
                out = run_job(job)
            except BaseException as e:  # the job's output could not be made
                out = {"status": "crash", "error": repr(e)[:2000], "type": type(e).__name__}
            with open(os.path.join(OUTDIR, f"{i}.json"), "w") as fh:
                json.dump(out, fh)
            sys.stdout.flush()
            os._exit(0)
        return pid

    for line in sys.stdin:
        batch = json.loads(line)
        jobs, timeout = batch["jobs"], batch["timeout"]
        parallel = batch.get("parallel") or PARALLEL
        for name in batch.get("preload", ()):  # imported once, here; every child has it
            __import__(name)
        results = [None] * len(jobs)
        running, queue = {}, list(enumerate(jobs))
        while queue or running:
            while queue and len(running) < parallel:
                i, job = queue.pop(0)
                running[start(i, job)] = (i, time.monotonic())
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                for p, (i, t0) in list(running.items()):
                    if time.monotonic() - t0 > timeout:
                        os.kill(p, 9)  # reaped below, reported as a crash
                time.sleep(0.005)
                continue
            i, _ = running.pop(pid)
            path = os.path.join(OUTDIR, f"{i}.json")
            try:
                with open(path) as fh:
                    results[i] = json.load(fh)
                os.remove(path)
            except (OSError, ValueError):
                results[i] = {"status": "crash", "error": f"child ended with status {status}",
                              "type": ""}
        protocol.write(json.dumps(results) + "\n")
        protocol.flush()
''')


def cpus() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def parallel() -> int:
    """Children at once: the CPUs, shared among the xdist workers of this run."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
    return max(1, cpus() // workers)


class _Server:
    def __init__(self) -> None:
        self.dir = tempfile.mkdtemp(prefix="jax-snippets-")
        self.log = open(os.path.join(self.dir, "server.log"), "w+")
        env = dict(os.environ, PYTHONWARNINGS="ignore", JAX_PLATFORMS="cpu")
        # One compilation cache for this server's children: a computation several jobs
        # compile alike (``jnp.zeros((8, 4))`` placed on the same mesh, ...) is compiled by
        # the first and loaded by the rest. It lives and dies with this server. (Children
        # running at once may race on an entry: JAX then warns and compiles it again.)
        env.update(JAX_COMPILATION_CACHE_DIR=os.path.join(self.dir, "xla-cache"),
                   JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0",
                   JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES="-1")
        flags = [f for f in env.get("XLA_FLAGS", "").split()
                 if not f.startswith("--xla_force_host_platform_device_count")]
        env["XLA_FLAGS"] = " ".join(flags + ["--xla_force_host_platform_device_count=8"])
        self.proc = subprocess.Popen([sys.executable, "-c", _SERVER, str(parallel()), self.dir],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.log, text=True, env=env)
        self.lock = threading.Lock()

    def run(self, jobs: List[dict], timeout: float, preload: Sequence[str] = (),
            parallel: Optional[int] = None) -> List[Dict]:
        with self.lock:  # one batch at a time; the server runs its jobs in parallel
            assert self.proc.stdin is not None and self.proc.stdout is not None
            try:
                self.proc.stdin.write(json.dumps({"jobs": jobs, "timeout": timeout,
                                                  "preload": list(preload),
                                                  "parallel": parallel}) + "\n")
                self.proc.stdin.flush()
                line = self.proc.stdout.readline()
            except BrokenPipeError:
                line = ""
            if not line:
                self.log.seek(0)
                raise RuntimeError(f"snippet server failed:\n{self.log.read()[-4000:]}")
            return json.loads(line)

    def close(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


_server: Optional[_Server] = None
_server_lock = threading.Lock()


def _run(jobs: List[dict], timeout: float, preload: Sequence[str] = (),
         parallel: Optional[int] = None) -> List[Dict]:
    global _server
    with _server_lock:
        if _server is None or _server.proc.poll() is not None:
            _server = _Server()
            atexit.register(_server.close)
        server = _server
    return server.run(jobs, timeout, preload, parallel)


def run_snippets(codes: Sequence[str], timeout: float = 300) -> List[Dict[str, str]]:
    """status per snippet: ok | error | deprecation (a DeprecationWarning, raised as an
    error) | crash, with the exception's type and text, and ``result``: the snippet's
    global RESULT when it ran to the end."""
    return _run([{"kind": "snippet", "code": c} for c in codes], timeout)


def run_programs(paths: Sequence[str], timeout: float = 300, preload: Sequence[str] = (),
                 xla_flags: Sequence[str] = ()) -> List[Dict[str, Any]]:
    """Each program run as ``python PATH`` in PATH's folder would run it (``__main__``,
    ``sys.argv``, ``sys.path``): status ok | error | crash, the exception, ``stdout``, and
    for an exception ``lines``: the program's frames in its traceback, outermost first.
    ``preload``: modules the server imports before it forks (flax, optax, ...), so that
    each program does not pay their import; ``xla_flags``: added to XLA_FLAGS in each
    program's child before its backend starts."""
    return _run([{"kind": "program", "path": os.path.abspath(p), "xla_flags": list(xla_flags)}
                 for p in paths], timeout, preload)


def record_programs(paths: Sequence[str], devices: int = 8, timeout: float = 300,
                    preload: Sequence[str] = ()) -> List[dict]:
    """``shardcheck confirm``'s runtime half per program, as ``confirm.run_program``
    returns it (``types``, ``error``, ``backend``, ``devices``): its own driver source,
    run in a forked child instead of a fresh interpreter."""
    return run_and_record_programs([], paths, devices, timeout, preload)[1]


def run_and_record_programs(run: Sequence[str], record: Sequence[str], devices: int = 8,
                            timeout: float = 300, preload: Sequence[str] = (),
                            xla_flags: Sequence[str] = (), parallel: Optional[int] = None
                            ) -> Tuple[List[Dict[str, Any]], List[dict]]:
    """``run_programs(run)`` and ``record_programs(record)`` as one batch, in parallel:
    ``parallel()`` children at once, or ``parallel`` (a large batch may take every CPU
    rather than its worker's share, so as not to be the run's last file)."""
    from shardcheck.confirm.programs import _DRIVER
    results_dir = tempfile.mkdtemp(prefix="jax-snippets-record-")
    files = [os.path.join(results_dir, f"{i}.json") for i in range(len(record))]
    # inside=[]: no module the program imports is instrumented, the program alone is
    jobs = [{"kind": "program", "path": os.path.abspath(p), "xla_flags": list(xla_flags)}
            for p in run]
    jobs += [{"kind": "driver", "code": _DRIVER.format(path=os.path.abspath(p), devices=devices,
                                                       result=f, inside=[]),
              "xla_flags": list(xla_flags)} for p, f in zip(record, files)]
    recorded = []
    try:
        results = _run(jobs, timeout, preload, parallel)
        for path, res, f in zip(record, results[len(run):], files):
            if res["status"] != "ok" or not os.path.exists(f):
                raise RuntimeError(f"recording {path} failed: {res}")
            with open(f) as fh:
                recorded.append(json.load(fh))
    finally:
        shutil.rmtree(results_dir, ignore_errors=True)
    return results[:len(run)], recorded
