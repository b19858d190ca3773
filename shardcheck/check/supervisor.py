"""Check files in worker processes that each file's time and memory budget can stop.

A file's analysis cannot be interrupted from inside: libcst's parser is native code
(cubic on long operator chains, and it can exhaust its stack or memory and take the
process down), and a Python-level timer does not run while it does. So each file is
checked in a worker process: the parent kills a worker whose file runs past
``timeout-per-file``, and each worker caps its own address space at its current size
plus ``memory-per-file`` before each file. A file whose worker is killed, aborts or
crashes gets one ``skipped-file`` finding, a fresh worker takes the next file, and the
run goes on.
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import os
import signal
import socket
import sys
import threading
import time
import tokenize
from concurrent.futures import Future
from dataclasses import dataclass
from multiprocessing.connection import wait
from typing import Any, Callable, Dict, Hashable, Iterable, Iterator, List, Optional, Tuple, Union

from shardcheck.analyzer.dependencies import Dependencies, content_hash
from shardcheck.analyzer.config import Config
from shardcheck.analyzer.engine import read_and_check
from shardcheck.analyzer.meta_findings import crashed, skipped
from shardcheck.analyzer.ftypes import Finding
from shardcheck.analyzer.project import Project

Result = Tuple[str, Optional[str], List[Finding], Dependencies]  # path, digest, findings, deps
_LONGEST_WAIT = 3600.0  # seconds; a longer timeout-per-file is waited for in steps (poll's limit)

_state: dict = {}

# Python's collector as mypy tunes it (mypy/build.py): a file's analysis holds two syntax
# trees and the interpreter's values until the file is done, and under the default
# thresholds (700, 10, 10) the collector traversed them again and again, about 9% of a
# check's time. A file makes little cyclic garbage (400 to 3,100 objects on jax's
# largest sharding files), and a collection still comes every 200,000 allocations.
GC_THRESHOLD = (200_000, 30, 30)


@contextlib.contextmanager
def tuned_collector():
    """``GC_THRESHOLD`` for the length of the block, then the caller's thresholds, and
    what the block's files froze (``collected_per_file``) collectable again."""
    saved = gc.get_threshold()
    gc.set_threshold(*GC_THRESHOLD)
    try:
        yield
    finally:
        gc.set_threshold(*saved)
        run_finished()


# Inside one file's analysis the collector runs only past this many new objects: a safety
# net for a file whose analysis makes cyclic garbage without end; a file of maxdiffusion
# or jax makes at most a few hundred thousand.
IN_FILE_GC_THRESHOLD = (1_000_000, 1_000, 1_000)
_frozen: list = []  # whether collected_per_file froze the heap since run_finished


@contextlib.contextmanager
def collected_per_file():
    """A file's analysis with the collector held back, then one collection of what the
    file made, and what survives frozen (``gc.freeze``).

    Most of what a file's analysis keeps lives for the run: the parsed and analysed
    modules it imports, shared with the files after it. Under the usual thresholds the
    collector traversed those again and again, 15% of a check on maxdiffusion. Frozen
    after the file that made them, no later collection looks at them; the collection
    before the freeze looks only at this file's objects (everything older is frozen
    already) and frees its cycles (an interpreted module's functions and their scope), so
    nothing is leaked into the frozen set. Before a run's first file, what the process
    already held is frozen uncollected: a long-lived process (the test suite, a server)
    would otherwise have its whole heap traversed at each run's first file.
    ``run_finished`` unfreezes, and the usual collections then see all of it again."""
    if not _frozen:
        # the run's first file: what the process held before it (a test process's JAX,
        # a server's state) is not this run's to traverse (a flag: get_freeze_count walks)
        gc.freeze()
        _frozen.append(True)
    saved = gc.get_threshold()
    gc.set_threshold(*IN_FILE_GC_THRESHOLD)
    try:
        yield
    finally:
        gc.set_threshold(*saved)
        gc.collect()
        gc.freeze()


def run_finished() -> None:
    """What ``collected_per_file`` froze during a run in a process that lives on after
    it (the language server, the daemon, a test) becomes collectable again."""
    gc.unfreeze()
    _frozen.clear()


