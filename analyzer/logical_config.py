"""``[tool.shardcheck.logical]``: a project's Flax logical axis rules, its mesh axes and
its helpers that wrap logical constraints, validated up front (one line, exit 2).

    [tool.shardcheck.logical]
    file = "configs/base.yml"               # YAML or JSON, relative to pyproject.toml
    rules-key = "logical_axis_rules"        # dotted key in the file (this is the default)
    mesh-axes-key = "mesh_axes"             # likewise; optional in the file
    # or inline, instead of a file:
    rules = [["batch", ["data", "fsdp"]], ["embed", "fsdp"], ["heads", "tensor"]]
    mesh-axes = ["data", "fsdp", "tensor"]
    # helpers: qualified or bare name -> which argument is the array, which the names
    wrappers = { "mylib.sharding.maybe_shard_with_logical" = { array = 0, names = 1 } }

The rules apply where the source sets none (no ``nn.logical_axis_rules`` in view).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple

from .config import ConfigError, _shown
from .logical_axes import Rules, normalize_rules

KNOWN_KEYS = ("file", "rules-key", "mesh-axes-key", "rules", "mesh-axes", "wrappers")
WHERE = "[tool.shardcheck.logical]"


@dataclass(frozen=True)
class Wrapper:
    """A project helper that applies a logical constraint: its array and names arguments,
    each a position (int) or a keyword (str)."""

    name: str
    array: Any
    names: Any


@dataclass(frozen=True)
class LogicalConfig:
    rules: Optional[Rules] = None
    mesh_axes: Optional[Tuple[str, ...]] = None
    wrappers: Tuple[Wrapper, ...] = ()
    source: Optional[str] = None  # the YAML/JSON file the rules came from

    def wrapper(self, name: str) -> Optional[Wrapper]:
        """The wrapper declared for a called function's qualified name (or its last part)."""
        short = name.rsplit(".", 1)[-1]
        for w in self.wrappers:
            if w.name == name or w.name == short:
                return w
        return None

    def fingerprint(self) -> list:
        return [self.rules, self.mesh_axes, [(w.name, w.array, w.names) for w in self.wrappers]]


def parse(table: object, root: str) -> LogicalConfig:
    """The ``logical`` table of ``[tool.shardcheck]``; ConfigError naming the bad part."""
    if not isinstance(table, dict):
        raise ConfigError(f"{WHERE} must be a table, got {_shown(table)}")
    unknown = sorted(set(table) - set(KNOWN_KEYS))
    if unknown:
        raise ConfigError(f"unknown key {unknown[0]!r} in {WHERE}; known keys: "
                          f"{', '.join(KNOWN_KEYS)}")
    rules_v: Any = table.get("rules")
    axes_v: Any = table.get("mesh-axes")
    source = None
    if "file" in table:
        if "rules" in table:
            raise ConfigError(f"{WHERE} takes rules from `file` or inline `rules`, not both")
        source, data = _load(table["file"], root)
        rules_key = _key(table, "rules-key", "logical_axis_rules")
        axes_key = _key(table, "mesh-axes-key", "mesh_axes")
        rules_v = _dig(data, rules_key, source, required=True)
        if axes_v is None:
            axes_v = _dig(data, axes_key, source, required="mesh-axes-key" in table)
    rules = _rules(rules_v, source) if rules_v is not None else None
    axes = _axes(axes_v, source) if axes_v is not None else None
    return LogicalConfig(rules, axes, _wrappers(table.get("wrappers", {})), source)


def _key(table: Dict[str, Any], key: str, default: str) -> str:
    v = table.get(key, default)
    if not isinstance(v, str) or not v:
        raise ConfigError(f"{WHERE} {key} must be a dotted key like {default!r}, got {_shown(v)}")
    return v


def _load(path: object, root: str) -> Tuple[str, Any]:
    if not isinstance(path, str) or not path.strip():
        raise ConfigError(f"{WHERE} file must be a path to a YAML or JSON file, got {_shown(path)}")
    full = os.path.join(root, path)
    try:
        with open(full, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{WHERE} file {path!r}: cannot read it ({e.__class__.__name__})") from None
    try:
        if path.endswith(".json"):
            return path, json.loads(text)
        import yaml
        return path, yaml.safe_load(text)
    except Exception as e:  # yaml.YAMLError, json.JSONDecodeError: one line either way
        first = str(e).splitlines()[0] if str(e) else e.__class__.__name__
        raise ConfigError(f"{WHERE} file {path!r} does not parse: {first}") from None


def _dig(data: Any, dotted: str, source: str, required: Any) -> Any:
    cur = data
    for part in dotted.split("."):
        if not isinstance(cur, dict) or part not in cur:
            if required:
                raise ConfigError(f"{WHERE} {source!r} has no key {dotted!r}")
            return None
        cur = cur[part]
    return cur


def _rules(v: Any, source: Optional[str]) -> Rules:
    where = f"{WHERE} rules" + (f" (from {source!r})" if source else "")
    if not isinstance(v, (list, tuple)):
        raise ConfigError(f"{where} must be a list of [logical name, mesh axes] pairs, "
                          f"got {_shown(v)}")
    for pair in v:
        ok = isinstance(pair, (list, tuple)) and len(pair) == 2 and isinstance(pair[0], str)
        axes = pair[1] if ok else None
        ok = ok and (axes is None or isinstance(axes, str) or (
            isinstance(axes, (list, tuple)) and all(isinstance(a, str) for a in axes)))
        if not ok:
            raise ConfigError(f"{where}: {_shown(pair)} is not a [logical name, mesh axes] pair "
                              "(mesh axes: a name, a list of names, or null)")
    return normalize_rules(v)


def _axes(v: Any, source: Optional[str]) -> Tuple[str, ...]:
    if not isinstance(v, (list, tuple)) or not all(isinstance(a, str) for a in v):
        where = f"{WHERE} mesh-axes" + (f" (from {source!r})" if source else "")
        raise ConfigError(f"{where} must be a list of axis names, got {_shown(v)}")
    return tuple(v)


def _wrappers(v: object) -> Tuple[Wrapper, ...]:
    if not isinstance(v, dict):
        raise ConfigError(f"{WHERE} wrappers must be a table of name = {{ array = 0, names = 1 }}, "
                          f"got {_shown(v)}")
    out = []
    for name, spec in v.items():
        if not isinstance(spec, dict) or set(spec) != {"array", "names"} or not all(
                _is_arg(spec[k]) for k in ("array", "names")):
            raise ConfigError(f"{WHERE} wrappers[{name!r}] must be {{ array = ARG, names = ARG }} "
                              f"(ARG: a position or a keyword), got {_shown(spec)}")
        out.append(Wrapper(name, spec["array"], spec["names"]))
    return tuple(out)


def _is_arg(a: object) -> bool:
    return (isinstance(a, int) and not isinstance(a, bool) and a >= 0) or (
        isinstance(a, str) and a.isidentifier())
