"""Run code snippets and whole programs under real JAX on 8 CPU devices, cheaply.

One server process per test process (per xdist worker) imports JAX once, without
starting a backend, and stays up for the session; every job runs in a child forked
from it, without paying JAX's import again. A job that can (most snippets and
programs) runs in a child reused from earlier jobs, with its backend and compiled
computations kept and JAX's settings put back as they were (no mesh set, no config
changed), so it starts as a fresh child would; the rest (confirm's driver, a job that
sets XLA flags or the environment) each in a fresh child. Up to ``parallel()``
children run at once. XLA's compiled executables are shared through a compilation
cache on disk, the server's own: a computation compiled by one child is loaded, not
compiled, by the next.

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
        """A fresh child for one job, forked from this server."""
        pid = os.fork()
        if pid == 0:
            close_reused_pipes()
            try:
                out = run_job(job)
            except BaseException as e:  # the job's output could not be made
                out = {"status": "crash", "error": repr(e)[:2000], "type": type(e).__name__}
            with open(os.path.join(OUTDIR, f"{i}.json"), "w") as fh:
                json.dump(out, fh)
            sys.stdout.flush()
            os._exit(0)
        return pid

    # A snippet or program that reads or sets nothing of the process JAX cannot undo (a
    # config update before the backend starts, XLA_FLAGS, the environment) runs in a
    # reused child: one that ran other jobs (given the same XLA flags) before it, with
    # their backend, compiled executables and traces kept. JAX's global and thread-local
    # settings (the mesh jax.set_mesh set, a config a job changed), the legacy `with
    # mesh:` stack, the working directory, sys.path, sys.argv, sys.stderr and the warning
    # filters are put back after each job, so each starts as a fresh child would, and
    # gives the same answer (each snippet of tests/analyzer/test_rules.py gave the same
    # status, exception type and text either way), about four times faster: most of a
    # small program's time is compiling the computations JAX builds for its first array
    # operations. A job that imports a module for the first time ends its child (below).
    # Confirm's recording driver sets the device count before the backend starts: it
    # always runs fresh. JAX_SNIPPETS_FRESH=1: every job in a fresh child.
    FRESH_ONLY = ("config.update", "os.environ", "XLA_FLAGS", "jax.distributed", "sys.modules")

    LAZY_INTERNALS = ("jax._src.", "jaxlib.", "numpy.", "ml_dtypes.", "scipy.")

    def reusable(job):
        if os.environ.get("JAX_SNIPPETS_FRESH") or job["kind"] == "driver":
            return False
        if job["kind"] == "program":
            try:
                with open(job["path"], encoding="utf-8") as fh:
                    code = fh.read()
            except (OSError, ValueError):
                return False
        else:
            code = job["code"]
        return not any(word in code for word in FRESH_ONLY)

    def jax_settings():
        """Every JAX setting object (global and thread-local values) loaded so far."""
        from jax._src import config as jax_config
        kind = jax_config.config_ext.Config
        found = {}
        for name, module in list(sys.modules.items()):
            if name.startswith("jax._src") and module is not None:
                for attr, value in list(vars(module).items()):
                    if isinstance(value, kind):
                        found[id(value)] = value
        return list(found.values())

    def snapshot():
        from jax._src import config as jax_config, mesh as jax_mesh
        unset = jax_config.config_ext.unset
        values = []
        for setting in jax_settings():
            local = setting.swap_local(unset)
            setting.set_local(local)
            values.append((setting, setting.get_global(), local))
        return values, jax_mesh.thread_resources.env

    def restore(saved):
        from jax._src import config as jax_config, mesh as jax_mesh
        values, env = saved
        for setting, global_value, local in values:
            if setting.get_global() is not global_value:
                if isinstance(setting, jax_config.State):
                    setting._set(global_value)  # runs the setting's own update hook
                else:
                    setting.set_global(global_value)
            setting.set_local(local)
        jax_mesh.thread_resources.env = env

    def serve_jobs(jobs_in, done_out):
        """In a reused child: run the jobs sent one per line, each from JAX's state as it
        was before the first; a job JAX's state cannot be put back after ends the child."""
        real_stdout, real_stderr, cwd = sys.stdout, sys.stderr, os.getcwd()
        for line in jobs_in:
            i, job = json.loads(line)
            saved, modules = snapshot(), set(sys.modules)
            path, argv, filters = list(sys.path), list(sys.argv), list(warnings.filters)
            try:
                out = run_job(job)
            except BaseException as e:
                out = {"status": "crash", "error": repr(e)[:2000], "type": type(e).__name__}
            sys.stdout = real_stdout
            try:
                restore(saved)
                os.chdir(cwd)
                sys.path[:], sys.argv[:], warnings.filters[:] = path, argv, filters
                sys.stderr = real_stderr
                # a module imported for the first time (a project's own module, one
                # that warns as it is imported, ...) would be found, not imported, by
                # the next job: the child ends. JAX's own modules that it imports
                # the first time it compiles are kept (importing them again would be
                # no different).
                intact = all(name.startswith(LAZY_INTERNALS)
                             for name in set(sys.modules) - modules)
            except BaseException:
                intact = False
            with open(os.path.join(OUTDIR, f"{i}.json"), "w") as fh:
                json.dump(out, fh)
            done_out.write(("ok" if intact else "ends") + "\n")
            done_out.flush()
            if not intact:
                break
        os._exit(0)

    class Reused:
        """A child that runs jobs one after another, with the XLA flags ``flags``."""
        def __init__(self, flags):
            self.flags = flags
            jobs_r, jobs_w = os.pipe()
            done_r, done_w = os.pipe()
            self.pid = os.fork()
            if self.pid == 0:
                os.close(jobs_w)
                os.close(done_r)
                close_reused_pipes()
                if flags:  # read when this child starts its backend
                    os.environ["XLA_FLAGS"] = " ".join([os.environ.get("XLA_FLAGS", "")] + flags)
                serve_jobs(os.fdopen(jobs_r), os.fdopen(done_w, "w"))
            os.close(jobs_r)
            os.close(done_w)
            self.jobs = os.fdopen(jobs_w, "w")
            self.done = os.fdopen(done_r)
            self.busy = None  # (job index, start time)

        def send(self, i, job):
            self.jobs.write(json.dumps([i, dict(job, xla_flags=[])]) + "\n")
            self.jobs.flush()
            self.busy = (i, time.monotonic())

        def stop(self):
            """End the child (idle, or past its timeout) and reap it."""
            try:
                os.kill(self.pid, 9)
            except ProcessLookupError:
                pass
            self.jobs.close()
            self.done.close()
            os.waitpid(self.pid, 0)

    reused = []  # idle or busy reused children, kept between batches

    def close_reused_pipes():
        """In a new child: close its copies of the other reused children's pipes, so that
        each of those sees its job pipe end when the server closes it."""
        for other in reused:
            other.jobs.close()
            other.done.close()

    # What JAX imports the first time it places, compiles and runs (multihost_utils,
    # absl, ...), found by one child that does so, is imported here too, so that a reused
    # child that imports it for its first job is not ended for that.
    WARM_UP = "\n".join([
        "import json, os, sys",
        "import jax, jax.numpy as jnp",
        "from jax.sharding import NamedSharding, PartitionSpec as P",
        "mesh = jax.make_mesh((2, 4), ('a', 'b'))",
        "x = jax.device_put(jnp.ones((8, 8)), NamedSharding(mesh, P('a', 'b')))",
        "y = jax.jit(lambda v: v * 2, out_shardings=NamedSharding(mesh, P('b')))(x)",
        "z = jax.shard_map(lambda v: jax.lax.psum(v, 'a'), mesh=mesh, in_specs=P('a', 'b'),",
        "                  out_specs=P(None, 'b'))(x)",
        "RESULT = sorted(set(sys.modules) - set(json.loads(os.environ['KNOWN_MODULES'])))",
    ])

    # XLA's newer CPU fusion emitters take about half again the CPU time to compile these
    # small programs (tests/inference/'s recorded runs: 23 s against 17 s); nothing here
    # reads the generated code (errors, jax.typeof, results). Where this XLA does not know
    # the flag (an unknown XLA flag aborts the child: JAX 0.12's), the children go without.
    FAST_COMPILE = "--xla_cpu_use_fusion_emitters=false"

    def warm_up(flag):
        """The warm-up job in a fresh child with ``flag`` added to XLA_FLAGS: whether it
        ran; if it did, what it imported is imported here."""
        before = os.environ.get("XLA_FLAGS", "")
        os.environ["XLA_FLAGS"] = f"{before} {flag}".strip()
        os.environ["KNOWN_MODULES"] = json.dumps(sorted(sys.modules))
        pid = start("warm-up", {"kind": "snippet", "code": WARM_UP})
        os.waitpid(pid, 0)
        del os.environ["KNOWN_MODULES"]
        path = os.path.join(OUTDIR, "warm-up.json")
        try:
            with open(path) as fh:
                out = json.load(fh)
            os.remove(path)
        except (OSError, ValueError):  # the child aborted
            out = {"status": "crash"}
        if out["status"] != "ok":
            os.environ["XLA_FLAGS"] = before
            return False
        for name in out["result"] or ():
            if not name.startswith("__main__"):
                try:
                    __import__(name)
                except Exception:
                    pass
        return True

    if not warm_up(FAST_COMPILE):
        warm_up("")

    def collect(i, status, results):
        path = os.path.join(OUTDIR, f"{i}.json")
        try:
            with open(path) as fh:
                results[i] = json.load(fh)
            os.remove(path)
        except (OSError, ValueError):
            results[i] = {"status": "crash", "error": f"child ended with status {status}",
                          "type": ""}

    import select

    for line in sys.stdin:
        batch = json.loads(line)
        jobs, timeout = batch["jobs"], batch["timeout"]
        parallel = batch.get("parallel") or PARALLEL
        new = [name for name in batch.get("preload", ()) if name not in sys.modules]
        for name in new:  # imported once, here; every child has it
            __import__(name)
        if new:  # reused children forked before lack it
            for child in reused:
                child.stop()
            reused.clear()
        results = [None] * len(jobs)
        fresh, queue = {}, list(enumerate(jobs))
        while queue or fresh or any(c.busy for c in reused):
            while queue and len(fresh) + sum(1 for c in reused if c.busy) < parallel:
                i, job = queue.pop(0)
                if reusable(job):
                    flags = job.get("xla_flags") or []
                    idle = [c for c in reused if not c.busy]
                    child = next((c for c in idle if c.flags == flags), None)
                    if child is None:
                        if len(reused) >= parallel:  # an idle child of other flags ends
                            idle[0].stop()
                            reused.remove(idle[0])
                        child = Reused(flags)
                        reused.append(child)
                    child.send(i, job)
                else:
                    fresh[start(i, job)] = (i, time.monotonic())
            progressed = False
            busy = [c for c in reused if c.busy]
            if busy:
                ready, _, _ = select.select([c.done for c in busy], [], [], 0)
                for child in busy:
                    if child.done in ready:
                        progressed = True
                        i = child.busy[0]
                        child.busy = None
                        said = child.done.readline().strip()
                        collect(i, 0 if said else "killed", results)  # "": it died mid-job
                        if said != "ok":
                            child.stop()
                            reused.remove(child)
            for pid in list(fresh):
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    progressed = True
                    i, _ = fresh.pop(pid)
                    collect(i, status, results)
            if not progressed:
                now = time.monotonic()
                for p, (i, t0) in list(fresh.items()):
                    if now - t0 > timeout:
                        os.kill(p, 9)  # reaped above, reported as a crash
                for child in [c for c in reused if c.busy]:
                    if now - child.busy[1] > timeout:
                        collect(child.busy[0], "killed (timeout)", results)
                        child.stop()
                        reused.remove(child)
                time.sleep(0.005)
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


