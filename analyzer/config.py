"""The analysis's settings (``Config``): the rules selected, the meshes declared, the
logical axis rules, the budgets. The analyzer takes one as it is given; reading it from
``[tool.shardcheck]`` in pyproject.toml (and from the command line) is the
application's job (``shardcheck/check/config.py``). The table it comes from:

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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from .catalog import rule_table

if TYPE_CHECKING:  # imported where used: a run answered from the cache needs neither
    from sharding_types import AxisType, MeshModel

    from .values import MeshVal

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
    baseline: Optional[str] = None  # a baseline file (shardcheck/check/baseline.py), made absolute
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


def _shown(value: object) -> str:
    """A config value as the message shows it: short, on one line."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
