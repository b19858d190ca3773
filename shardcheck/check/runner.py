"""Check many files: cache look-ups, then the misses on all cores.

Each worker process keeps one Project, so modules imported by many files are evaluated
once per worker. With a per-file time or memory budget (the default), files are checked
in supervised worker processes (``supervisor``) that a runaway file cannot hang or take
down with it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable, Iterable, List, Optional, Sequence, Tuple

from shardcheck.analyzer.dependencies import Dependencies

from .cache import Cache
from shardcheck.analyzer.codes import INTERNAL_ERROR, SKIPPED_FILE
from shardcheck.analyzer.config import Config
from shardcheck.analyzer.ftypes import Finding

# The analysis (libcst, the interpreter, the rules) is imported only when a file misses
# the cache: a run whose results all come from the cache reads, hashes and prints.


@dataclass
class RunResult:
    findings: List[Finding]
    files: int  # the files checked
    cached: int  # the files analysed whose results came from the cache
    importers: int = 0  # the project files analysed besides, for their calls into them


def run(files: List[str], config: Config, jobs: Optional[int] = None,
        cache_dir: Optional[str] = None,
        progress: Optional[Callable[[int, int], None]] = None,
        project_files: Optional[Sequence[str]] = None,
        config_files: Sequence[str] = ()) -> RunResult:
    """The findings of ``files``, as the whole project has them; ``progress(done,
    total)`` after each file analysed.

    ``project_files``: the project's Python files (``project_files()``). Each of ``files``
    is analysed, and each project file that imports one of them, directly or through
    other modules (its calls evaluate their functions under its contexts); the findings
    kept are those ``workspace.restrict`` keeps. Without ``project_files``, ``files``
    are the project. ``config_files``: the project's YAML/JSON sharding configs (their
    ``mesh_axes`` are the axes of a mesh the code builds from ``config.mesh_axes``).

    Findings over the whole project (``project_axes``: an axis no mesh of the project
    has) are added to each file's after its analysis, from the project's files as they
    are now: they are never cached with a file's own."""
    from shardcheck.analyzer.workspace import Workspace, restrict
    cache = Cache(cache_dir, config.fingerprint()) if cache_dir else None
    memo = cache.imports_memo() if cache is not None else None
    every: Iterable[str] = list(dict.fromkeys(list(project_files or ()) + list(files)))
    analysed = list(files)
    # without a project around them the files named are the project: their imports are
    # read for which of them another imports (parsed once), and not kept
    workspace = Workspace(config, every, memo if project_files is not None else None)
    if project_files is not None:
        analysed += workspace.importers(files)
    every = workspace.project_files()  # a module others import is parsed once
    results: dict = {}
    todo: List[Tuple[str, Optional[bytes]]] = []  # a miss keeps the bytes read for its hash
    cached = 0
    for path in analysed:
        data = None
        if cache is not None:
            data, digest = cache.read(path)
            hit = cache.get(path, digest) if digest is not None else None
            if hit is not None:
                results[path] = hit
                cached += 1
                continue
        todo.append((path, data))
    if progress is not None:
        progress(cached, len(analysed))
    settled = cached  # files done so far
    if todo:
        light, todo = _without_analysis(todo, config, every)
        for path, findings, digest, deps in light:
            results[path] = findings
            if cache is not None and digest is not None:
                cache.put(path, digest, findings, deps)
        settled += len(light)
        if progress is not None and light:
            progress(settled, len(analysed))
    if todo:
        for done, (path, findings, digest, deps) in enumerate(_check(todo, config, every, jobs), 1):
            results[path] = findings
            if progress is not None:
                progress(settled + done, len(analysed))
            # a crash, or a file skipped for its budget or an unreadable state, is not a result
            if cache is not None and digest is not None and not any(
                    f.code in (INTERNAL_ERROR, SKIPPED_FILE) for f in findings):
                cache.put(path, digest, findings, deps)
    if cache is not None:
        cache.save_memos()
        cache.prune()
    findings = restrict(results, files)
    from .project_checks import project_findings
    findings += project_findings(files, every, config, findings, config_files,
                                 memo_file=cache.project_axes_file if cache is not None else None)
    return RunResult(findings, len(files), cached, len(analysed) - len(files))


