"""``shardcheck confirm``: its arguments, the programs it runs (``options.programs``), and
the report of what ran."""

from __future__ import annotations

import os
import sys

from shardcheck.check.command import files_and_project

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse


def confirm_command(args: argparse.Namespace) -> int:
    import importlib.util
    import json

    from shardcheck.check import config as cfgmod
    try:  # the programs run under this Python
        has_jax = importlib.util.find_spec("jax") is not None
    except (ImportError, ValueError):
        has_jax = False
    if not has_jax:
        print("shardcheck: confirm runs the programs under JAX, which this Python "
              f"({sys.executable}) does not have: install shardcheck with its jax extra "
              "(pip install 'shardcheck[jax]') or JAX itself", file=sys.stderr)
        return 2
    if args.devices is not None and args.devices < 1:
        print("shardcheck: --devices must be at least 1", file=sys.stderr)
        return 2
    if args.jobs is not None and args.jobs < 1:
        print("shardcheck: --jobs must be at least 1", file=sys.stderr)
        return 2
    # PATH::NAME picks jitted functions to run alone, with inputs of their call sites' types
    named: dict = {}
    for i, p in enumerate(args.paths):
        if "::" in p:
            path, _, name = p.partition("::")
            if not name.isidentifier():
                print(f"shardcheck: {p!r}: give PATH::NAME with NAME a function's name", file=sys.stderr)
                return 2
            args.paths[i] = path
            named.setdefault(os.path.abspath(path), []).append(name)
    loaded = files_and_project(args)
    if isinstance(loaded, int):
        return loaded
    cfg, files, project = loaded
    from shardcheck.confirm import options
    files, passed = options.programs(args.paths, files, cfg, imported=args.mesh is not None)
    if passed:
        print(options.passed_over_note(passed), file=sys.stderr)
    if not files:
        print("shardcheck: confirm found no program to run under "
              f"{' '.join(args.paths)}: it runs the files named, and in a directory those with "
              'an `if __name__ == "__main__":` guard or listed in confirm-programs',
              file=sys.stderr)
        return 2
    try:
        budget = (cfgmod.parse_bytes(args.max_collective_bytes)
                  if args.max_collective_bytes is not None else cfg.max_collective_bytes)
        mesh = cfgmod.resolve_mesh_option(args.mesh, cfg) if args.mesh is not None else None
    except cfgmod.ConfigError as e:
        print(f"shardcheck: {e}", file=sys.stderr)
        return 2
    from shardcheck.analyzer.sources import Unreadable, decode_source, python_verdict, read_source
    for path in files:  # a file that does not parse is bad input, before anything runs
        try:
            verdict = python_verdict(decode_source(read_source(path)), path)
        except Unreadable as e:
            print(f"{path}: cannot be run: {e}", file=sys.stderr)
            return 2
        except SyntaxError as e:
            verdict = e  # type: ignore[assignment]  # the error stands in for the verdict
        if verdict is not None:
            print(f"{path}: does not parse: {verdict.msg}".splitlines()[0], file=sys.stderr)
            return 2
    from shardcheck.confirm import programs as confirm, sandbox as confirm_run, scale
    try:
        found, timeout = options.options(args, cfg, abstract=mesh is not None)
    except confirm_run.UsageError as e:
        print(f"shardcheck: {e}", file=sys.stderr)
        return 2
    functions = {f: named[os.path.abspath(f)] for f in files if os.path.abspath(f) in named}
    if mesh is not None:
        scaled = scale.confirm_scale(files, mesh, cfg, project, functions, timeout=timeout)
        print(scale.render_json(scaled) if args.format == "json" else scale.render_text(scaled))
        return 0 if all(r.ok for r in scaled) else 1
    named_files = [f for f in files if f in functions]
    alone = scale.confirm_scale(named_files, None, cfg, project, functions, max_bytes=budget,
                                timeout=timeout, where=options.alone_plan(
                                    args, named_files, cfg, project, found)) if functions else []
    scripts = [f for f in files if f not in functions]
    results = options.run_scripts(args, scripts, cfg, project, budget, found, timeout)
    if args.format == "json":
        print(json.dumps(json.loads(confirm.render_json(results)) + scale.json_rows(alone), indent=2))
    else:
        print("\n".join(x for x in (confirm.render_text(results) if results else "",
                                     scale.render_text(alone) if alone else "") if x))
    # 0 only when every program ran cleanly and every type agreed (the README's contract)
    return 0 if all(r.ok for r in results) and all(r.ok for r in alone) else 1


def add_confirm_parser(sub) -> None:
    cf = sub.add_parser(
        "confirm", help="run programs under JAX and compare the inferred types with jax.typeof "
                        "(it executes your code)",
        description="Run programs under JAX and compare every type the analyzer infers with "
                    "jax.typeof. confirm EXECUTES YOUR CODE, as `python PROGRAM` would, with "
                    "your environment and permissions: the files you name, and in a directory "
                    'those with an `if __name__ == "__main__":` guard or listed in '
                    "confirm-programs (never setup.py, conftest.py or noxfile.py).")
    cf.add_argument("paths", nargs="+", metavar="PATH",
                    help="scripts or directories; PATH::NAME runs the jitted function NAME alone")
    cf.add_argument("--devices", type=int, default=None,
                    help="devices to run on: that many virtual CPU devices, or an accelerator "
                         "that has exactly that many (default: what the source's meshes need, "
                         "at least 8 on the CPU)")
    cf.add_argument("--platform", choices=("cpu", "gpu", "tpu"),
                    help="run on this backend (refused when JAX finds none here; default: the "
                         "accelerator when it has the devices the meshes need, else the CPU)")
    cf.add_argument("--timeout", type=float, metavar="SECONDS",
                    help="stop a program (its whole process group) after this long (default: "
                         "[tool.shardcheck] confirm-timeout, 300; 0: no limit)")
    cf.add_argument("--mesh", metavar="AXIS=SIZE,...|NAME",
                    help="trace the jitted functions on an abstract mesh of this shape (e.g. "
                         "data=64,model=8, or a mesh declared in [tool.shardcheck.meshes]) "
                         "instead of running on devices")
    cf.add_argument("--max-collective-bytes", metavar="BYTES",
                    help="fail when a jitted function's collectives move more than this per "
                         "device per call (4096, 64MiB, 1.5GB); default: [tool.shardcheck] "
                         "max-collective-bytes")
    cf.add_argument("-j", "--jobs", type=int, help="programs run at once (default: CPUs, at most 4)")
    cf.add_argument("--format", choices=("text", "json"), default="text")
    cf.add_argument("--config", metavar="PYPROJECT", help="read [tool.shardcheck] from this file")
    cf.set_defaults(func=confirm_command)
