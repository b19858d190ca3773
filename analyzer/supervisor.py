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
import time
from multiprocessing.connection import wait
from typing import Dict, Iterator, List, Optional, Tuple

from .cache import Dependencies, content_hash
from .config import Config
from .engine import read_and_check, skipped
from .ftypes import Finding
from .project import Project

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
    """``GC_THRESHOLD`` for the length of the block, then the caller's thresholds."""
    saved = gc.get_threshold()
    gc.set_threshold(*GC_THRESHOLD)
    try:
        yield
    finally:
        gc.set_threshold(*saved)


def init_pool_worker(config: Config, files: List[str]) -> None:
    """A pool worker's set-up: ``init_worker``, under ``GC_THRESHOLD`` for its life."""
    gc.set_threshold(*GC_THRESHOLD)
    init_worker(config, files)


def init_worker(config: Config, files: List[str]) -> None:
    """One Project per process, so modules imported by many files are read once. The
    analysis modules are imported now, not inside the first file's time budget."""
    from .interp import model  # noqa: F401  # imported lazily by the engine
    from .rules import all_rules
    all_rules()
    project = Project(config)
    for f in files:
        if os.path.isfile(f):  # a FIFO or a dangling link is reported, never imported
            project.add_file(f)
    _state["config"] = config
    _state["project"] = project


def check_one(path: str, data: Optional[bytes] = None) -> Result:
    """(path, content digest or None if unread, findings, what they depend on).
    ``data``: the file's bytes when the caller read them already (to hash them)."""
    config: Config = _state["config"]
    project: Project = _state["project"]
    project.start_recording()
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
    except (ValueError, OSError):
        pass


def _worker_main(conn, config: Config, files: List[str], memory: int) -> None:
    init_pool_worker(config, files)
    start = _address_space()
    conn.send("ready")
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return
        if task is None:
            return
        path, data = task
        if memory:
            _cap_memory(memory)
        try:
            result = check_one(path, data)
        except MemoryError:
            result = (path, None, [skipped(path, _over_memory(memory))], Dependencies())
        conn.send(result)
        now = _address_space()
        if memory and start is not None and now is not None and now - start > memory:
            return  # grown by a whole budget: a fresh worker keeps memory bounded


def _over_memory(memory: int) -> str:
    return (f"its analysis needed more memory than memory-per-file ({_size(memory)}); it is "
            "too large or too complex to analyse")


def _size(n: int) -> str:
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:g} {unit}"
    return f"{n} bytes"


class _Worker:
    def __init__(self, ctx, config: Config, files: List[str], memory: int):
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker_main, args=(child, config, files, memory),
                                daemon=True)
        self.proc.start()
        child.close()
        self.ready = False
        self.task: Optional[str] = None
        self.started = 0.0

    def give(self, path: str, data: Optional[bytes]) -> None:
        self.task, self.started = path, time.monotonic()
        self.conn.send((path, data))

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


def _death(code: Optional[int], memory: int) -> str:
    """Why a worker that died took its file with it."""
    if code in (-6, -9) and memory:  # abort (a native allocation failed) or SIGKILL
        return _over_memory(memory)
    if code == -11:
        return ("shardcheck's parser crashed on it (a segmentation fault: nesting too deep "
                "for its stack); it is too complex to analyse")
    return f"its analysis stopped the worker process (exit status {code})"


class WorkersFailed(Exception):
    """Worker processes cannot start here; the caller checks in-process instead."""


def run_supervised(todo: List[Tuple[str, Optional[bytes]]], config: Config, files: List[str],
                   jobs: int, method: str) -> Iterator[Result]:
    """Each file of ``todo`` (a path, and its bytes if read already) checked in a worker,
    under the config's budgets."""
    ctx = multiprocessing.get_context(method)
    if method == "fork":  # import once here; the forked workers share it
        from .interp import model  # noqa: F401
    timeout = config.timeout_per_file or None
    memory = config.memory_per_file or 0
    queue = list(reversed(todo))
    workers: Dict[int, _Worker] = {}
    failures = 0

    def spawn() -> None:
        w = _Worker(ctx, config, files, memory)
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
                        why = (f"its analysis ran past timeout-per-file ({timeout:g} s); it is "
                               "too large or too complex to analyse" if expired
                               else _death(w.proc.exitcode, memory))
                        yield w.task, None, [skipped(w.task, why)], Dependencies()
                    if queue:
                        spawn()
    finally:
        for w in workers.values():
            w.stop(kill=w.task is not None)
