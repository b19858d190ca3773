"""``shardcheck confirm`` on scripts: options checked, programs run in parallel with
progress on a terminal, the report printed, and the exit status a CI job can trust.

Exit status: 0 only when every program ran to a clean end and every type agreed (and
no function went over the collective budget); 1 when any program failed, timed out or
could not run here, or a type disagreed; 2 on bad input (checked before anything runs).
"""

from __future__ import annotations

import argparse
import sys
import threading
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Dict, List, Optional, Tuple

from shardcheck.confirm import sandbox as rn


def options(args: argparse.Namespace, cfg, abstract: bool = False
            ) -> Tuple[Dict[str, rn.Platform], Optional[float]]:
    """The platforms JAX finds and the per-program timeout; ``UsageError`` for a
    ``--platform``, ``--devices`` or ``--timeout`` that cannot be honoured. ``abstract``:
    ``--mesh`` traces on an abstract mesh, where no device option applies."""
    import math
    timeout = getattr(args, "timeout", None)
    if timeout is not None and (not math.isfinite(timeout) or timeout < 0):
        raise rn.UsageError("--timeout takes a number of seconds like 300 (0 for no limit)")
    if timeout is None:
        timeout = getattr(cfg, "confirm_timeout", None)
    if timeout is None:
        timeout = rn.DEFAULT_TIMEOUT
    timeout = timeout or None  # 0: no limit
    if abstract:
        given = [f"--{o}" for o in ("platform", "devices") if getattr(args, o, None) is not None]
        if given:
            raise rn.UsageError(f"{' and '.join(given)} cannot apply with --mesh: it traces on an "
                                f"abstract mesh, with no devices")
        return {}, timeout
    platform = getattr(args, "platform", None)
    devices = getattr(args, "devices", None)
    if devices is not None and devices < 1:
        raise rn.UsageError("--devices must be at least 1")
    found = (rn.platforms() if platform != "cpu" else {"cpu": rn.Platform("cpu", "cpu", 0)})
    rn.check_options(found, platform, devices)
    return found, timeout


def alone_plan(args: argparse.Namespace, files: List[str], cfg, project,
               found: Dict[str, rn.Platform]) -> rn.DevicePlan:
    """Where the named functions (PATH::NAME) run: one process for all of them, on the
    devices the largest of their files' meshes needs."""
    import pathlib
    needs = [n for n in (rn.mesh_devices(pathlib.Path(f).read_bytes(), f, cfg, project)
                         for f in files) if n is not None]
    return rn.choose_devices(found, max(needs) if needs else None, args.platform, args.devices)


def run_scripts(args: argparse.Namespace, scripts: List[str], cfg, project,
                budget: Optional[int], found: Dict[str, rn.Platform],
                timeout: Optional[float]) -> list:
    """Every script confirmed, ``-j`` at a time, in the order given; on a terminal a
    progress line per program as it ends."""
    from shardcheck.confirm import programs as confirm
    jobs = args.jobs or min(4, rn.cpu_count())
    show = not rn.quiet_progress() and len(scripts) > 0
    lock, done = threading.Lock(), [0]
    results: List[Optional[confirm.FileResult]] = [None] * len(scripts)
    if show:
        print(f"confirming {len(scripts)} program(s), {jobs} at a time", file=sys.stderr)
    with ThreadPoolExecutor(max_workers=jobs) as pool:  # each program runs in its own process
        futures = {pool.submit(confirm.confirm_file, p, cfg, project, args.devices, budget,
                               timeout, found, args.platform): i for i, p in enumerate(scripts)}
        for fut in as_completed(futures):
            i = futures[fut]
            res = results[i] = fut.result()
            if show:
                with lock:
                    done[0] += 1
                    print(rn.progress_line(done[0], len(scripts), res.path, res.verdict,
                                           res.seconds), file=sys.stderr, flush=True)
    return [r for r in results if r is not None]


# Never programs, whatever they hold: running them installs, builds or configures tests
NEVER_RUN = ("setup.py", "conftest.py", "noxfile.py")


def programs(named: List[str], files: List[str], cfg,
             imported: bool = False) -> Tuple[List[str], List[str]]:
    """(the files confirm runs, the files it passes over) of ``files``: every file named
    on the command line; of the files found in a directory, those with an
    ``if __name__ == "__main__":`` guard or listed in ``confirm-programs`` (a library
    module has nothing to run, and running it as ``__main__`` fails on a relative
    import or does what the project never meant), or with ``imported`` (``--mesh``
    imports each file to trace its jitted functions) every module; never ``setup.py``,
    ``conftest.py`` or ``noxfile.py`` unless named."""
    import os
    given = {os.path.abspath(p) for p in named if os.path.isfile(p)}
    run, passed = [], []
    for f in files:
        if os.path.abspath(f) in given:
            run.append(f)
        elif os.path.basename(f) not in NEVER_RUN and (imported or cfg.is_listed_program(f)
                                                       or has_main_guard(f)):
            run.append(f)
        else:
            passed.append(f)
    return run, passed


def has_main_guard(path: str) -> bool:
    """``path`` has a top-level ``if __name__ == "__main__":`` (either way round)."""
    import ast
    try:
        with open(path, "rb") as fh:
            tree = ast.parse(fh.read(), filename=path)
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    for node in tree.body:
        test = node.test if isinstance(node, ast.If) else None
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and \
                isinstance(test.ops[0], ast.Eq):
            sides = [test.left, test.comparators[0]]
            names = [s.id for s in sides if isinstance(s, ast.Name)]
            texts = [s.value for s in sides if isinstance(s, ast.Constant)]
            if names == ["__name__"] and texts == ["__main__"]:
                return True
    return False


def passed_over_note(passed: List[str]) -> str:
    """One line for stderr naming what ``programs`` passed over."""
    shown = ", ".join(passed[:5]) + (f" and {len(passed) - 5} more" if len(passed) > 5 else "")
    return (f"shardcheck: not run: {len(passed)} file(s) found that are not programs (no "
            f'`if __name__ == "__main__":` guard, or setup.py/conftest.py): {shown}; name a file '
            "to run it, or list it in confirm-programs")