# Larger files are compiled under the per-file budgets, in a worker (supervisor.py)
_LIGHT_BYTES = 1 << 20


def _without_analysis(todo: List[Tuple[str, Optional[bytes]]], config: Config,
                      files: Iterable[str]):
    """(the results of the files the precheck clears, the files left to analyse).

    A Python file that compiles, spells no sharding API and imports none within reach
    (``precheck.cleared``), and holds no shardcheck comment, has no finding; it
    is decided here, before the analysis (and libcst) is imported, exactly as the
    engine decides it. Anything else (a notebook, a file that does not decode or
    compile, one over 1 MiB, a comment to read) is left to the engine, under the budgets."""
    from shardcheck.analyzer.dependencies import content_hash
    from shardcheck.analyzer.notebooks import is_notebook
    from shardcheck.analyzer.precheck import cleared, declared_words
    from shardcheck.analyzer.project import Project
    from shardcheck.analyzer.sources import (SourceError, Unreadable, decode_source,
                                             looks_generated, read_source)
    project: Optional[Project] = None
    done: List[Tuple[str, List[Finding], str, Dependencies]] = []
    rest: List[Tuple[str, Optional[bytes]]] = []
    limit = config.generated_size_limit
    words = declared_words(config)
    for path, data in todo:
        try:
            data = read_source(path) if data is None else data
            text = decode_source(data)
        except (Unreadable, SourceError):
            rest.append((path, data))
            continue
        lower = text.lower()
        # a noqa comment is left alone (other tools' codes) unless unused ones are reported
        comments = "shardcheck" in lower or (config.warn_unused_ignores and "noqa" in lower)
        if is_notebook(path) or comments or len(data) > _LIGHT_BYTES or \
                (limit and len(data) > limit and looks_generated(path, data)):
            rest.append((path, data))
            continue
        if project is None:
            project = Project(config)
            for f in files:
                if os.path.isfile(f):
                    project.add_file(f)
        project.start_recording()
        if not cleared(text, path, project, words=words):
            rest.append((path, data))
            continue
        done.append((path, [], content_hash(data), project.dependencies(path)))
    return done, rest


def _check(todo: List[Tuple[str, Optional[bytes]]], config: Config, files: Iterable[str],
           jobs: Optional[int]) -> List[Tuple[str, List[Finding], Optional[str], Dependencies]]:
    """(path, findings, content digest or None, what the findings depend on) of each file of
    ``todo``: in supervised workers, a process pool, or this process."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from .supervisor import (WorkersFailed, check_one, init_pool_worker, init_worker,
                             run_supervised, start_method, tuned_collector)
    jobs = jobs or os.cpu_count() or 1
    method = start_method()
    forkable = method == "fork"
    budgeted = bool(config.timeout_per_file or config.memory_per_file)
    if jobs > 1:  # largest first: the last files to finish are small, no worker waits long
        todo = sorted(todo, key=lambda t: -_size(*t))
    outs: list = []
    if budgeted and (forkable or (len(todo) >= 16 and jobs > 1)):
        try:
            outs.extend(run_supervised(todo, config, files, jobs, method))
        except WorkersFailed:  # no worker processes here: check the rest in-process
            pass
        done = {o[0] for o in outs}
        todo = [t for t in todo if t[0] not in done]
    if len(todo) >= 16 and jobs > 1 and not budgeted:
        with ProcessPoolExecutor(max_workers=jobs, initializer=init_pool_worker,
                                 initargs=(config, files),
                                 mp_context=multiprocessing.get_context(method)) as pool:
            outs.extend(pool.map(check_one, *zip(*todo),
                                 chunksize=max(1, len(todo) // (jobs * 8))))
    elif todo:
        init_worker(config, files)
        with tuned_collector():
            outs.extend(check_one(p, data) for p, data in todo)
    return [(path, findings, digest, deps) for path, digest, findings, deps in outs]


def _size(path: str, data: Optional[bytes]) -> int:
    if data is not None:
        return len(data)
    try:
        return os.stat(path).st_size
    except OSError:
        return 0
