"""Which files to check: explicit files always; directories walked, honouring
.gitignore (via pathspec), [tool.shardcheck] exclude, hidden dirs and virtualenvs.

A path named on the command line is always checked, even if .gitignore or ``exclude``
covers it (unless ``force_exclude``, for pre-commit, which names every staged file).
Entries that are not regular files (a FIFO, a dangling symlink, a symlink loop) are
returned too: the engine reports each as a ``skipped-file`` finding saying why,
instead of blocking on it or calling it missing."""

from __future__ import annotations

import os
import re
from typing import Any, Dict, Iterator, List, Optional, Tuple

from shardcheck.analyzer.config import Config

_SKIP_DIRS = {"__pycache__", "node_modules", ".git", ".hg", ".svn", ".tox", ".nox",
              ".mypy_cache", ".pytest_cache", ".ruff_cache", ".shardcheck_cache", "build", "dist",
              "site-packages"}
# the temporary file a `check --fix` killed mid-write left before its name ended in .tmp
# (mkstemp's 8 characters, then .py): never checked, and swept by writeback
OLD_FIX_TEMPORARY = re.compile(r"\.shardcheck-fix-[a-z0-9_]{8}\.py\Z")


def _gitignore(dirpath: str, cache: Dict[str, object]):
    if dirpath in cache:
        return cache[dirpath]
    spec: Any = None  # a pathspec.PathSpec (its generic parameter differs by version)
    path = os.path.join(dirpath, ".gitignore")
    if os.path.isfile(path):
        import pathspec
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                lines = f.read().splitlines()
            try:  # pathspec >= 0.12 names git's own semantics "gitignore"
                spec = pathspec.PathSpec.from_lines("gitignore", lines)
            except (KeyError, LookupError):
                spec = pathspec.PathSpec.from_lines("gitwildmatch", lines)
        except Exception:
            spec = None
    cache[dirpath] = spec
    return spec


def _ignored(path: str, is_dir: bool, stack: List[Tuple[str, object]]) -> bool:
    for base, spec in stack:
        if spec is None:
            continue
        rel = os.path.relpath(path, base).replace(os.sep, "/")
        if spec.match_file(rel + ("/" if is_dir else "")):  # type: ignore[attr-defined]  # pathspec's stubs differ by version
            return True
    return False


# A project's configs in YAML or JSON (its meshes, its sharding rules): pre-commit passes
# the staged ones beside the Python files. They are part of the project, never read as
# Python; those that hold a sharding config have findings of their own
# (analyzer/config_checks.py, SC113).
CONFIG_SUFFIXES = (".yml", ".yaml", ".json")
_CONFIG_HEAD = 64 << 10  # how much of a config found in a tree is read for its keys


def is_config_file(path: str) -> bool:
    """Whether ``path`` names a config file of the project (not a notebook: ``.ipynb``)."""
    return path.lower().endswith(CONFIG_SUFFIXES)


def discover(paths: List[str], config: Config, force_exclude: bool = False,
             warnings: Optional[List[str]] = None,
             configs: Optional[List[str]] = None) -> Tuple[List[str], List[str]]:
    """(files to check, missing paths). Directories that cannot be listed are added
    to ``warnings`` (a message each). A config file named (``is_config_file``) is not
    among the files to check: the answer for the Python files named is the project's
    either way. ``configs`` gets the config files to check: those named or in the
    directories walked that hold a sharding config's keys."""
    files: List[str] = []
    missing: List[str] = []
    cache: Dict[str, object] = {}
    for p in paths:
        if force_exclude and config.is_excluded(os.path.abspath(p)):
            continue
        if os.path.isdir(p):
            files.extend(_walk(p, config, cache, force_exclude, warnings, configs))
        elif os.path.lexists(p):
            if not is_config_file(p):
                files.append(p)  # named explicitly: always checked (or reported as unreadable)
            elif configs is not None and _holds_sharding_config(p):
                configs.append(p)  # a staged workflow or data file is not one
        else:
            missing.append(p)
    seen = set()
    out = []
    for f in files:
        key = os.path.abspath(f)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out, missing


