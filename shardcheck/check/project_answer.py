"""The project's answer for one source as an editor holds it (the language server's
diagnostics): what ``shardcheck check FILE`` reports for the file, with the unsaved
buffers of the open documents standing for their files.

A file's findings come from its own analysis and from the analyses of the project files
that import it, directly or through other modules (``analyzer.workspace``): train.py's
call of model.py's ``init_params`` with its mesh is what proves model.py's SC104. So the
source is analysed with each of its importers, their buffers read where they are open
(their import statements too: an import added and not saved counts), and
``workspace.restrict`` keeps the findings of the source. All of it runs in one worker
task, under one file's budgets (``supervisor.SourceWorkers``).

A warm worker keeps each file's findings while every file its analysis read has the
content it read, or for a module it only looked names up in, the same slice of them
(``Dependencies``, as the cache keeps them, but against the buffers): an edit of
train.py re-analyses the importers of model.py that read what changed in train.py, not
all of them (with 261 importers, maxdiffusion's max_utils.py took 24 s to re-publish each time).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Mapping, Optional, Tuple

from shardcheck.analyzer.codes import INTERNAL_ERROR, SKIPPED_FILE
from shardcheck.analyzer.config import Config
from shardcheck.analyzer.dependencies import Dependencies, SliceOf, content_hash, hash_file
from shardcheck.analyzer.engine import read_and_check
from shardcheck.analyzer.ftypes import Finding
from shardcheck.analyzer.project import Project
from shardcheck.analyzer.slices import SliceDigests
from shardcheck.analyzer.sources import SourceError, Unreadable, decode_source, read_source
from shardcheck.analyzer.workspace import ImportsMemo, Workspace, restrict
from shardcheck.check.discovery import project_files

# what each project file's import statements name, kept by a warm worker between tasks
# (checked against each file's size and mtime): an edit reads no unchanged file again to
# find the importers of the document
_IMPORTS_MEMO: ImportsMemo = {}
# (the config's fingerprint, a file) -> (the hash of its content, what else its findings
# read, its findings), kept by a warm worker between tasks
_RESULTS: Dict[Tuple[str, str], Tuple[str, Dependencies, List[Finding]]] = {}


@dataclass(frozen=True)
class ProjectAnswer:
    """The findings of the source (wherever they are placed: those its calls place in
    another module too), and the files the answer read: the source, its importers, and
    every module their analyses read. Another open document whose file is among them
    (or that read this one) is due a new answer when this one changes. ``analysed``:
    how many of the source and its importers were analysed (the others' findings were
    kept from an earlier task)."""

    findings: List[Finding]
    read: Tuple[str, ...] = field(default=())
    analysed: int = 0


def answer(path: str, data: bytes, config: Config, overlay: Mapping[str, bytes]) -> ProjectAnswer:
    """The project's answer for the file ``path`` holding ``data``; ``overlay``: the
    unsaved buffers of the other open documents (absolute path -> bytes)."""
    here = os.path.abspath(path)
    buffers = dict(overlay)
    buffers[here] = data
    configs: List[str] = []
    files = [os.path.abspath(f) for f in project_files(config, [path], configs=configs) or ()]
    every = list(dict.fromkeys([here] + files))
    workspace = Workspace(config, every, _IMPORTS_MEMO, _texts(buffers))
    importers = workspace.importers([here])
    project = Project(config)
    project.overlay = buffers
    for f in every:
        if f in buffers or os.path.isfile(f):  # a FIFO or a dangling link is never imported
            project.add_file(f)
    project.imported_files = workspace.project_files().imported  # each parsed whole once
    results: Dict[str, List[Finding]] = {}
    read = set()
    fingerprint, fresh = config.fingerprint(), 0
    hash_of, exists = _hashes(buffers), _existing(buffers)
    slice_of = _slices(buffers)
    for checked in [path] + importers:
        key = (fingerprint, os.path.abspath(checked))
        known = _RESULTS.get(key)
        if known is not None and known[0] == hash_of(checked) and \
                known[1].hold(hash_of, exists, slice_of):
            results[checked], deps = known[2], known[1]
        else:
            fresh += 1
            project.start_recording()
            text, results[checked] = read_and_check(checked, config, project,
                                                    buffers.get(os.path.abspath(checked)))
            deps = project.dependencies(checked)
            # a crash, or a file skipped for its budget or an unreadable state, is no result
            if text is not None and not any(f.code in (INTERNAL_ERROR, SKIPPED_FILE)
                                            for f in results[checked]):
                _RESULTS[key] = (content_hash(text), deps.with_digests(_as_read(deps, hash_of, slice_of)),
                                 results[checked])
        read.add(os.path.abspath(checked))
        read.update(os.path.abspath(p) for p in deps.paths)
    found = restrict(results, [path])
    from shardcheck.check.project_checks import project_findings
    found += project_findings([path], every, config, found, configs, overlay=buffers)
    return ProjectAnswer(found, tuple(sorted(read)), fresh)


def _hashes(buffers: Mapping[str, bytes]) -> Callable[[str], Optional[str]]:
    """The hash of a file's content now, its buffer's where it is open (each file read
    once per task)."""
    known: Dict[str, Optional[str]] = {}

    def hash_of(path: str) -> Optional[str]:
        path = os.path.abspath(path)
        if path not in known:
            data = buffers.get(path)
            known[path] = content_hash(data) if data is not None else hash_file(path)
        return known[path]
    return hash_of


def _as_read(deps: Dependencies, hash_of: Callable[[str], Optional[str]],
             slice_of: SliceOf) -> SliceOf:
    """The slices of what a result looked up, of the content it read: each module of
    them as it is now, where that is still what was read (else none)."""
    def digest(path: str, names: Tuple[str, ...]) -> Optional[str]:
        return slice_of(path, names) if hash_of(path) == deps.names[path][0] else None
    return digest


_SLICES = SliceDigests(limit=512)  # a warm worker's, across tasks


def _slices(buffers: Mapping[str, bytes]) -> SliceOf:
    """The digest of the slice of names in a file as it is now, its buffer's where it is
    open (``analyzer.slices``)."""
    def slice_of(path: str, names: Tuple[str, ...]) -> Optional[str]:
        path = os.path.abspath(path)
        data = buffers.get(path)
        try:
            data = read_source(path) if data is None else data
        except Unreadable:
            return None
        return _SLICES.digest_of(data, names)
    return slice_of


def _existing(buffers: Mapping[str, bytes]) -> Callable[[str], bool]:
    """Whether a path is a file now (or an open buffer), each looked at once per task:
    the results of a project's files looked for thousands of the same absent modules."""
    known: Dict[str, bool] = {}

    def exists(path: str) -> bool:
        found = known.get(path)
        if found is None:
            found = known[path] = os.path.abspath(path) in buffers or os.path.exists(path)
        return found
    return exists


def _texts(buffers: Mapping[str, bytes]) -> Dict[str, str]:
    """The text of each buffer, as the analysis decodes it (one that does not decode is
    left out: its analysis says why)."""
    out: Dict[str, str] = {}
    for p, data in buffers.items():
        try:
            out[p] = decode_source(data)
        except SourceError:
            pass
    return out