def init_pool_worker(config: Config, files: Iterable[str]) -> None:
    """A pool worker's set-up: ``init_worker``, under ``GC_THRESHOLD`` for its life."""
    gc.set_threshold(*GC_THRESHOLD)
    init_worker(config, files)


def init_worker(config: Config, files: Iterable[str]) -> None:
    """One Project per process, so modules imported by many files are read once. The
    analysis modules are imported now, not inside the first file's time budget. What an
    earlier run in this process froze (``collected_per_file``; a language server's worker
    answers task after task, each with a Project of its own) becomes collectable again."""
    run_finished()
    from shardcheck.analyzer.interp import model  # noqa: F401  # imported lazily by the engine
    from shardcheck.analyzer.rules import all_rules
    all_rules()
    project = Project(config)
    for f in files:
        if os.path.isfile(f):  # a FIFO or a dangling link is reported, never imported
            project.add_file(f)
    project.imported_files = getattr(files, "imported", None)  # workspace.ProjectFiles
    _state["config"] = config
    _state["project"] = project


def check_one(path: str, data: Optional[bytes] = None) -> Result:
    """(path, content digest or None if unread, findings, what they depend on).
    ``data``: the file's bytes when the caller read them already (to hash them)."""
    config: Config = _state["config"]
    project: Project = _state["project"]
    project.start_recording()
    with collected_per_file():
        data, findings = read_and_check(path, config, project, data)
    if data is None:
        return path, None, findings, Dependencies()
    return path, content_hash(data), findings, project.dependencies(path)


