"""shardcheck's pytest plugin (entry point ``pytest11``; inactive unless asked for).

- ``--shardcheck``: every ``.py``/``.ipynb`` file pytest collects is also a test item that
  fails with the file's error-level findings, the project's answer for it as ``shardcheck
  check FILE`` gives it: the files collected are checked in one run of the runner (the
  cache, the per-file budgets, and the project files that import them analysed too), and
  each item reports the findings placed in its file, and those its file's calls place
  in a module no item checks (``[tool.shardcheck]`` from the rootdir's pyproject.toml
  applies). Warnings do not fail the item: each is a ``ShardcheckWarning``, which pytest
  lists in its warnings summary (``-W error::shardcheck.integrations.pytest_plugin.
  ShardcheckWarning`` fails on them). So is every YAML/JSON sharding config it meets (a
  file holding ``mesh_axes``, ``logical_axis_rules``, ...): its item reports the config's
  findings (SC113), as ``shardcheck check CONFIG`` gives them.
- ``--shardcheck-packages=pkg[,pkg2]``: functions of those packages whose parameters or
  return are annotated ``Sharded[...]`` are wrapped in ``sharding_types.check_shardings``
  as they are imported (as jaxtyping's import hook does), so the test suite checks
  every annotated call.
- ``--shardcheck-cpu-devices=N``: N virtual CPU devices (``XLA_FLAGS``), set before JAX
  starts; the ``shardcheck_mesh`` fixture makes a mesh of a shape (skipping the test
  when there are too few devices).

Nothing here imports JAX or the analyzer until an option uses it.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import inspect
import os
import sys
import warnings
from typing import Any, Dict, List, Optional, Sequence, Union

import pytest


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("shardcheck", "static and runtime sharding checks for JAX")
    group.addoption("--shardcheck", action="store_true",
                    help="check every collected .py/.ipynb file with shardcheck: its "
                         "error-level findings fail a test item of its own")
    group.addoption("--shardcheck-packages", metavar="PKG[,PKG]", default=None,
                    help="wrap Sharded[...]-annotated functions of these packages in "
                         "check_shardings as they are imported")
    group.addoption("--shardcheck-cpu-devices", metavar="N", type=int, default=None,
                    help="run JAX on N virtual CPU devices (set before JAX starts)")


def pytest_configure(config: Any) -> None:
    n = config.getoption("shardcheck_cpu_devices")
    if n is not None:
        if "jax" in sys.modules and _jax_started():
            raise pytest.UsageError("--shardcheck-cpu-devices: JAX has already started its "
                                    "backend in this process; pass it before anything uses "
                                    "JAX")
        flags = os.environ.get("XLA_FLAGS", "")
        os.environ["XLA_FLAGS"] = (flags + f" --xla_force_host_platform_device_count={n}").strip()
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
    packages = config.getoption("shardcheck_packages")
    if packages:
        install_import_hook([p.strip() for p in packages.split(",") if p.strip()])


def _jax_started() -> bool:
    try:
        from jax._src import xla_bridge
        return bool(getattr(xla_bridge, "_backends", None))
    except Exception:
        return True


# -- --shardcheck: findings as test items ---------------------------------------------------
def pytest_collect_file(file_path: Any, parent: Any) -> Optional[Any]:
    if not parent.config.getoption("shardcheck"):
        return None
    if file_path.suffix not in (".py", ".ipynb") and not _sharding_config(str(file_path)):
        return None
    return ShardcheckFile.from_parent(parent, path=file_path)


def _sharding_config(path: str) -> bool:
    """A YAML/JSON file that may hold a sharding config, as ``check`` finds them."""
    from shardcheck.check.discovery import _holds_sharding_config, is_config_file
    return is_config_file(path) and _holds_sharding_config(path)


class ShardcheckFile(pytest.File):
    def collect(self) -> Any:
        yield ShardcheckItem.from_parent(self, name="shardcheck")


class ShardcheckFailure(Exception):
    def __init__(self, lines: List[str]):
        super().__init__("\n".join(lines))
        self.lines = lines


class ShardcheckWarning(UserWarning):
    """A warning-level shardcheck finding: listed in pytest's warnings summary."""


class ShardcheckItem(pytest.Item):
    def runtest(self) -> None:
        from shardcheck.output.findings import text
        found = _session_findings(self.session)
        if isinstance(found, str):  # the config is wrong: every item says it
            raise ShardcheckFailure([found])
        findings = found.get(os.path.abspath(self.path), [])
        if any(f.severity == "error" for f in findings):
            raise ShardcheckFailure(text(findings, 1).splitlines())
        for f in findings:  # placed at the finding's line, as pytest lists warnings
            warnings.warn_explicit(
                ShardcheckWarning(f"{f.code} {f.severity}: {f.message} [{f.name}]"),
                ShardcheckWarning, f.filename, f.row)

    def repr_failure(self, excinfo: Any, style: Any = None) -> Any:
        if isinstance(excinfo.value, ShardcheckFailure):
            return "\n".join(excinfo.value.lines)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> Any:
        return self.path, None, f"shardcheck: {self.path.name}"


# the session's findings, by the file of the item that reports them (or the config error)
_FINDINGS = pytest.StashKey[Union[Dict[str, list], str]]()


