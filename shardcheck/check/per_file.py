"""One file's analysis for the commands that list what it finds (``types``, ``specs``),
and the run over many files: in the budgeted worker processes ``check`` uses
(``supervisor.run_supervised``), or in this process.
"""

from __future__ import annotations

import functools
import os
import sys
from typing import Any, Callable, Iterable, Iterator, List, Optional, Tuple

# what a file's listing is: (its result, or None and why it was not analysed)
Listed = Tuple[Optional[Any], str]


def attempt(fn: Callable[..., Any], path: str, cfg: Any, project: Any,
            data: Optional[bytes] = None) -> Listed:
    """(``fn(source, path, cfg, project)`` for ``path``, "") or (None, why the file was
    not analysed: unreadable, past the limits, it does not parse, or an internal error)."""
    from shardcheck.analyzer.engine import NotAnalysed
    from shardcheck.analyzer.sources import Unreadable, read_source
    try:
        return fn(read_source(path) if data is None else data, path, cfg, project), ""
    except (Unreadable, NotAnalysed) as e:
        return None, f"not analysed: {e}"
    except SyntaxError as e:
        msg = str(e.msg or e)  # ours start "this file ...", Python's do not
        return None, (msg if msg.startswith("this file") else f"does not parse: {msg}")
    except Exception as e:  # a bug of shardcheck's: said, and the other files still run
        return None, (f"not analysed: internal error ({type(e).__name__}: {e}); please "
                      "report it with this file")


def analysed(fn: Callable[..., Any], path: str, cfg: Any, project: Any) -> Optional[Any]:
    """``attempt``'s result, or None after saying on stderr why there is none."""
    result, why = attempt(fn, path, cfg, project)
    if result is None:
        say(path, why)
    return result


def say(path: str, why: str) -> None:
    print(f"{path}: {why}".splitlines()[0], file=sys.stderr)


def listed(fn: Callable[..., Any], files: List[str], cfg: Any, project: Any,
           project_files: Iterable[str], jobs: Optional[int] = None) -> Iterator[Tuple[str, Listed]]:
    """(path, ``attempt``'s answer) for each of ``files``, in their order. With more
    than one job and more than one file, each file is analysed in a worker process under
    the config's time and memory budgets, as ``check`` runs (a file past them is said to
    be, and the others go on); else here, with ``project``. ``fn`` must be a module-level
    function (a spawned worker imports it by name)."""
    jobs = jobs or os.cpu_count() or 1
    budgeted = bool(cfg.timeout_per_file or cfg.memory_per_file)
    if jobs == 1 or len(files) < 2 or not budgeted:
        for path in files:
            yield path, attempt(fn, path, cfg, project)
        return
    from shardcheck.check.supervisor import WorkersFailed, run_supervised, start_method
    answers: dict = {}
    todo: List[Tuple[str, Optional[bytes]]] = [(p, None) for p in files]
    try:
        for path, _, answer, _ in run_supervised(todo, cfg, project_files, jobs, start_method(),
                                                 answer=functools.partial(listing_task, fn)):
            answers[path] = answer if isinstance(answer, tuple) else \
                (None, answer[0].message)  # past a budget, or died: "this file was not analysed: ..."
    except WorkersFailed:  # no worker processes here: the rest in this process
        pass
    for path in files:
        yield path, answers[path] if path in answers else attempt(fn, path, cfg, project)


def listing_task(fn: Callable[..., Any], task: Tuple[str, Optional[bytes]], memory: int) -> Any:
    """A worker's answer for one file of ``listed``: (path, None, ``attempt``'s answer,
    no dependencies), in the shape of a check's result."""
    from shardcheck.analyzer.dependencies import Dependencies
    from shardcheck.check.supervisor import _over_memory, _state
    path, data = task
    try:
        answer = attempt(fn, path, _state["config"], _state["project"], data)
    except MemoryError:
        answer = (None, f"not analysed: {_over_memory(memory)}")
    return path, None, answer, Dependencies()
