"""The findings the whole project proves, added to each checked file's own once every
file is analysed: every entry point (``check``, pre-commit's staged files, the pytest
plugin, the language server) computes them here from the project's files as they are
now (an editor's unsaved buffers standing for theirs), so a file gets the same answer
however it is checked. They are never cached with a file's own findings; the project's
mesh index is kept between runs while no file changes (``project_axes.index_meshes``).
"""

from __future__ import annotations

import os
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Set

from shardcheck.analyzer.codes import SKIPPED_FILE
from shardcheck.analyzer.config import Config
from shardcheck.analyzer.ftypes import Finding


def project_findings(files: Sequence[str], every: Iterable[str], config: Config,
                     found: Sequence[Finding], config_files: Sequence[str] = (),
                     overlay: Optional[Mapping[str, bytes]] = None,
                     memo_file: Optional[str] = None) -> List[Finding]:
    """The findings of ``files`` that the whole project proves (``project_axes``,
    ``parallelism_order``), as the config selects them and the files' comments suppress
    them; none where a file's own analysis (``found``) already reports the axis at that
    line (SC101)."""
    from shardcheck.analyzer import parallelism_order, project_axes
    every = list(every)
    values = None
    if config_files:
        from shardcheck.analyzer.config_checks import string_lists
        values = string_lists(list(config_files))
    out: List[Finding] = []
    # what silences unknown-mesh-axis silences SC114 too (_SAME_DEFECT)
    wanted = _wanted(files, config, found, {project_axes.CODE, _SAME_DEFECT[0]})
    if wanted:
        new = project_axes.check(wanted, every, overlay=overlay, config_values=values,
                                 memo_file=memo_file)
        seen = {(f.filename, f.row) for f in found if f.code == _SAME_DEFECT[0]}
        out += _unsilenced([f for f in new if (f.filename, f.row) not in seen], overlay)
    wanted = _wanted(files, config, found, {parallelism_order.CODE})
    if wanted:
        new = parallelism_order.check(wanted, every, overlay, values)
        out += _unsilenced(new, overlay, same_defect=False)
    return out


def _wanted(files: Sequence[str], config: Config, found: Sequence[Finding],
            codes: Set[str]) -> List[str]:
    """The Python files of ``files`` that the config has every rule of ``codes`` on
    for, and that were not skipped (a budget, a generated file)."""
    if not codes <= config.enabled_codes():
        return []
    skipped = {f.filename for f in found if f.code == SKIPPED_FILE}
    return [f for f in files if f.endswith(".py") and not config.is_excluded(f) and
            f not in skipped and not codes & config.ignored_for(f)]


def _unsilenced(new: List[Finding], overlay: Optional[Mapping[str, bytes]],
                same_defect: bool = True) -> List[Finding]:
    """``new`` without the findings a suppression comment on their line silences."""
    if not new:
        return []
    from shardcheck.analyzer.suppressions import suppressed_rows
    comments: Dict[str, dict] = {}
    out: List[Finding] = []
    for f in new:
        if f.filename not in comments:
            comments[f.filename] = suppressed_rows(f.filename, overlay)
        if not _silenced(f, comments[f.filename], same_defect):
            out.append(f)
    return out


# what turns unknown-mesh-axis off (the config's ignore, per-file-ignores, a suppression
# comment on the line) turns axis-in-no-project-mesh off too: both report the spec's
# axis, the second where the file's analysis could not see the mesh (and a suppressed
# SC101 leaves no finding to tell that it did)
_SAME_DEFECT = ("SC101", "unknown-mesh-axis")


def _silenced(f: Finding, rows: dict, same_defect: bool = True) -> bool:
    return any(items and ("*" in items or f.code in items or f.name in items or
                          same_defect and any(d in items for d in _SAME_DEFECT))
               for items in (rows.get(f.row), rows.get(f.end_row)))


def config_findings(configs: List[str], cfg: Config, python_files: Sequence[str],
                    texts: Optional[Mapping[str, str]] = None) -> List[Finding]:
    """The findings of the YAML/JSON sharding configs ``configs`` (``config_checks``),
    as the config selects them (``select``/``ignore``, ``per-file-ignores``); the logical
    names the project's Python files use are read for the configs' rule tables.
    ``texts``: a config's unsaved content (an editor's buffer), by path."""
    from shardcheck.analyzer import config_checks
    if config_checks.CODE not in cfg.enabled_codes():
        return []
    used = config_checks.logical_names_used([f for f in python_files if f.endswith(".py")])
    out: List[Finding] = []
    for path in configs:
        if config_checks.CODE in cfg.ignored_for(os.path.abspath(path)):
            continue
        out.extend(config_checks.check(path, text=(texts or {}).get(path), used=used))
    return out
