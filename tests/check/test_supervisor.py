"""The supervisor's workers: a worker whose parent is gone never starts its work."""

import multiprocessing
import sys

import pytest

from shardcheck.check import supervisor


def _write_marker(path: str) -> None:
    with open(path, "w") as f:
        f.write("ran")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_worker_whose_parent_died_before_it_asked_to_die_with_it_exits(tmp_path):
    """The daemon killed between forking a worker and the worker's prctl: the worker read
    its parent's pid after the fork, found the reaper's, and lived on (CI saw a worker
    outlive its daemon). The pid the parent passed is compared instead."""
    marker = tmp_path / "ran"
    ctx = multiprocessing.get_context("fork")
    gone = ctx.Process(target=lambda: None)
    gone.start()
    gone.join()  # a pid that is no one's parent now
    proc = ctx.Process(target=supervisor._start_worker,
                       args=(gone.pid, _write_marker, str(marker)))
    proc.start()
    proc.join(30)
    assert proc.exitcode == 1 and not marker.exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_worker_whose_parent_lives_runs(tmp_path):
    import os
    marker = tmp_path / "ran"
    proc = multiprocessing.get_context("fork").Process(
        target=supervisor._start_worker, args=(os.getpid(), _write_marker, str(marker)))
    proc.start()
    proc.join(30)
    assert proc.exitcode == 0 and marker.read_text() == "ran"
