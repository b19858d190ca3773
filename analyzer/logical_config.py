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
    discover = false                        # see below; true by default

The rules apply where the source sets none (no ``nn.logical_axis_rules`` in view).

With neither ``file`` nor ``rules`` set, the rules are discovered: the YAML/JSON files
under the project root (the directory of pyproject.toml, else the one checked) whose top
level holds ``logical_axis_rules`` (MaxText-style configs), and ``mesh_axes`` beside it.
Where several do, ``base``/``default``/``config`` files come first, then the shortest
path; the file used is named in ``shardcheck specs``. ``discover = false`` turns it off.

The file's top-level literal keys are kept too (``LogicalConfig.fields``): ``shardcheck
specs`` reads them as the fields of the run's config object (``interp/objects.py``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Dict, FrozenSet, Iterator, List, Optional, Tuple

from .config import ConfigError, _shown
from .config_data import Refused
from .config_data import load as load_data
from .logical_axes import Rules, normalize_rules
from .pyconfig import read as read_small

KNOWN_KEYS = ("file", "rules-key", "mesh-axes-key", "rules", "mesh-axes", "wrappers",
              "discover")
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
    discovered: bool = False  # the file was found by discovery, not named in the config
    # that file's top-level keys set to literals (lists as tuples), read by
    # ``shardcheck specs`` as the fields of the run's config object (interp/objects.py)
    fields: Tuple[Tuple[str, Any], ...] = ()
    discover: bool = True  # `discover = false` not set: rules may be looked for

    def wrapper(self, name: str) -> Optional[Wrapper]:
        """The wrapper declared for a called function's qualified name (or its last part)."""
        short = name.rsplit(".", 1)[-1]
        for w in self.wrappers:
            if w.name == name or w.name == short:
                return w
        return None

    def fingerprint(self) -> list:
        return [self.rules, self.mesh_axes, [(w.name, w.array, w.names) for w in self.wrappers],
                self.fields]


def parse_or_discover(table: object, root: str,
                      refused: Optional[List[str]] = None) -> Optional[LogicalConfig]:
    """The declared table (``None`` when absent), with discovered rules where it sets none
    and does not turn discovery off; ``refused`` (see ``discover``)."""
    declared = parse(table, root) if table is not None else None
    if declared is not None and (declared.rules is not None or not _discover_flag(table)):
        return declared
    found = discover(root, refused)
    if found is None:
        return declared
    if declared is None:
        return found
    return LogicalConfig(found.rules, declared.mesh_axes or found.mesh_axes, declared.wrappers,
                         found.source, discovered=True, fields=found.fields)


def _discover_flag(table: Any) -> bool:
    v = table.get("discover", True)
    if not isinstance(v, bool):
        raise ConfigError(f"{WHERE} discover must be true or false, got {_shown(v)}")
    return v


_CONFIG_SUFFIXES = (".yml", ".yaml", ".json")
_SKIP = {"__pycache__", "node_modules", "build", "dist", "site-packages", "venv", "env"}
_MAX_FILES = 20000  # directory entries looked at, at most: discovery must stay cheap


def discover(root: str, refused: Optional[List[str]] = None) -> Optional[LogicalConfig]:
    """Rules from the first config file under ``root`` that holds valid
    ``logical_axis_rules`` (see the module docs for the order); None when none does.
    A file that does not parse, or whose table is not a rule table, is passed over; one
    the limits of ``config_data`` refuse too, and it is named in ``refused``, if given
    (``path: why``), so the run can say it was not read."""
    candidates = _candidates(root)
    if refused is not None:
        from .config_data import refusal
        for rel in candidates:
            why = refusal(os.path.join(root, rel), "logical_axis_rules")
            if why is not None:
                refused.append(f"{rel}: not read for logical_axis_rules: {why}")
    for rel, rules, axes, data in _rule_files(candidates, root):
        return LogicalConfig(rules, axes, (), rel, discovered=True, fields=literal_fields(data))
    return None


def _rule_files(candidates: List[str], root: str) -> Iterator[Tuple[str, Rules, Any, Any]]:
    """(path, rules, mesh axes or None, parsed file) of each of ``candidates`` that holds
    valid ``logical_axis_rules``, in order."""
    for rel in candidates:
        text = read_small(os.path.join(root, rel))  # never a FIFO named like a config
        if text is None or "logical_axis_rules" not in text:
            continue
        try:
            data = load_data(text, rel)  # within the limits: Refused past them
            if not isinstance(data, dict) or "logical_axis_rules" not in data:
                continue
            rules = _rules(data["logical_axis_rules"], rel)
            axes_v = data.get("mesh_axes")
            axes = _axes(axes_v, rel) if axes_v is not None else None
        except Exception:  # yaml.YAMLError, JSONDecodeError, ConfigError, Refused: not one
            continue
        yield rel, rules, axes, data


_MAX_BASES = 8  # base_config hops followed from one variant


