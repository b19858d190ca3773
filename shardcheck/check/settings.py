"""``shardcheck check --show-settings`` / ``--show-files``: what a run would use, without
running it (as ruff's flags of the same names)."""

from __future__ import annotations

from typing import Any, List


def show_settings(cfg: Any, cache_dir: Any) -> str:
    """The resolved settings, one ``key = value`` per line (TOML-like, for people)."""
    logical = cfg.logical
    if logical is None or logical.rules is None:
        rules = "none"
    else:
        where = logical.source or "[tool.shardcheck.logical]"
        rules = f"{len(logical.rules)} from {where}" + (" (discovered)" if logical.discovered
                                                      else "")
    meshes = ", ".join(f"{m.name} ({', '.join(f'{a}={n}' for a, n in m.axes)})"
                       for m in cfg.meshes) or "none"
    rows = [
        ("config", cfg.source or "none (defaults)"),
        ("root", cfg.root),
        ("rules enabled", ", ".join(sorted(cfg.enabled_codes()))),
        ("select", list(cfg.select)), ("ignore", list(cfg.ignore)),
        ("exclude", list(cfg.exclude)),
        ("per-file-ignores", {g: list(c) for g, c in cfg.per_file_ignores}),
        ("meshes", meshes), ("default-mesh", cfg.default_mesh or "none"),
        ("mesh (--mesh)", _mesh(cfg.scale_mesh)),
        ("jax-version", cfg.jax_version or "0.10 (default)"),
        ("logical axis rules", rules),
        ("logical mesh axes", list(logical.mesh_axes) if logical is not None
         and logical.mesh_axes is not None else "none"),
        ("cache-dir", cache_dir or "none (--no-cache)"),
        ("respect-gitignore", cfg.respect_gitignore),
        ("timeout-per-file", cfg.timeout_per_file), ("memory-per-file", cfg.memory_per_file),
        ("generated-size-limit", cfg.generated_size_limit),
    ]
    return "\n".join(f"{k} = {v}" for k, v in rows)


def _mesh(m: Any) -> str:
    if m is None:
        return "none"
    return ", ".join(f"{a}={n}" for a, n in zip(m.axis_names, m.axis_sizes))


def show_files(files: List[str]) -> str:
    return "\n".join(sorted(files))
