"""``[tool.shardcheck]`` in pyproject.toml, validated; CLI flags override it.

    [tool.shardcheck]
    select = ["SC1", "deprecated-api"]     # codes, code prefixes or rule names
    ignore = ["SC107"]
    exclude = ["build/", "third_party/**"]
    per-file-ignores = { "tests/**" = ["no-mesh-context"] }
    default-mesh = "production"             # the mesh of code whose mesh the source hides
    max-collective-bytes = "64MiB"          # confirm: a jitted function's collective budget
    confirm-timeout = 300                   # confirm: seconds a program may run (0: none)
    jax-version = "0.12"                    # the JAX the code targets (deprecated-api)
    timeout-per-file = 60                   # seconds; a file past it is skipped (0: none)
    memory-per-file = "2GiB"                # the same for memory (0: none)
    generated-size-limit = "512KiB"         # generated files larger are skipped (0: none)

    [tool.shardcheck.logical]               # Flax logical axis rules (analyzer/logical_config.py)
    file = "configs/base.yml"

    [tool.shardcheck.meshes.production]     # a mesh the source cannot state
    data = 64
    model = 8
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

from .catalog import rule_table

if TYPE_CHECKING:  # imported where used: a run answered from the cache needs neither
    from sharding_types import AxisType, MeshModel

    from .values import MeshVal

KNOWN_KEYS = ("select", "ignore", "exclude", "extend-exclude", "per-file-ignores", "meshes",
              "default-mesh", "cache-dir", "respect-gitignore", "max-collective-bytes",
              "jax-version", "timeout-per-file", "memory-per-file", "generated-size-limit",
              "confirm-timeout", "confirm-programs", "logical", "warn-unused-ignores", "baseline")

# Per-file budgets: a file whose analysis runs past them gets one ``skipped-file`` finding
# and the run goes on. Measured cost is ~20-40 s and ~1 GB per MB of source, so these let
# hand-written files of a few hundred KB through on a slow machine and stop a 10 MB one.
DEFAULT_TIMEOUT_PER_FILE = 60.0
DEFAULT_MEMORY_PER_FILE = 2 * 2**30
DEFAULT_GENERATED_SIZE_LIMIT = 512 * 2**10


class ConfigError(Exception):
    """A bad configuration: the message says which key and what is expected."""


@dataclass(frozen=True)
class DeclaredMesh:
    """A mesh the config names: ``[tool.shardcheck.meshes.<name>]``."""

    name: str
    mesh: MeshModel

    @property
    def axes(self) -> Tuple[Tuple[str, int], ...]:
        """``(axis, size)`` pairs, in the order the table lists them."""
        return tuple(zip(self.mesh.axis_names, self.mesh.axis_sizes))

    @property
    def axis_types(self) -> Tuple[AxisType, ...]:
        return self.mesh.axis_types

    def value(self) -> MeshVal:
        return mesh_value(self.mesh, f"config:{self.name}")

    def describe(self) -> str:
        return f"{self.name} ({mesh_label(self.mesh)})"


def mesh_value(mesh: MeshModel, origin: str) -> MeshVal:
    """The analyzer's value of a mesh it is given rather than reads in the source."""
    from .values import MeshVal
    return MeshVal(mesh.axis_names, mesh.axis_sizes, mesh.axis_types, None, origin)


def mesh_label(mesh: MeshModel) -> str:
    """``data=64, model=8``: a mesh as ``--mesh`` spells it."""
    return ", ".join(f"{a}={s}" for a, s in zip(mesh.axis_names, mesh.axis_sizes))