def _session_findings(session: Any) -> Union[Dict[str, list], str]:
    """The findings of every item the session runs, from one run of the runner (made by
    the first item that runs): a file's answer depends on the project files that import
    it, which a run per item would analyse again for each."""
    if _FINDINGS not in session.stash:
        paths = [str(item.path) for item in session.items if isinstance(item, ShardcheckItem)]
        from shardcheck.check.discovery import is_config_file
        files = [p for p in paths if not is_config_file(p)]
        configs = [p for p in paths if is_config_file(p)]
        session.stash[_FINDINGS] = _check(files, str(session.config.rootpath), configs)
    return session.stash[_FINDINGS]


def _check(files: List[str], root: str,
           configs: Sequence[str] = ()) -> Union[Dict[str, list], str]:
    """``shardcheck check FILES CONFIGS``'s findings (the config from ``root``), each kept
    for the item of the file it is placed in; one placed in a module no item checks goes
    to the item whose file's call caused it (its notes name the call); or the config
    error. ``configs``: the YAML/JSON sharding configs collected (``config_checks``)."""
    from shardcheck.check import cache as cachemod
    from shardcheck.check import config as cfgmod
    from shardcheck.check import runner
    from shardcheck.check.discovery import project_files
    try:
        cfg = cfgmod.load(None, start=root)
    except cfgmod.ConfigError as e:
        return f"shardcheck: config error: {e}"
    cache_dir = cfg.cache_dir or cachemod.default_dir(cfg.root if cfg.source else None, root)
    project_configs: List[str] = []
    project = project_files(cfg, files or [root], configs=project_configs)
    found: list = []
    if files:
        found = runner.run(files, cfg, cache_dir=cache_dir, project_files=project,
                           config_files=project_configs).findings
    if configs:
        from shardcheck.check.project_checks import config_findings
        found += config_findings(list(configs), cfg, project if project is not None else files)
    files = list(files) + list(configs)
    by_file: Dict[str, list] = {os.path.abspath(f): [] for f in files}
    for finding in found:
        where = os.path.abspath(finding.filename)
        if where not in by_file:
            callers = [os.path.abspath(r.filename) for r in reversed(finding.related)]
            where = next((c for c in callers if c in by_file), os.path.abspath(files[0]))
        by_file[where].append(finding)
    return by_file


# -- the fixture -----------------------------------------------------------------------------
@pytest.fixture
def shardcheck_mesh() -> Any:
    """``shardcheck_mesh((2, 4), ("data", "model"), explicit=True)``: a mesh of that
    shape on this process's devices; the test is skipped when there are too few
    (``--shardcheck-cpu-devices=8`` gives 8 anywhere)."""
    def make(shape: Sequence[int], names: Sequence[str], explicit: bool = True) -> Any:
        import math

        import jax
        need = math.prod(shape)
        if jax.device_count() < need:
            pytest.skip(f"a {tuple(shape)} mesh needs {need} devices; this process has "
                        f"{jax.device_count()} (--shardcheck-cpu-devices={need})")
        kind = jax.sharding.AxisType.Explicit if explicit else jax.sharding.AxisType.Auto
        return jax.make_mesh(tuple(shape), tuple(names), axis_types=(kind,) * len(shape))
    return make


# -- --shardcheck-packages: an import hook -----------------------------------------------------
class _Finder(importlib.abc.MetaPathFinder):
    def __init__(self, packages: Sequence[str]):
        self.packages = tuple(packages)

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if not any(name == p or name.startswith(p + ".") for p in self.packages):
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _Loader(spec.loader)
                return spec
        return None


class _Loader(importlib.abc.Loader):
    def __init__(self, inner: Any):
        self.inner = inner

    def create_module(self, spec: Any) -> Any:
        return self.inner.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self.inner.exec_module(module)
        wrap_annotated(module)


def install_import_hook(packages: Sequence[str]) -> None:
    """Wrap the ``Sharded``-annotated functions of ``packages`` as they are imported (a
    module imported already is wrapped now)."""
    sys.meta_path.insert(0, _Finder(packages))
    for name, module in list(sys.modules.items()):
        if module is not None and any(name == p or name.startswith(p + ".") for p in packages):
            wrap_annotated(module)


def wrap_annotated(module: Any) -> None:
    """``check_shardings`` around each function (and method) the module defines whose
    annotations name ``Sharded``."""
    from sharding_types import check_shardings
    for name, obj in list(vars(module).items()):
        if inspect.isfunction(obj) and obj.__module__ == module.__name__ and _annotated(obj):
            setattr(module, name, check_shardings(obj))
        elif inspect.isclass(obj) and obj.__module__ == module.__name__:
            for attr, fn in list(vars(obj).items()):
                if inspect.isfunction(fn) and _annotated(fn):
                    setattr(obj, attr, check_shardings(fn))


def _annotated(fn: Any) -> bool:
    if getattr(fn, "__wrapped__", None) is not None:
        return False  # wrapped already (check_shardings, or another decorator's wrapper)
    return any("Sharded" in (a if isinstance(a, str) else repr(a))
               for a in getattr(fn, "__annotations__", {}).values())
