"""``shardcheck specs PATH...``: the sharding map of a codebase, for people (grouped by
file and function) or as JSON (one object per site)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Callable, Dict, List, Tuple

from shardcheck.analyzer.sitemap import Site


def run(args: argparse.Namespace, files_and_project: Callable[[argparse.Namespace], Any]) -> int:
    """Map every file under ``args.paths``; exit 2 when a file could not be analysed."""
    loaded = files_and_project(args)
    if isinstance(loaded, int):
        return loaded
    cfg, files, project = loaded
    cfg.assume_defaults = True  # config objects' fields read as their declared defaults
    variant = getattr(args, "config_variant", None)
    if variant is not None:  # `--config base.yml`: the map under that config variant
        from dataclasses import replace
        from shardcheck.analyzer.config import ConfigError
        from shardcheck.analyzer.logical_config import from_variant
        try:
            chosen = from_variant(variant)
        except ConfigError as e:
            print(f"shardcheck: config error: {e}", file=sys.stderr)
            return 2
        cfg.logical = replace(chosen, wrappers=cfg.logical.wrappers) if cfg.logical else chosen
    if cfg.logical is None or cfg.logical.rules is None:
        cfg.logical = _discovered_rules(cfg) or cfg.logical
    from shardcheck.check.discovery import project_files
    from shardcheck.check.per_file import listed, say
    from shardcheck.analyzer.sitemap import sharding_sites
    found: List[Tuple[str, List[Site]]] = []
    status = 0
    every = list(dict.fromkeys(files + list(project_files(cfg, args.paths) or ())))
    for path, (sites, why) in listed(sharding_sites, files, cfg, project, every, args.jobs):
        if sites is None:  # said, and the run goes on
            say(path, why)
            status = 2
            continue
        if sites:
            found.append((path, sites))
    rules = _rules_source(cfg)
    print(render_json(found, rules) if args.format == "json" else render_text(found, rules))
    return status


def _discovered_rules(cfg: Any) -> Any:
    """The map's rules where the config gives none and no YAML/JSON config was found
    (``logical_config.discover``): a rule table written in Python under the project root
    (``python_rules.discover``: T5X's ``standard_logical_axis_rules()``). ``check`` does
    not read it: the table is read under its function's defaults, which the run may not
    use; the map names it as the rules it assumed."""
    from dataclasses import replace

    from shardcheck.analyzer.logical_axes import normalize_rules
    from shardcheck.analyzer.logical_config import LogicalConfig
    from shardcheck.analyzer.python_rules import discover
    declared = cfg.logical
    if (declared is not None and not declared.discover) or not cfg.root:
        return None
    found = discover(cfg.root)
    if found is None:
        return None
    rules, where = found
    if declared is None:
        return LogicalConfig(normalize_rules(rules), None, (), where, discovered=True)
    return replace(declared, rules=normalize_rules(rules), source=where, discovered=True)


def _rules_source(cfg: Any) -> Any:
    """Where the project's logical axis rules came from, for the map's header (None when
    the config sets none and none were discovered)."""
    logical = getattr(cfg, "logical", None)
    if logical is None or logical.rules is None:
        return None
    return {"source": logical.source, "discovered": logical.discovered,
            "rules": len(logical.rules),
            "mesh_axes": list(logical.mesh_axes) if logical.mesh_axes is not None else None}


def site_json(path: str, s: Site) -> Dict[str, Any]:
    """One site as ``--format json`` writes it."""
    return {"filename": path, "location": {"row": s.row, "column": s.column},
            "function": s.function, "kind": s.kind, "path": s.path, "spec": s.spec,
            "logical": list(s.logical) if s.logical is not None else None,
            "mesh": s.mesh, "reason": s.reason, "via": s.via,
            "assumes": list(s.assumes) or None}


def _counts(found: List[Tuple[str, List[Site]]]) -> Tuple[int, int]:
    """(resolved, total) of the sites written in the files; a helper's site listed at a
    call (``via``) is a resolution of a site counted where it is written, not a site."""
    own = [s for _, sites in found for s in sites if s.via is None]
    return sum(1 for s in own if s.spec is not None), len(own)


def _per_call(found: List[Tuple[str, List[Site]]]) -> int:
    return sum(1 for _, sites in found for s in sites if s.via is not None)


def render_json(found: List[Tuple[str, List[Site]]], rules: Any = None) -> str:
    resolved, total = _counts(found)
    rows = [site_json(path, s) for path, sites in found for s in sites]
    return json.dumps({"sites": rows, "resolved": resolved, "total": total,
                       "resolved_at_calls": _per_call(found), "logical_rules": rules}, indent=2)


def render_text(found: List[Tuple[str, List[Site]]], rules: Any = None) -> str:
    lines: List[str] = []
    if rules is not None:
        where = (f"{rules['source']} (discovered)" if rules["discovered"]
                 else rules["source"] or "[tool.shardcheck.logical]")
        lines.append(f"logical axis rules: {rules['rules']} from {where}")
    for path, sites in found:
        lines.append(path)
        by_function: Dict[str, List[Site]] = {}
        for s in sites:
            by_function.setdefault(s.function, []).append(s)
        for function, group in by_function.items():
            lines.append(f"  {function}")
            lines.extend(f"    {_site_line(s)}" for s in group)
    resolved, total = _counts(found)
    share = f"{100.0 * resolved / total:.0f}%" if total else "n/a"
    calls = _per_call(found)
    more = f"; {calls} more resolved at calls of helpers" if calls else ""
    lines.append(f"{resolved} of {total} sharding sites resolved to mesh axes ({share}){more}")
    return "\n".join(lines)


def _site_line(s: Site) -> str:
    kind = f"{s.kind}{s.path}" + (f" via {s.via}" if s.via else "")
    logical = f" from {_logical(s.logical)}" if s.logical is not None else ""
    if s.spec is None:
        return f"{s.row}:{s.column}  {kind}: unknown{logical} ({s.reason})"
    mesh = f" on {s.mesh}" if s.mesh is not None else " (mesh unknown)"
    assumes = _assumptions(s.assumes) if s.assumes else ""
    return f"{s.row}:{s.column}  {kind}: {s.spec}{logical}{mesh}{assumes}"


def _assumes(read: Tuple[str, ...]) -> str:
    """The defaults read before a site, by owner, the last three read (nearest the site)
    of each in full: ``TrainConfig.{5 more, mesh_axes, data_sharding}``. JSON lists all."""
    owners: Dict[str, List[str]] = {}
    for r in read:
        owner, _, field = r.rpartition(".")
        owners.setdefault(owner, []).append(field)
    parts = []
    for owner, fields in owners.items():
        if len(fields) == 1:
            parts.append(f"{owner}.{fields[0]}")
            continue
        shown = ([f"{len(fields) - 3} more"] if len(fields) > 3 else []) + fields[-3:]
        parts.append(f"{owner}.{{{', '.join(shown)}}}")
    return ", ".join(parts)  # a YAML config's: configs/base.yml:config.{mesh_axes, ...}


def _assumptions(read: Tuple[str, ...]) -> str:
    """`` [assuming the defaults of ...; assuming `x` is not None]``, or ""."""
    defaults = [r for r in read if not r.endswith(" is not None")]
    present = [r for r in read if r.endswith(" is not None")]
    parts = ([f"assuming the defaults of {_assumes(tuple(defaults))}"] if defaults else []) + \
        ([f"assuming {' and '.join(present)}"] if present else [])
    return f" [{'; '.join(parts)}]" if parts else ""


def _logical(names: Tuple[Any, ...]) -> str:
    return "(" + ", ".join(repr(n) for n in names) + ("," if len(names) == 1 else "") + ")"
