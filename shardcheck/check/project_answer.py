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
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Tuple

from shardcheck.analyzer.config import Config
from shardcheck.analyzer.engine import read_and_check
from shardcheck.analyzer.ftypes import Finding
from shardcheck.analyzer.project import Project
from shardcheck.analyzer.sources import SourceError, decode_source
from shardcheck.analyzer.workspace import ImportsMemo, Workspace, restrict
from shardcheck.check.discovery import project_files

# what each project file's import statements name, kept by a warm worker between tasks
# (checked against each file's size and mtime): an edit reads no unchanged file again to
# find the importers of the document
_IMPORTS_MEMO: ImportsMemo = {}


@dataclass(frozen=True)
class ProjectAnswer:
    """The findings of the source (wherever they are placed: those its calls place in
    another module too), and the files the answer read: the source, its importers, and
    every module their analyses read. Another open document whose file is among them
    (or that read this one) is due a new answer when this one changes."""

    findings: List[Finding]
    read: Tuple[str, ...] = field(default=())


def answer(path: str, data: bytes, config: Config, overlay: Mapping[str, bytes]) -> ProjectAnswer:
    """The project's answer for the file ``path`` holding ``data``; ``overlay``: the
    unsaved buffers of the other open documents (absolute path -> bytes)."""
    here = os.path.abspath(path)
    buffers = dict(overlay)
    buffers[here] = data
    files = [os.path.abspath(f) for f in project_files(config, [path]) or ()]
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
    for checked in [path] + importers:
        project.start_recording()
        _, results[checked] = read_and_check(checked, config, project,
                                             buffers.get(os.path.abspath(checked)))
        read.add(os.path.abspath(checked))
        read.update(os.path.abspath(p) for p in project.dependencies(checked).files)
    return ProjectAnswer(restrict(results, [path]), tuple(sorted(read)))


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