@dataclass
class Config:
    select: Tuple[str, ...] = ()
    ignore: Tuple[str, ...] = ()
    exclude: Tuple[str, ...] = ()
    per_file_ignores: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()
    meshes: Tuple[DeclaredMesh, ...] = ()
    default_mesh: Optional[str] = None
    # confirm --mesh: the production mesh every mesh in the source is replaced by
    scale_mesh: Optional[MeshModel] = None
    max_collective_bytes: Optional[int] = None
    confirm_timeout: Optional[float] = None  # seconds a confirmed program may run; 0: no limit
    # confirm-programs: gitignore-style patterns of the files `confirm DIR` runs besides
    # those with an `if __name__ == "__main__":` guard
    confirm_programs: Tuple[str, ...] = ()
    cache_dir: Optional[str] = None
    respect_gitignore: bool = True
    jax_version: Optional[str] = None  # selects a version profile (analyzer/compat)
    timeout_per_file: float = DEFAULT_TIMEOUT_PER_FILE  # seconds; 0: no limit
    memory_per_file: int = DEFAULT_MEMORY_PER_FILE  # bytes; 0: no limit
    generated_size_limit: int = DEFAULT_GENERATED_SIZE_LIMIT  # bytes; 0: check them all
    root: str = "."
    source: Optional[str] = None  # the file it came from
    logical: Any = None  # [tool.shardcheck.logical]: a logical_config.LogicalConfig
    # shardcheck specs (not a key): config objects' fields read as their declared defaults
    assume_defaults: bool = False
    warn_unused_ignores: bool = False  # report suppressions that silence nothing (SC005)
    baseline: Optional[str] = None  # a baseline file (analyzer/baseline.py), made absolute
    # what the run should say it passed over (a config file over the limits of
    # config_data); not part of the fingerprint: it changes no finding's cache entry
    warnings: Tuple[str, ...] = ()
    _codes: Optional[frozenset] = field(default=None, repr=False, compare=False)

    # -- selection -------------------------------------------------------------------------
    def enabled_codes(self) -> frozenset:
        if self._codes is None:
            rules = rule_table()
            chosen = {c for c in rules if not self.select} | set(
                c for sel in self.select for c in resolve_selector(sel, rules))
            dropped = set(c for sel in self.ignore for c in resolve_selector(sel, rules))
            meta = {c for c, r in rules.items() if r.META}
            self._codes = frozenset((chosen - dropped) | meta)
        return self._codes

    def ignored_for(self, path: str) -> frozenset:
        rel = _rel(path, self.root)
        out = set()
        for pattern, sels in self.per_file_ignores:
            if _glob_match(rel, pattern):
                for sel in sels:
                    out.update(resolve_selector(sel, rule_table()))
        return frozenset(out)

    def is_excluded(self, path: str) -> bool:
        rel = _rel(path, self.root)
        return any(_glob_match(rel, p) for p in self.exclude)

    def is_listed_program(self, path: str) -> bool:
        """``path`` matches ``confirm-programs``: ``confirm DIR`` runs it."""
        rel = _rel(path, self.root)
        return any(_glob_match(rel, p) for p in self.confirm_programs)

    def mesh_values(self) -> Dict[Tuple[str, ...], MeshVal]:
        return {m.mesh.axis_names: m.value() for m in self.meshes}

    def default_mesh_value(self) -> Optional[MeshVal]:
        for m in self.meshes:
            if m.name == self.default_mesh:
                return m.value()
        return None

    def scale_mesh_value(self) -> Optional[MeshVal]:
        if self.scale_mesh is None:
            return None
        return mesh_value(self.scale_mesh, "scale")

    def fingerprint(self) -> str:
        data = json.dumps([self.select, self.ignore, self.per_file_ignores,
                           [(m.name, m.axes, [t.value for t in m.axis_types]) for m in self.meshes],
                           self.default_mesh,
                           self.scale_mesh and list(zip(self.scale_mesh.axis_names,
                                                        self.scale_mesh.axis_sizes)),
                           self.jax_version, self.generated_size_limit,
                           self.logical and self.logical.fingerprint(),
                           self.warn_unused_ignores], sort_keys=True, default=str)
        return hashlib.sha256(data.encode()).hexdigest()[:16]


def resolve_selector(sel: str, rules: Dict[str, Any]) -> List[str]:
    """Codes matching a code (SC101), a prefix (SC1) or a name (unknown-mesh-axis)."""
    s = sel.strip()
    if s.upper() == "ALL":
        return list(rules)
    by_name = [c for c, r in rules.items() if r.NAME == s]
    if by_name:
        return by_name
    by_code = [c for c in rules if c.startswith(s.upper())] if s.upper().startswith("SC") else []
    if by_code:
        return by_code
    names = sorted(r.NAME for r in rules.values())
    raise ConfigError(f"unknown rule selector {sel!r}: use a code (SC101), a code prefix (SC1) "
                      f"or a rule name ({', '.join(names[:4])}, ...); `shardcheck rules` lists them")


def _rel(path: str, root: str) -> str:
    try:
        rel = os.path.relpath(os.path.abspath(path), os.path.abspath(root))
    except ValueError:
        rel = path
    return rel.replace(os.sep, "/")


def _glob_match(rel: str, pattern: str) -> bool:
    p = pattern.replace(os.sep, "/")
    if p.endswith("/"):
        p = p + "**"
    if fnmatch.fnmatch(rel, p) or fnmatch.fnmatch(rel, p.replace("**/", "")):
        return True
    if p.endswith("/**") and (rel == p[:-3] or rel.startswith(p[:-3] + "/")):
        return True
    # a bare name matches any path component (like "build" or "*.pyi")
    if "/" not in p:
        return any(fnmatch.fnmatch(part, p) for part in rel.split("/"))
    return False


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
        from .logical_config import parse_or_discover
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
    from .compat import UnsupportedJaxVersion, profile_for
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


def _shown(value: object) -> str:
    """A config value as the message shows it: short, on one line."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


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
            from .logical_config import discover
            refused: List[str] = []
            root = _project_root(start)
            return Config(root=root, logical=discover(root, refused), warnings=tuple(refused))
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # Python 3.10
        import tomli as tomllib
    from .sources import Unreadable, read_source
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