# Libraries the server imports before it forks when a batch's snippets import them, so
# that each snippet does not pay their import (and a reused child is not ended for it).
LIBRARIES = ("flax.linen", "flax.nnx", "optax", "ml_collections")


def libraries_imported(codes: Sequence[str]) -> List[str]:
    """The LIBRARIES whose package one of ``codes`` imports."""
    import re
    packages = {m.group(1) for c in codes
                for m in re.finditer(r"^\s*(?:import|from)\s+([A-Za-z_]\w*)", c, re.M)}
    return [name for name in LIBRARIES if name.split(".")[0] in packages]


def run_snippets(codes: Sequence[str], timeout: float = 300) -> List[Dict[str, str]]:
    """status per snippet: ok | error | deprecation (a DeprecationWarning, raised as an
    error) | crash, with the exception's type and text, and ``result``: the snippet's
    global RESULT when it ran to the end. The LIBRARIES the snippets import are imported
    once, before the children start."""
    return _run([{"kind": "snippet", "code": c} for c in codes], timeout,
                libraries_imported(codes))


def run_programs(paths: Sequence[str], timeout: float = 300, preload: Sequence[str] = (),
                 xla_flags: Sequence[str] = ()) -> List[Dict[str, Any]]:
    """Each program run as ``python PATH`` in PATH's folder would run it (``__main__``,
    ``sys.argv``, ``sys.path``): status ok | error | crash, the exception, ``stdout``, and
    for an exception ``lines``: the program's frames in its traceback, outermost first.
    ``preload``: modules the server imports before it forks (flax, optax, ...), so that
    each program does not pay their import; ``xla_flags``: added to XLA_FLAGS in each
    program's child before its backend starts."""
    return run_and_record_programs(paths, [], timeout=timeout, preload=preload,
                                   xla_flags=xla_flags)[0]


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
    texts = []
    for p in list(run) + list(record):
        try:
            with open(p, encoding="utf-8") as fh:
                texts.append(fh.read())
        except (OSError, ValueError):
            pass
    preload = list(preload) + [m for m in libraries_imported(texts) if m not in preload]
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
