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
    every = list(every)
    values = None
    if config_files:
        values = _config_values(list(config_files),
                                memo_file + ".configs" if memo_file and overlay is None else None)
    memo = _FindingsMemo(memo_file + ".findings", files, every, config, found, values) \
        if memo_file and overlay is None else None
    if memo is not None:
        hit = memo.read()
        if hit is not None:
            return hit
    out = _computed(files, every, config, found, values, overlay, memo_file)
    if memo is not None:
        memo.write(out)
    return out


def _computed(files: Sequence[str], every: List[str], config: Config, found: Sequence[Finding],
              values: Optional[dict], overlay: Optional[Mapping[str, bytes]],
              memo_file: Optional[str]) -> List[Finding]:
    from shardcheck.analyzer import parallelism_order, project_axes
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


def _config_values(configs: List[str], memo_file: Optional[str]) -> dict:
    """``config_checks.string_lists`` of the configs, kept in ``memo_file`` between runs:
    it holds while each file it read (the configs and the bases they name) has the
    size, modification time and inode it had, and shardcheck's code is the same. A run
    then parses no YAML for the project's findings."""
    import json

    from shardcheck.analyzer.config_checks import string_lists
    from shardcheck.analyzer.project_memo import state_of
    from shardcheck.check.cache import code_version
    asked = sorted(set(configs))
    if memo_file is not None:
        try:
            with open(memo_file, encoding="utf-8") as f:
                kept = json.load(f)
            if kept["asked"] == asked and kept["code"] == code_version() and \
                    kept["state"] == json.loads(json.dumps(state_of(kept["read"], None, None)[0])):
                return kept["values"]
        except (OSError, ValueError, KeyError, TypeError):
            pass  # missing, corrupt or stale: read again
    opened: List[str] = []
    values = string_lists(configs, opened)
    if memo_file is not None:
        read = sorted(set(opened))
        _write_json(memo_file, {"asked": asked, "code": code_version(), "read": read,
                                "state": state_of(read, None, None)[0], "values": values})
    return values


def _write_json(path: str, data: dict) -> None:
    """``data`` into ``path`` atomically; a memo that cannot be written is only slower."""
    import json
    import tempfile
    tmp = None
    try:
        folder = os.path.dirname(path) or "."
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f)
        os.replace(tmp, path)
    except OSError:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


class _FindingsMemo:
    """The project's findings of the last run, kept beside the mesh index: they hold
    while every project file has the size, modification time and inode it had (what
    ``project_axes`` and ``parallelism_order`` read), and the files asked about, the
    configs' values, the settings, shardcheck's code and what the files' own analysis
    said that filters them (SC101 rows, skipped files) are the same. A run answered all
    from the cache then reads no project file for them."""

    def __init__(self, path: str, files: Sequence[str], every: Sequence[str], config: Config,
                 found: Sequence[Finding], values: Optional[dict]) -> None:
        import hashlib
        import json

        from shardcheck.analyzer.project_memo import state_of
        from shardcheck.check.cache import code_version
        self.path = path
        paths = sorted(set(every) | set(files))
        filters = sorted({(f.filename, f.row, f.code) for f in found
                          if f.code in (SKIPPED_FILE, _SAME_DEFECT[0])})
        raw = json.dumps([code_version(), config.fingerprint(), sorted(config.exclude),
                          config.root, sorted(files), values, filters,
                          repr(state_of(paths, None, None))], default=str)
        self.key = hashlib.sha256(raw.encode()).hexdigest()

    def read(self) -> Optional[List[Finding]]:
        import json
        try:
            with open(self.path, encoding="utf-8") as f:
                data = json.load(f)
            if data.get("key") != self.key:
                return None
            return [Finding.from_json(d) for d in data["findings"]]
        except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
            return None  # missing or corrupt: computed again

    def write(self, findings: List[Finding]) -> None:
        _write_json(self.path, {"key": self.key, "findings": [
            dict(x.as_json(), in_expected_failure=x.in_expected_failure) for x in findings]})


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