def _walk(root: str, config: Config, cache: Dict[str, object], force_exclude: bool = False,
          warnings: Optional[List[str]] = None,
          configs: Optional[List[str]] = None) -> Iterator[str]:
    root_abs = os.path.abspath(root)
    # a directory named explicitly is checked even if the config excludes it
    use_exclude = force_exclude or not config.is_excluded(root_abs)
    excluded = config.is_excluded if use_exclude else (lambda _p: False)
    stacks: Dict[str, List[Tuple[str, object]]] = {}
    # .gitignore files above the root (up to the repository top) apply too
    above: List[Tuple[str, object]] = []
    if config.respect_gitignore:
        d = os.path.dirname(root_abs)
        chain = []
        while True:
            chain.append(d)
            if os.path.exists(os.path.join(d, ".git")):
                break
            nd = os.path.dirname(d)
            if nd == d:
                chain = []
                break
            d = nd
        above = [(c, _gitignore(c, cache)) for c in reversed(chain)]
        if _ignored(root_abs, True, above):
            above = []  # a gitignored directory named explicitly is checked all the same

    def unlistable(err: OSError) -> None:
        if warnings is not None:
            warnings.append(f"{err.filename}: cannot list this directory "
                            f"({err.strerror or err}); its files are not checked")

    for dirpath, dirnames, filenames in os.walk(root_abs, onerror=unlistable):
        parent = stacks.get(os.path.dirname(dirpath), above) if dirpath != root_abs else above
        stack = parent + [(dirpath, _gitignore(dirpath, cache))] if config.respect_gitignore else []
        stacks[dirpath] = stack
        keep = []
        for d in sorted(dirnames):
            full = os.path.join(dirpath, d)
            if d.startswith(".") or d in _SKIP_DIRS or os.path.isfile(os.path.join(full, "pyvenv.cfg")):
                continue
            if excluded(full) or _ignored(full, True, stack):
                continue
            keep.append(d)
        dirnames[:] = keep
        for name in sorted(filenames):
            if configs is not None and is_config_file(name):
                full = os.path.join(dirpath, name)
                if not excluded(full) and not _ignored(full, False, stack) \
                        and _holds_sharding_config(full):
                    configs.append(os.path.relpath(full) if not os.path.isabs(root) else full)
                continue
            if not name.endswith((".py", ".ipynb")):  # notebooks: analyzer/notebooks.py
                continue
            if OLD_FIX_TEMPORARY.match(name):
                continue
            full = os.path.join(dirpath, name)
            if excluded(full) or _ignored(full, False, stack):
                continue
            yield os.path.relpath(full) if not os.path.isabs(root) else full


def _holds_sharding_config(path: str) -> bool:
    """Whether a config file found in a tree may hold a sharding config: one of its
    keys in the first 64 KiB of a regular file."""
    from shardcheck.analyzer.config_checks import KEYS
    try:
        if not os.path.isfile(path):
            return False
        with open(path, "rb") as f:
            head = f.read(_CONFIG_HEAD)
    except OSError:
        return False
    return any(k.encode() in head for k in KEYS)


# Past this many Python files a tree is no project (a home directory, a monorepo's root):
# the files checked are then analysed with the project files found so far.
MAX_PROJECT_FILES = 20_000


def project_root(config: Config, paths: List[str]) -> Optional[str]:
    """The directory holding the project the checked ``paths`` belong to: the one of the
    pyproject.toml that configured the run, else the checkout (.git, .hg) that holds the
    first path; None when neither is known (then the paths are the project)."""
    if config.source is not None:
        return os.path.abspath(config.root)
    start = os.path.abspath(paths[0] if paths else ".")
    d = start if os.path.isdir(start) else os.path.dirname(start)
    while True:
        if any(os.path.exists(os.path.join(d, m)) for m in (".git", ".hg")):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def project_files(config: Config, paths: List[str],
                  configs: Optional[List[str]] = None) -> Optional[List[str]]:
    """The project's Python files (walked as ``discover`` walks a directory: .gitignore,
    ``exclude``, virtualenvs left out), whose analyses see what the checked files'
    functions are called with; None when there is no project root (``project_root``).
    Spelled as ``discover`` spells a walk of a relative root: relative to the working
    directory when the paths are. ``configs`` gets the project's YAML/JSON sharding
    configs found on the walk (the values a ``config.mesh_axes`` may have)."""
    root = project_root(config, paths)
    if root is None:
        return None
    relative = bool(paths) and not os.path.isabs(paths[0])
    out: List[str] = []
    found: List[str] = []
    for f in _walk(os.path.relpath(root) if relative else root, config, {}, configs=found):
        if f.endswith(".py"):  # a notebook is checked, never imported
            out.append(f)
            if len(out) >= MAX_PROJECT_FILES:
                break
    if configs is not None:
        configs.extend(found)
    return out