def variant(path: str, depth: int = 0) -> Dict[str, Any]:
    """The top-level keys of the config file ``path`` as its run reads them: its
    ``base_config`` chain (a path relative to the file) merged under it, a key it sets
    replacing its base's, and ``override_logical_axis_rules`` replacing the rules of
    the names it lists (MaxText's inheritance). ``ConfigError`` where it cannot be read."""
    text = read_small(path)
    if text is None:
        raise ConfigError(f"{path}: cannot read this config file")
    try:
        data = load_data(text, path)
    except Refused as e:
        raise ConfigError(f"{path}: not read: {e}") from None
    except Exception as e:  # yaml.YAMLError, JSONDecodeError
        raise ConfigError(f"{path}: does not parse: {str(e).splitlines()[0]}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: is not a mapping of keys to values")
    merged: Dict[str, Any] = {}
    base = data.get("base_config")
    if isinstance(base, str) and base and depth < _MAX_BASES:
        base_path = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(path)), base))
        if os.path.isfile(base_path) and os.path.abspath(base_path) != os.path.abspath(path):
            merged.update(variant(base_path, depth + 1))
    merged.update(data)
    overrides = data.get("override_logical_axis_rules")
    if isinstance(overrides, list) and isinstance(merged.get("logical_axis_rules"), list):
        named = {r[0] for r in overrides if isinstance(r, list) and r and isinstance(r[0], str)}
        merged["logical_axis_rules"] = [r for r in merged["logical_axis_rules"]
                                        if not (isinstance(r, list) and r and r[0] in named)] \
            + list(overrides)
    return merged


def from_variant(path: str) -> LogicalConfig:
    """The rules, mesh axes and fields of one config variant (``shardcheck specs
    --config FILE``)."""
    data = variant(path)
    if "logical_axis_rules" not in data:
        raise ConfigError(f"{path}: sets no logical_axis_rules (nor does a base_config it names)")
    axes_v = data.get("mesh_axes")
    return LogicalConfig(_rules(data["logical_axis_rules"], path),
                         _axes(axes_v, path) if axes_v is not None else None, (), path,
                         discovered=False, fields=literal_fields(data))


_MAPPED: Dict[tuple, FrozenSet[str]] = {}


def names_any_config_maps(root: str) -> FrozenSet[str]:
    """The logical names some rule file under ``root`` maps (every file discovery could
    pick, not only the one it picked): a name one of them maps is no typo, whichever
    config the model runs with. Read only where a warning depends on it; kept while the
    files are unchanged (a daemon serves many runs)."""
    candidates = _candidates(root)
    stamp: List[Any] = [root]
    for rel in candidates:
        try:
            st = os.stat(os.path.join(root, rel))
        except OSError:
            continue
        stamp.append((rel, st.st_size, st.st_mtime_ns))
    key = tuple(stamp)
    if key not in _MAPPED:
        if len(_MAPPED) > 16:
            _MAPPED.clear()
        _MAPPED[key] = frozenset(name for _, rules, _, _ in _rule_files(candidates, root)
                                 for name, _ in rules)
    return _MAPPED[key]


_MAX_FIELD_ITEMS = 1000  # a larger literal (a vocabulary, a table of numbers) is left out


def literal_fields(data: Any) -> Tuple[Tuple[str, Any], ...]:
    """The top-level keys of a parsed config file whose values are literals: strings,
    numbers, booleans, None and (nested) lists of them, lists as tuples."""
    if not isinstance(data, dict):
        return ()
    out = []
    for k, v in data.items():
        frozen = _frozen(v, [0])
        if isinstance(k, str) and frozen is not _NOT_LITERAL:
            out.append((k, frozen))
    return tuple(out)


_NOT_LITERAL = object()


def _frozen(v: Any, count: list) -> Any:
    count[0] += 1
    if count[0] > _MAX_FIELD_ITEMS:
        return _NOT_LITERAL
    if isinstance(v, (str, int, float, bool, type(None))):
        return v
    if isinstance(v, list):
        items = tuple(_frozen(x, count) for x in v)
        return _NOT_LITERAL if any(x is _NOT_LITERAL for x in items) else items
    return _NOT_LITERAL


def _candidates(root: str) -> list:
    """Config files under ``root``, relative, in the order discovery tries them."""
    found = []
    seen = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in _SKIP)
        seen += len(dirnames) + len(filenames)
        for name in filenames:
            if name.endswith(_CONFIG_SUFFIXES):
                found.append(os.path.relpath(os.path.join(dirpath, name), root))
        if seen > _MAX_FILES:
            break

    def order(rel: str) -> tuple:
        stem = os.path.splitext(os.path.basename(rel))[0].lower()
        return (stem not in ("base", "default", "config"), rel.count(os.sep), rel)

    return sorted(found, key=order)


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
    data: Any = None
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
    return LogicalConfig(rules, axes, _wrappers(table.get("wrappers", {})), source,
                         fields=literal_fields(data) if source is not None else (),
                         discover=_discover_flag(table))


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
        return path, load_data(text, path)
    except Refused as e:
        raise ConfigError(f"{WHERE} file {path!r} is not read: {e}") from None
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
