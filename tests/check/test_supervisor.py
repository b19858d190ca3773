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


class _Node:
    """An object a cycle can hold and a weak reference can watch."""


def test_a_files_cycles_are_collected_and_what_it_keeps_is_frozen_until_the_run_ends(
        tmp_path, monkeypatch):
    """``collected_per_file``: the collector is held back while a file is analysed; after
    it, the file's cyclic garbage is freed (never frozen, so never leaked), what survives
    is frozen, and the run's end makes it collectable again."""
    import gc
    import weakref

    from shardcheck.analyzer.config import Config
    kept = []
    watched = []

    def analyse(path, config, project, data=None):
        cycle = _Node()
        cycle.self = cycle  # garbage once the file is done: only a collection frees it
        watched.append(weakref.ref(cycle))
        kept.append(_Node())  # lives on, like a module an importer parsed
        threshold_inside.append(gc.get_threshold())
        return b"x = 1\n", []

    threshold_inside = []
    monkeypatch.setattr(supervisor, "read_and_check", analyse)
    source = tmp_path / "m.py"
    source.write_text("x = 1\n")
    gc.unfreeze()
    enabled = gc.isenabled()
    gc.disable()  # no automatic collection meanwhile: only the ones under test
    older = _Node()
    older.self = older  # garbage the process held before the run
    watched_older = weakref.ref(older)
    del older
    try:
        before = gc.get_freeze_count()
        with supervisor.tuned_collector():
            supervisor.init_worker(Config(root=str(tmp_path)), [str(source)])
            supervisor.check_one(str(source))
            assert watched[0]() is None  # the cycle was collected, not frozen
            # what the process held before the run is not traversed by the run's files
            assert watched_older() is not None
            assert gc.get_freeze_count() > before  # what survived is frozen
            assert threshold_inside == [supervisor.IN_FILE_GC_THRESHOLD]
            assert gc.get_threshold() == supervisor.GC_THRESHOLD
        assert gc.get_freeze_count() == 0  # collectable again after the run
        gc.collect()
        assert watched_older() is None
        # a worker answering task after task (the language server's): each task's set-up
        # makes what the last one froze collectable
        supervisor.init_worker(Config(root=str(tmp_path)), [str(source)])
        supervisor.check_one(str(source))
        assert gc.get_freeze_count() > 0
        supervisor.init_worker(Config(root=str(tmp_path)), [str(source)])
        assert gc.get_freeze_count() == 0
    finally:
        gc.unfreeze()
        if enabled:
            gc.enable()


def test_a_file_does_not_count_the_frozen_objects(tmp_path, monkeypatch):
    """``gc.get_freeze_count`` walks every frozen object: asked once per file, it cost
    more than the analysis by a run's last files on maxdiffusion (a one-process run
    took 50.6 s with it, 25.3 s without). Whether the run froze the heap is a flag."""
    import gc

    from shardcheck.analyzer.config import Config

    def counted():
        raise AssertionError("gc.get_freeze_count() walks the frozen heap")

    source = tmp_path / "m.py"
    source.write_text("x = 1\n")
    supervisor.init_worker(Config(root=str(tmp_path)), [str(source)])
    monkeypatch.setattr(gc, "get_freeze_count", counted)
    try:
        for _ in range(2):
            supervisor.check_one(str(source))
    finally:
        monkeypatch.undo()
        supervisor.run_finished()
    assert gc.get_freeze_count() == 0