def _address_space() -> Optional[int]:
    """This process's virtual size in bytes (Linux), else None."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def _cap_memory(budget: int) -> None:
    """Let this process grow by at most ``budget`` bytes from here."""
    try:
        import resource
    except ImportError:  # no rlimits on this platform: only the time budget applies
        return
    now = _address_space()
    if now is None:
        return
    try:
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        soft = now + budget
        if hard != resource.RLIM_INFINITY:
            soft = min(soft, hard)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    except (ValueError, OSError, OverflowError):
        pass


def _die_with_parent(parent: Optional[int] = None) -> None:
    """On Linux, have the kernel kill this worker when the process that started it (a
    run, a daemon, a language server's fork server) dies: a worker of a killed run would
    otherwise finish its file with no one to stop it at the time budget, or to read the
    result. ``parent`` is that process's pid as the parent knew it before starting this
    one: read here, it would be the reaper's if the parent died between the fork and this
    call, and the worker would live on."""
    if not sys.platform.startswith("linux"):
        return
    if parent is None:
        parent = os.getppid()
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # it died before the request took effect
        os._exit(1)


def _worker_main(conn, config: Config, files: Iterable[str], memory: int,
                 answer: Optional[Callable[[Any, int], Any]] = None) -> None:
    init_pool_worker(config, files)
    _serve(conn, answer or _check_task, lambda task: memory)


def _check_task(task: Tuple[str, Optional[bytes]], memory: int) -> Result:
    path, data = task
    try:
        return check_one(path, data)
    except MemoryError:
        return path, None, [skipped(path, _over_memory(memory))], Dependencies()
    except Exception as e:  # a bug of shardcheck's outside the rules: said, exit 2
        return path, None, [crashed(path, f"{type(e).__name__}: {e}")], Dependencies()


def _serve(conn, answer: Callable[[Any, int], Any], memory_of: Callable[[Any], int]) -> None:
    """A worker's loop: each task answered under its memory budget, until the parent
    says stop or goes away."""
    start = _address_space()
    conn.send("ready")
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return
        if task is None:
            return
        memory = memory_of(task)
        if memory:
            _cap_memory(memory)
        conn.send(answer(task, memory))
        now = _address_space()
        if memory and start is not None and now is not None and now - start > memory:
            return  # grown by a whole budget: a fresh worker keeps memory bounded


def _over_time(timeout: float) -> str:
    return (f"its analysis ran past timeout-per-file ({timeout:g} s); it is too large or too "
            "complex to analyse")


def _over_memory(memory: int) -> str:
    return (f"its analysis needed more memory than memory-per-file ({_size(memory)}); it is "
            "too large or too complex to analyse")


def _size(n: int) -> str:
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:g} {unit}"
    return f"{n} bytes"


def _start_worker(parent: Optional[int], main: Callable[..., None], *args: Any) -> None:
    _die_with_parent(parent)
    main(*args)


class _Worker:
    def __init__(self, ctx, *args: Any, main: Callable[..., None] = _worker_main):
        self.conn, child = ctx.Pipe()
        # a fork server's children are its own, not this process's
        parent = None if ctx.get_start_method() == "forkserver" else os.getpid()
        self.proc = ctx.Process(target=_start_worker, args=(parent, main, child, *args),
                                daemon=True)
        self.proc.start()
        child.close()
        self.ready = False
        self.task: Optional[str] = None
        self.started = 0.0
        self.last_key: Hashable = None  # the key of the last source task it was given

    def give(self, path: str, data: Optional[bytes]) -> None:
        self.task, self.started = path, time.monotonic()
        self.conn.send((path, data))

    def give_source(self, task: "SourceTask") -> None:
        self.task, self.started = task.path, time.monotonic()
        try:
            self.conn.send(task)
        except (OSError, ValueError):
            pass  # the worker died: its sentinel says so, and its task is answered then

    def stop(self, kill: bool = False) -> None:
        if kill:
            self.proc.kill()
        else:
            try:
                self.conn.send(None)
            except (OSError, ValueError):
                self.proc.kill()
        self.proc.join(5)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join()
        self.conn.close()


def _death(path: str, code: Optional[int], memory: int) -> Finding:
    """The finding of a file whose worker died with it: skipped where the file's own
    size or nesting killed it (its memory budget; the native parser's stack), an
    internal error otherwise (killed from outside, or a crash of shardcheck's), which
    fails the run (exit 2) instead of passing without the file's findings."""
    if code == -6 and memory:  # abort: a native allocation failed under the memory cap
        return skipped(path, _over_memory(memory))
    if code == -11:
        return skipped(path, "shardcheck's parser crashed on it (a segmentation fault: nesting "
                             "too deep for its stack); it is too complex to analyse")
    how = (f"killed by signal {-code}" if code is not None and code < 0
           else f"exit status {code}")
    if code == -9:  # never the memory cap (that fails allocations): another process
        how += ", by the system's out-of-memory killer or another process"
    return crashed(path, f"its worker process died: {how}")


class WorkersFailed(Exception):
    """Worker processes cannot start here; the caller checks in-process instead."""


def run_supervised(todo: List[Tuple[str, Optional[bytes]]], config: Config, files: Iterable[str],
                   jobs: int, method: str,
                   answer: Optional[Callable[[Any, int], Any]] = None) -> Iterator[Result]:
    """Each file of ``todo`` (a path, and its bytes if read already) checked in a worker,
    under the config's budgets. ``answer(task, memory)``: what a worker does with a file
    instead of checking it (a picklable function: ``per_file.listed``'s); it answers in
    a check's shape, (path, None, its result, no dependencies), and a file past a budget
    or whose worker died is answered as a check's (a skipped or crashed finding)."""
    ctx = multiprocessing.get_context(method)
    if method == "fork":  # import once here; the forked workers share it
        from shardcheck.analyzer.interp import model  # noqa: F401
    timeout = config.timeout_per_file or None
    memory = config.memory_per_file or 0
    queue = list(reversed(todo))
    workers: Dict[int, _Worker] = {}
    failures = 0

    def spawn() -> None:
        w = _Worker(ctx, config, files, memory, answer)
        workers[id(w)] = w

    try:
        for _ in range(max(1, min(jobs, len(todo)))):
            spawn()
        while queue or any(w.task is not None for w in workers.values()):
            for w in list(workers.values()):
                if w.ready and w.task is None and queue:
                    w.give(*queue.pop())
            waits = [w.started + timeout - time.monotonic()
                     for w in workers.values() if w.task is not None and timeout]
            ready = wait([w.conn for w in workers.values()] +
                         [w.proc.sentinel for w in workers.values()],
                         timeout=min(max(0.0, min(waits)), _LONGEST_WAIT) if waits else None)
            for w in list(workers.values()):
                done = w.conn in ready or w.proc.sentinel in ready
                expired = timeout and w.task is not None and \
                    time.monotonic() - w.started > timeout
                if done and w.conn.poll():
                    try:
                        msg = w.conn.recv()
                    except (EOFError, OSError):
                        msg = None
                    if msg == "ready":
                        w.ready = True
                        continue
                    if msg is not None:
                        w.task = None
                        yield msg
                        continue
                if done and not w.proc.is_alive() or expired:
                    w.stop(kill=True)
                    del workers[id(w)]
                    if not w.ready:
                        failures += 1
                        if failures > 2:
                            raise WorkersFailed(f"worker exit status {w.proc.exitcode}")
                    if w.task is not None:
                        found = (skipped(w.task, _over_time(timeout)) if expired and timeout
                                 else _death(w.task, w.proc.exitcode, memory))
                        yield w.task, None, [found], Dependencies()
                    if queue:
                        spawn()
    finally:
        for w in workers.values():
            w.stop(kill=w.task is not None)


def threaded_start_method() -> str:
    """How a process that runs threads (a language server) starts workers: forked from a
    fork server, a process of one thread that imported the analysis once (a worker that
    replaces a killed one is ready in 40 ms, not the 0.5 s a spawned one takes to import
    it), else spawned."""
    return "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"


# imported once by the fork server, before it forks any worker
_FORKSERVER_PRELOAD = ["shardcheck.check.supervisor", "shardcheck.analyzer.interp.model",
                       "shardcheck.analyzer.rules", "shardcheck.analyzer.hover",
                       "shardcheck.check.project_answer", "shardcheck.check.discovery"]


def start_method() -> str:
    """How this process starts workers: fork is cheapest, but unsafe once threads run;
    JAX's are native threads that ``threading`` cannot see, so a process that loaded JAX
    (a test, a notebook) spawns."""
    forkable = hasattr(os, "fork") and threading.active_count() == 1 and "jax" not in sys.modules
    return "fork" if forkable else "spawn"


# -- single sources: standard input and the language server's buffers -----------------------
CHECK, HOVER, PROJECT = "check", "hover", "project"


@dataclass(frozen=True)
class SourceTask:
    """One source analysed as ``check`` analyses the file ``path`` names: its bytes (or
    its text, as an editor holds it) under the budgets and generated-size limit of
    ``config``, with ``files`` the project files its imports resolve to besides the
    modules beside it. ``kind``: ``CHECK`` answers its findings; ``HOVER`` its
    ``hover.HoverIndex``, or None when it was not analysed; ``PROJECT`` the project's
    answer for it (``project_answer.ProjectAnswer``: its importers in the project
    analysed too, all of it under the one task's budgets). ``overlay``: (path, text) of
    the unsaved buffers an editor holds, read instead of their files."""

    path: str
    source: Union[bytes, str]
    config: Config
    files: Tuple[str, ...] = ()
    kind: str = CHECK
    overlay: Tuple[Tuple[str, str], ...] = ()

    def over_budget(self, why: str) -> Any:
        """The answer when a budget stopped the analysis: ``check``'s skipped-file finding."""
        return self.failed(skipped(self.path, why))

    def failed(self, finding: Finding) -> Any:
        """The answer when the analysis did not finish: ``finding`` (skipped, or an
        internal error), as ``check`` gives it; no hover index."""
        if self.kind == PROJECT:
            from shardcheck.check.project_answer import ProjectAnswer
            return ProjectAnswer([finding])
        return [finding] if self.kind == CHECK else None


def _encoded(text: str) -> bytes:
    """The bytes of a file holding ``text``: in the encoding its coding cookie declares,
    else UTF-8 (what ``sources.decode_source`` reads back as ``text``)."""
    data = text.encode("utf-8", "surrogatepass")
    lines = iter(data.splitlines(keepends=True)[:2])
    try:
        encoding, _ = tokenize.detect_encoding(lambda: next(lines, b""))
        if encoding not in ("utf-8", "utf-8-sig"):
            return text.encode(encoding)
    except (SyntaxError, LookupError, UnicodeError):
        pass  # decode_source names the problem, as it does for such a file
    return data


def _answer(task: SourceTask) -> Any:
    """A task's answer, computed in this process. The project is built afresh: the
    modules it imports may have changed on disk since the last task."""
    data = task.source if isinstance(task.source, bytes) else _encoded(task.source)
    overlay = {os.path.abspath(p): _encoded(text) for p, text in task.overlay}
    if task.kind == PROJECT:
        from shardcheck.check.project_answer import answer
        return answer(task.path, data, task.config, overlay)
    init_worker(task.config, list(task.files))
    _state["project"].overlay = overlay
    if task.kind == CHECK:
        return check_one(task.path, data)[2]
    from shardcheck.analyzer.hover import index
    from shardcheck.analyzer.sources import SourceError, decode_source, looks_generated
    limit = task.config.generated_size_limit
    if limit and len(data) > limit and looks_generated(task.path, data):
        return None  # check skips it: no types to show either
    try:
        text = task.source if isinstance(task.source, str) else decode_source(data)
    except SourceError:
        return None
    return index(text, task.path, task.config, _state["project"])


def _answer_task(task: SourceTask, memory: int) -> Any:
    try:
        return _answer(task)
    except MemoryError:
        return task.over_budget(_over_memory(memory))
    except Exception as e:  # a bug of shardcheck's outside the rules: said, exit 2
        return task.failed(crashed(task.path, f"{type(e).__name__}: {e}"))


def _source_worker_main(conn) -> None:
    # A worker writes nothing to its parent's standard output: a language server's is
    # the protocol stream to the editor
    try:
        sys.stdout.flush()
        os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass
    sys.stdout = sys.stderr
    init_pool_worker(Config(), [])
    _serve(conn, _answer_task, lambda task: task.config.memory_per_file or 0)


def answer_here(task: SourceTask) -> Any:
    """``task`` answered in this process, with no budget (both budgets are 0, or no
    worker process can start here)."""
    with tuned_collector():
        return _answer(task)


def analyse_source(task: SourceTask) -> Any:
    """``task``'s answer, under its config's budgets in a worker process as ``check``
    checks a file (in this process when the config sets no budget)."""
    if not (task.config.timeout_per_file or task.config.memory_per_file):
        return answer_here(task)
    return SourceWorkers(1).run(task)


_NO_ANSWER = object()


class Superseded(Exception):
    """A task stopped because a newer task of its key replaced it."""


@dataclass
class _Job:
    task: SourceTask
    key: Hashable
    future: Future
    started: float = 0.0

    def deadline(self) -> Optional[float]:
        timeout = self.task.config.timeout_per_file
        return self.started + timeout if timeout else None


# seconds a running task may go on once a newer task of its key waits: a task that is
# nearly done finishes (killing its worker costs a fresh one's start: 40 ms from a fork
# server, 0.5 s spawned), a runaway version of a document does not hold the next one
# back for its whole budget
SUPERSEDED_GRACE = 0.5


class SourceWorkers:
    """Warm worker processes that analyse single sources, each task under its own
    config's budgets: a worker whose task runs past ``timeout-per-file`` is killed and
    replaced, and the task answers ``check``'s skipped-file finding.

    Answers are futures. The tasks of one key (a document) run one at a time, so an
    edited document holds at most one worker; a newer task of a key and kind replaces a
    queued one (its future is cancelled) and stops a running one after
    ``SUPERSEDED_GRACE`` (its future raises ``Superseded``). Where no worker process
    can start, tasks are answered in this process (``failure`` says why).

    Driven either by ``run`` (one task, in the caller's thread: fork is safe there when
    it is the only thread) or by ``start`` (a thread of its own, for a server)."""

    def __init__(self, size: int = 1, method: Optional[str] = None) -> None:
        self._ctx = multiprocessing.get_context(method or start_method())
        if self._ctx.get_start_method() == "forkserver":
            self._ctx.set_forkserver_preload(_FORKSERVER_PRELOAD)
        self._size = max(1, size)
        self._lock = threading.Lock()  # guards the queue: tasks come from other threads
        self._queue: List[_Job] = []
        self._workers: Dict[int, _Worker] = {}
        self._jobs: Dict[int, _Job] = {}  # id of a worker -> the job it runs
        self._dropped: Dict[Hashable, float] = {}  # key -> when ``cancel`` dropped it
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._closed = False
        self._failures = 0
        self._thread: Optional[threading.Thread] = None
        self.failure: Optional[str] = None

    # -- callers' side ----------------------------------------------------------------------
    def submit(self, task: SourceTask, key: Hashable = None) -> Future:
        """The future of ``task``'s answer (``key``: see the class docstring)."""
        future: Future = Future()
        with self._lock:
            if self._closed:
                future.cancel()
                return future
            replaced = [j for j in self._queue if key is not None and j.key == key
                        and j.task.kind == task.kind]
            self._queue = [j for j in self._queue if j not in replaced]
            self._queue.append(_Job(task, key, future))
        for job in replaced:  # outside the lock: a future's callbacks run here
            job.future.cancel()
        self._wake()
        return future

    def cancel(self, key: Hashable) -> None:
        """Drop the tasks of ``key`` (a document closed): the queued ones now, a running
        one as a superseded one is stopped."""
        with self._lock:
            dropped = [j for j in self._queue if j.key == key]
            self._queue = [j for j in self._queue if j.key != key]
            self._dropped[key] = time.monotonic()
        for job in dropped:
            job.future.cancel()
        self._wake()

    def run(self, task: SourceTask) -> Any:
        """``task``'s answer, its workers driven in this thread, then closed."""
        future = self.submit(task)
        try:
            while not future.done():
                self._step()
        except WorkersFailed as e:
            self.failure = str(e)
            return answer_here(task)
        finally:
            self.close()
        return future.result()

    def start(self) -> None:
        """Drive the workers from a thread of this pool's, from now on; they start with
        the first task, and are then kept at the pool's size."""
        self._thread = threading.Thread(target=self._serve, name="shardcheck-workers",
                                        daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop the workers; tasks still queued are cancelled."""
        with self._lock:
            self._closed = True
            dropped, self._queue = self._queue, []
        for job in dropped:
            job.future.cancel()
        self._wake()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(10)
        if self._thread is None:
            self._stop_workers()
        if self._thread is None or not self._thread.is_alive():
            self._wake_r.close()
            self._wake_w.close()

    def _wake(self) -> None:
        try:
            self._wake_w.send(b"x")
        except OSError:  # full (the pool wakes anyway) or closed
            pass

    # -- the pool's side --------------------------------------------------------------------
    def _serve(self) -> None:
        try:
            while not self._closed:
                self._step()
        except Exception as e:  # WorkersFailed, or a bug here: the tasks must still be answered
            self.failure = str(e) if isinstance(e, WorkersFailed) else f"{type(e).__name__}: {e}"
            self._stop_workers()
            self._answer_queue_here()
        finally:
            self._stop_workers()

    def _answer_queue_here(self) -> None:
        """No worker process can start: each task answered here, as it comes."""
        while not self._closed:
            with self._lock:
                job = self._queue.pop(0) if self._queue else None
            if job is None:
                wait([self._wake_r])
                self._drain_wakes()
            elif job.future.set_running_or_notify_cancel():
                try:
                    job.future.set_result(answer_here(job.task))
                except Exception as e:  # a bug of shardcheck's: the caller says it
                    job.future.set_exception(e)

    def _spawn(self) -> None:
        try:
            w = _Worker(self._ctx, main=_source_worker_main)
        except (OSError, RuntimeError, ValueError) as e:  # no process can start here
            raise WorkersFailed(f"a worker process cannot start: {e}") from None
        self._workers[id(w)] = w

    def _stop_workers(self) -> None:
        for w in list(self._workers.values()):
            self._retire(w, kill=id(w) in self._jobs or not w.ready)
            job = self._jobs.pop(id(w), None)
            if job is not None and not job.future.done():
                job.future.set_exception(Superseded("the workers were stopped"))

    def _retire(self, w: _Worker, kill: bool = True) -> None:
        w.stop(kill=kill)
        self._workers.pop(id(w), None)

    def _drain_wakes(self) -> None:
        try:
            while self._wake_r.recv(4096):
                pass
        except (BlockingIOError, OSError):
            pass

    def _step(self) -> None:
        """Give out queued tasks, wait for an answer, a death, a deadline or a new task,
        and settle what happened."""
        self._stop_superseded()
        self._assign()
        now = time.monotonic()
        deadlines = [d for d in (j.deadline() for j in self._jobs.values()) if d is not None]
        deadlines += [j.started + SUPERSEDED_GRACE for j in self._superseded()]
        timeout = min(max(0.0, min(deadlines) - now), _LONGEST_WAIT) if deadlines else None
        ready = wait([self._wake_r] + [w.conn for w in self._workers.values()] +
                     [w.proc.sentinel for w in self._workers.values()], timeout=timeout)
        if self._wake_r in ready:
            self._drain_wakes()
        for w in list(self._workers.values()):
            self._settle(w, w.conn in ready or w.proc.sentinel in ready)

    def _settle(self, w: _Worker, done: bool) -> None:
        job = self._jobs.get(id(w))
        deadline = job.deadline() if job is not None else None
        expired = deadline is not None and time.monotonic() > deadline
        if done and w.conn.poll():
            try:
                msg = w.conn.recv()
            except (EOFError, OSError):
                msg = _NO_ANSWER  # the worker is dying
            if isinstance(msg, str) and msg == "ready":
                w.ready = True
                return
            if msg is not _NO_ANSWER and job is not None:
                del self._jobs[id(w)]
                w.task = None
                job.future.set_result(msg)
                return
        if not (done and not w.proc.is_alive() or expired):
            return
        self._retire(w)
        self._jobs.pop(id(w), None)
        if not w.ready:
            self._failures += 1
            if self._failures > 2:
                raise WorkersFailed(f"worker exit status {w.proc.exitcode}")
        if job is not None:
            task = job.task
            job.future.set_result(
                task.over_budget(_over_time(task.config.timeout_per_file)) if expired
                else task.failed(_death(task.path, w.proc.exitcode,
                                        task.config.memory_per_file or 0)))

    def _superseded(self) -> List[_Job]:
        """The running jobs a newer job of their key and kind waits for, or whose key
        was dropped after they started."""
        with self._lock:
            newer = {(j.key, j.task.kind) for j in self._queue if j.key is not None}
            running = {j.key for j in self._jobs.values()}
            self._dropped = {k: at for k, at in self._dropped.items() if k in running}
            dropped = dict(self._dropped)
        return [j for j in self._jobs.values() if (j.key, j.task.kind) in newer
                or j.key in dropped and j.started <= dropped[j.key]]

    def _stop_superseded(self) -> None:
        stale = {id(j) for j in self._superseded()
                 if time.monotonic() - j.started >= SUPERSEDED_GRACE}
        for wid, job in list(self._jobs.items()):
            if id(job) in stale:
                self._retire(self._workers[wid])
                del self._jobs[wid]
                job.future.set_exception(Superseded("a newer task replaced it"))

    def _assign(self) -> None:
        """Each queued job whose key runs nothing to an idle worker, the one that ran the
        key's last job where it is idle (what a project's analysis keeps warm is of that
        document's project): hovers first (someone waits for them; diagnostics come when
        they come), else in order; a pool of more than one keeps a worker for hovers (a
        language server's project analyses, an edited file's and those of the open files
        it calls, would take them all); workers started for the jobs left waiting (a
        server's pool is kept at its size: a killed worker is replaced at once)."""
        idle = [w for w in self._workers.values() if w.ready and id(w) not in self._jobs]
        busy = {j.key for j in self._jobs.values() if j.key is not None}
        analyses = sum(1 for j in self._jobs.values() if j.task.kind != HOVER)
        given: List[Tuple[_Job, _Worker]] = []
        waiting = 0
        with self._lock:
            for job in sorted(self._queue, key=lambda j: j.task.kind != HOVER):
                if job.future.cancelled():
                    self._queue.remove(job)
                elif job.key is None or job.key not in busy:
                    kept = job.task.kind != HOVER and 1 < self._size <= analyses + 1
                    if not idle or kept:
                        waiting += 1
                        continue
                    self._queue.remove(job)
                    warm = [w for w in idle if job.key is not None and w.last_key == job.key]
                    worker = warm[0] if warm else idle[-1]
                    idle.remove(worker)
                    given.append((job, worker))
                    analyses += job.task.kind != HOVER
                    if job.key is not None:
                        busy.add(job.key)
        for job, w in given:
            if job.future.set_running_or_notify_cancel():
                self._jobs[id(w)] = job
                job.started = time.monotonic()
                w.last_key = job.key
                w.give_source(job.task)
        if self._thread is not None and (self._workers or given or waiting):
            missing = self._size - len(self._workers)
        else:
            starting = sum(1 for w in self._workers.values() if not w.ready)
            missing = min(waiting - starting, self._size - len(self._workers))
        for _ in range(missing):
            self._spawn()
