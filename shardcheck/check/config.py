"""``[tool.shardcheck]`` in pyproject.toml read into the analysis's ``Config``,
validated (every key, whatever files are checked); command-line flags override it.

    [tool.shardcheck]
    select = ["SC1", "deprecated-api"]     # codes, code prefixes or rule names
    ignore = ["SC107"]
    exclude = ["build/", "third_party/**"]
    per-file-ignores = { "tests/**" = ["no-mesh-context"] }
    default-mesh = "production"             # the mesh of code whose mesh the source hides
    max-collective-bytes = "64MiB"          # confirm: a jitted function's collective budget
    confirm-timeout = 300                   # confirm: seconds a program may run (0: none)
    confirm-programs = ["scripts/*.py"]     # confirm DIR runs these besides __main__ scripts
    jax-version = "0.12"                    # the JAX the code targets (deprecated-api)
    timeout-per-file = 60                   # seconds; a file past it is skipped (0: none)
    memory-per-file = "2GiB"                # the same for memory (0: none)
    generated-size-limit = "512KiB"         # generated files larger are skipped (0: none)

    [tool.shardcheck.logical]               # Flax logical axis rules (analyzer/logical_config.py)
    file = "configs/base.yml"

    [tool.shardcheck.meshes.production]     # a mesh the source cannot state
    data = 64
    model = 8

``Config`` and ``ConfigError`` are re-exported: a caller that reads a config needs only
this module.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, List, Optional, Sequence, Tuple

from shardcheck.analyzer.catalog import rule_table
from shardcheck.analyzer.config import (DEFAULT_GENERATED_SIZE_LIMIT as DEFAULT_GENERATED_SIZE_LIMIT,
                                        DEFAULT_MEMORY_PER_FILE as DEFAULT_MEMORY_PER_FILE,
                                        DEFAULT_TIMEOUT_PER_FILE as DEFAULT_TIMEOUT_PER_FILE,
                                        Config as Config, ConfigError as ConfigError,
                                        DeclaredMesh as DeclaredMesh, _shown,
                                        resolve_selector as resolve_selector)

if TYPE_CHECKING:
    from sharding_types import MeshModel

KNOWN_KEYS = ("select", "ignore", "exclude", "extend-exclude", "per-file-ignores", "meshes",
              "default-mesh", "cache-dir", "respect-gitignore", "max-collective-bytes",
              "jax-version", "timeout-per-file", "memory-per-file", "generated-size-limit",
              "confirm-timeout", "confirm-programs", "logical", "warn-unused-ignores", "baseline")


def _str_list(value: object, key: str) -> Tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"[tool.shardcheck] {key} must be a list of strings, got {_shown(value)}")
    return tuple(value)


def _mesh(name: str, table: object) -> DeclaredMesh:
    # a name TOML quotes (spaces, newlines) is shown quoted, so the message stays one line
    shown = name if name.isidentifier() else _shown(name)
    where = f"[tool.shardcheck.meshes.{shown}]"
    if not isinstance(table, dict) or not table:
        raise ConfigError(f"{where} must map axis names to sizes, e.g. {{ data = 64, model = 8 }}")
    types_v = table.get("axis_types", "explicit")
    axes = [(k, v) for k, v in table.items() if k != "axis_types"]
    for k, v in axes:
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ConfigError(f"{where} axis {k!r} must have a positive integer size, got {v!r}")
    if isinstance(types_v, str):
        types_l = [types_v] * len(axes)
    elif isinstance(types_v, list) and len(types_v) == len(axes):
        types_l = types_v
    else:
        raise ConfigError(f"{where} axis_types must be one of explicit/auto/manual or a list of "
                          f"them, one per axis; got {types_v!r}")
    from sharding_types import AxisType, MeshModel
    type_names = {t.name.lower(): t for t in AxisType}  # explicit, auto, manual
    try:
        types = tuple(type_names[str(t).lower()] for t in types_l)
    except KeyError as e:
        raise ConfigError(f"{where} unknown axis type {e.args[0]!r}; use explicit, auto or manual") from None
    return DeclaredMesh(name, MeshModel(tuple(a for a, _ in axes), tuple(v for _, v in axes),
                                        types))


def from_table(table: dict, root: str = ".", source: Optional[str] = None) -> Config:
    """The config of a ``[tool.shardcheck]`` table; ``ConfigError`` naming the first bad
    key (every key is checked here, whatever files are checked later)."""
    if not isinstance(table, dict):
        raise ConfigError(f"[tool.shardcheck] must be a table, got {_shown(table)}")
    unknown = sorted(set(table) - set(KNOWN_KEYS))
    if unknown:
        raise ConfigError(f"unknown key {unknown[0]!r} in [tool.shardcheck]; known keys: "
                          f"{', '.join(KNOWN_KEYS)}")
    pfi = table.get("per-file-ignores", {})
    if not isinstance(pfi, dict):
        raise ConfigError("[tool.shardcheck] per-file-ignores must be a table of glob = [rules], "
                          f"got {_shown(pfi)}")
    meshes_t = table.get("meshes", {})
    if not isinstance(meshes_t, dict):
        raise ConfigError("[tool.shardcheck] meshes must be a table of name = { axis = size }, "
                          f"got {_shown(meshes_t)}")
    meshes = tuple(_mesh(n, t) for n, t in meshes_t.items())
    default = table.get("default-mesh")
    if default is not None and (not isinstance(default, str)
                                or default not in {m.name for m in meshes}):
        declared = ", ".join(m.name for m in meshes) or "none declared"
        raise ConfigError(f"[tool.shardcheck] default-mesh {_shown(default)} is not one of the "
                          f"declared meshes ({declared})")
    cache_dir = table.get("cache-dir")
    if cache_dir is not None and (not isinstance(cache_dir, str) or not cache_dir.strip()):
        raise ConfigError("[tool.shardcheck] cache-dir must be a directory path (a string), got "
                          f"{_shown(cache_dir)}")
    gitignore = table.get("respect-gitignore", True)
    if not isinstance(gitignore, bool):
        raise ConfigError("[tool.shardcheck] respect-gitignore must be true or false (a TOML "
                          f"boolean, unquoted), got {_shown(gitignore)}")
    cfg = Config(
        select=_str_list(table.get("select", []), "select"),
        ignore=_str_list(table.get("ignore", []), "ignore"),
        exclude=_str_list(table.get("exclude", []), "exclude") + _str_list(
            table.get("extend-exclude", []), "extend-exclude"),
        per_file_ignores=tuple((k, _str_list(v, f"per-file-ignores[{k!r}]")) for k, v in pfi.items()),
        meshes=meshes, default_mesh=default,
        cache_dir=os.path.join(root, cache_dir) if cache_dir is not None else None,
        respect_gitignore=gitignore, root=root, source=source,
        confirm_programs=_str_list(table.get("confirm-programs", []), "confirm-programs"))
    warn = table.get("warn-unused-ignores", False)
    if not isinstance(warn, bool):
        raise ConfigError("[tool.shardcheck] warn-unused-ignores must be true or false (a TOML "
                          f"boolean, unquoted), got {_shown(warn)}")
    cfg.warn_unused_ignores = warn
    base = table.get("baseline")
    if base is not None:
        if not isinstance(base, str) or not base.strip():
            raise ConfigError("[tool.shardcheck] baseline must be a file path (a string), got "
                              f"{_shown(base)}")
        cfg.baseline = os.path.join(root, base)
    if "max-collective-bytes" in table:
        cfg.max_collective_bytes = parse_bytes(table["max-collective-bytes"],
                                               "[tool.shardcheck] max-collective-bytes")
    if "jax-version" in table:
        cfg.jax_version = _jax_version(table["jax-version"])
    if "timeout-per-file" in table:
        cfg.timeout_per_file = parse_seconds(table["timeout-per-file"],
                                             "[tool.shardcheck] timeout-per-file")
    if "confirm-timeout" in table:
        cfg.confirm_timeout = parse_seconds(table["confirm-timeout"],
                                            "[tool.shardcheck] confirm-timeout")
    for key, least in (("memory-per-file", MIN_MEMORY_PER_FILE), ("generated-size-limit", 0)):
        if key in table:
            setattr(cfg, key.replace("-", "_"),
                    parse_bytes(table[key], f"[tool.shardcheck] {key}", at_least=least))
    if "logical" in table or source is not None:  # a pyproject.toml's table: discovery too
        from shardcheck.analyzer.logical_config import parse_or_discover
        refused: List[str] = []
        cfg.logical = parse_or_discover(table.get("logical"), root, refused)
        cfg.warnings = tuple(refused)
    _check_selectors(cfg)
    return cfg


def _jax_version(value: object) -> str:
    """``jax-version``: a supported JAX version, as a string ("0.12", "0.10.2")."""
    if not isinstance(value, str):
        raise ConfigError(f'[tool.shardcheck] jax-version must be a string like "0.12", '
                          f"got {value!r}")
    from shardcheck.analyzer.compat import UnsupportedJaxVersion, profile_for
    try:
        return profile_for(value).version
    except UnsupportedJaxVersion as e:
        raise ConfigError(f"[tool.shardcheck] jax-version: {e}") from None


def _check_selectors(cfg: Config) -> None:
    """Every selector of select, ignore and per-file-ignores names a rule."""
    rules = rule_table()
    for key, sels in (("select", cfg.select), ("ignore", cfg.ignore)):
        for sel in sels:
            try:
                resolve_selector(sel, rules)
            except ConfigError as e:
                raise ConfigError(f"[tool.shardcheck] {key}: {e}") from None
    for pattern, sels in cfg.per_file_ignores:
        for sel in sels:
            try:
                resolve_selector(sel, rules)
            except ConfigError as e:
                raise ConfigError(f"[tool.shardcheck] per-file-ignores[{pattern!r}]: {e}") from None
    cfg.enabled_codes()


def find_pyproject(start: str) -> Optional[str]:
    d = os.path.abspath(start if os.path.isdir(start) else os.path.dirname(start) or ".")
    while True:
        p = os.path.join(d, "pyproject.toml")
        if os.path.isfile(p):
            return p
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def _project_root(start: str) -> str:
    """Where a run without a pyproject.toml looks for configs: the directory named, or
    for a file, the working directory where the file is under it, else the file's own
    directory (``shardcheck specs ../proj/model.py`` reads ``../proj/configs/``)."""
    if os.path.isdir(start):
        return os.path.abspath(start)
    here = os.path.abspath(".")
    folder = os.path.dirname(os.path.abspath(start))
    return here if folder == here or folder.startswith(here.rstrip(os.sep) + os.sep) else folder


def load(path: Optional[str] = None, start: str = ".") -> Config:
    """The config in ``path`` (a pyproject.toml), else the nearest one above ``start``."""
    if path is None:
        path = find_pyproject(start)
        if path is None:
            from shardcheck.analyzer.logical_config import discover
            refused: List[str] = []
            root = _project_root(start)
            return Config(root=root, logical=discover(root, refused), warnings=tuple(refused))
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # Python 3.10
        import tomli as tomllib
    from shardcheck.analyzer.sources import Unreadable, read_source
    try:
        text = read_source(path).decode("utf-8")
        data = tomllib.loads(text)
    except Unreadable as e:
        raise ConfigError(f"cannot read config {path}: {e}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"config {path} is not a TOML file (it is not valid UTF-8 "
                          "text)") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path} is not valid TOML: {e}") from None
    tool = data.get("tool", {})
    if not isinstance(tool, dict):
        raise ConfigError(f"{path}: `tool` must be a table, got {_shown(tool)}")
    table = tool.get("shardcheck", {})
    return from_table(table, root=os.path.dirname(os.path.abspath(path)), source=path)


_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}


# The largest byte count and time a budget takes: more than any machine has or a run
# needs. A larger memory budget only overflowed the address-space limit it sets (every
# worker died, and a run reported every file as skipped).
MAX_BYTES = 2**50  # 1 PiB
MAX_SECONDS = 7 * 24 * 3600.0  # a week
MIN_MEMORY_PER_FILE = 16 * 2**20  # below this a worker cannot even import the analysis


def parse_bytes(value: object, where: str = "--max-collective-bytes", at_least: int = 0) -> int:
    """``4096``, ``"64MiB"``, ``"1.5 GB"`` as a byte count: 0, or from ``at_least`` to
    ``MAX_BYTES``."""
    import re
    n: Optional[int] = None
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        n = value
    elif isinstance(value, float) and 0 <= value < 2**63:  # also rejects nan and inf
        n = int(value)
    else:
        m = re.fullmatch(r"\s*(\d{1,30}(?:\.\d{1,30})?)\s*([A-Za-z]*)\s*", value) \
            if isinstance(value, str) else None
        if m is not None and m.group(2).lower() in _UNITS:
            n = int(float(m.group(1)) * _UNITS[m.group(2).lower()])
    if n is None:
        raise ConfigError(f"{where} takes a byte count like 4096, 64MiB or 1.5GB; got "
                          f"{_shown(value)}")
    if n > MAX_BYTES or 0 < n < at_least:
        low = f"{at_least // 2**20} MiB" if at_least else "0"
        raise ConfigError(f"{where} must be between {low} and 1 PiB (0: no limit); got "
                          f"{_shown(value)}")
    return n


def parse_seconds(value: object, where: str) -> float:
    """A number of seconds from 0 (no limit) to ``MAX_SECONDS``."""
    import math
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(
            value) or value < 0 or value > MAX_SECONDS:
        raise ConfigError(f"{where} takes a number of seconds like 60 or 2.5, at most a week "
                          f"({MAX_SECONDS:g}; 0 for no limit); got {_shown(value)}")
    return float(value)


def resolve_mesh_option(text: str, cfg: Optional[Config] = None) -> MeshModel:
    """The CLI's ``--mesh``: ``data=64,model=8``, or the name of a mesh declared in
    ``[tool.shardcheck.meshes]``."""
    if "=" not in text and cfg is not None:
        for m in cfg.meshes:
            if m.name == text.strip():
                return m.mesh
        declared = ", ".join(m.name for m in cfg.meshes) or "none declared"
        raise ConfigError(f"--mesh {text!r} is neither AXIS=SIZE pairs like data=64,model=8 nor a "
                          f"mesh declared in [tool.shardcheck.meshes] ({declared})")
    return parse_mesh_option(text)


def parse_mesh_option(text: str) -> MeshModel:
    """``data=64,model=8`` (the CLI's --mesh) as a mesh of Explicit axes."""
    axes = []
    for part in text.split(","):
        if "=" not in part:
            raise ConfigError(f"--mesh takes AXIS=SIZE pairs like data=64,model=8; got {text!r}")
        k, v = part.split("=", 1)
        if not k.strip().isidentifier() or not v.strip().isdigit() or int(v) < 1:
            raise ConfigError(f"--mesh: {part!r} is not AXIS=SIZE with a positive size")
        axes.append((k.strip(), int(v)))
    if len({a for a, _ in axes}) != len(axes):
        raise ConfigError(f"--mesh names an axis twice: {text!r}")
    from sharding_types import MeshModel
    return MeshModel(tuple(a for a, _ in axes), tuple(s for _, s in axes))


def merge_cli(cfg: Config, select: Sequence[str] = (), ignore: Sequence[str] = (),
              extend_select: Sequence[str] = (), exclude: Sequence[str] = ()) -> Config:
    if select:
        cfg.select = tuple(select)
    if extend_select and cfg.select:
        cfg.select = cfg.select + tuple(extend_select)
    if ignore:
        cfg.ignore = cfg.ignore + tuple(ignore)
    if exclude:
        cfg.exclude = cfg.exclude + tuple(exclude)
    cfg._codes = None
    cfg.enabled_codes()
    return cfg
