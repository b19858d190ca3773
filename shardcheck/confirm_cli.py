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

from shardcheck import confirm_run as rn


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
    from shardcheck import confirm
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
