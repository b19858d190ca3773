"""``shardcheck specs PATH...``: the sharding map of a codebase, for people (grouped by
file and function) or as JSON (one object per site)."""

from __future__ import annotations

import argparse
import json
from typing import Any, Callable, Dict, List, Tuple

from shardcheck.analyzer.sitemap import Site


def run(args: argparse.Namespace, files_and_project: Callable[[argparse.Namespace], Any]) -> int:
    """Map every file under ``args.paths``; exit 2 when a file could not be analysed."""
    loaded = files_and_project(args)
    if isinstance(loaded, int):
        return loaded
    cfg, files, project = loaded
    from shardcheck._per_file import analysed
    from shardcheck.analyzer.sitemap import sharding_sites
    found: List[Tuple[str, List[Site]]] = []
    status = 0
    for path in files:  # a file that cannot be read or analysed is reported; the run goes on
        sites = analysed(sharding_sites, path, cfg, project)
        if sites is None:
            status = 2
            continue
        if sites:
            found.append((path, sites))
    print(render_json(found) if args.format == "json" else render_text(found))
    return status


def site_json(path: str, s: Site) -> Dict[str, Any]:
    """One site as ``--format json`` writes it."""
    return {"filename": path, "location": {"row": s.row, "column": s.column},
            "function": s.function, "kind": s.kind, "path": s.path, "spec": s.spec,
            "logical": list(s.logical) if s.logical is not None else None,
            "mesh": s.mesh, "reason": s.reason}


def _counts(found: List[Tuple[str, List[Site]]]) -> Tuple[int, int]:
    total = sum(len(sites) for _, sites in found)
    return sum(1 for _, sites in found for s in sites if s.spec is not None), total


def render_json(found: List[Tuple[str, List[Site]]]) -> str:
    resolved, total = _counts(found)
    rows = [site_json(path, s) for path, sites in found for s in sites]
    return json.dumps({"sites": rows, "resolved": resolved, "total": total}, indent=2)


def render_text(found: List[Tuple[str, List[Site]]]) -> str:
    lines: List[str] = []
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
    lines.append(f"{resolved} of {total} sharding sites resolved to mesh axes ({share})")
    return "\n".join(lines)


def _site_line(s: Site) -> str:
    kind = f"{s.kind}{s.path}"
    logical = f" from {_logical(s.logical)}" if s.logical is not None else ""
    if s.spec is None:
        return f"{s.row}:{s.column}  {kind}: unknown{logical} ({s.reason})"
    mesh = f" on {s.mesh}" if s.mesh is not None else " (mesh unknown)"
    return f"{s.row}:{s.column}  {kind}: {s.spec}{logical}{mesh}"


def _logical(names: Tuple[Any, ...]) -> str:
    return "(" + ", ".join(repr(n) for n in names) + ("," if len(names) == 1 else "") + ")"
