"""``shardcheck check`` (the default command), ``types`` and ``specs``: their arguments,
and the runs they make of the library: files found, config read, the runner, fixes,
baselines and the report."""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import List, Optional, Union


MAX_JOBS = 1024  # worker processes at most: more is a fork bomb on a large tree, not speed


def _tune_gc() -> None:
    """``types`` and ``specs`` analyse in this process: under the collector thresholds
    ``check`` runs its files under (``supervisor.GC_THRESHOLD``), for this process's life."""
    import gc

    from shardcheck.check.supervisor import GC_THRESHOLD
    gc.set_threshold(*GC_THRESHOLD)


def check_command(args: argparse.Namespace) -> int:
    from shardcheck.check import cache as cachemod
    from shardcheck.check import runner
    from shardcheck.check.discovery import discover
    import time
    paths = args.paths or ["."]
    stdin = paths == ["-"]
    usage = _usage_problem(args, paths, stdin)
    if usage:
        print(f"shardcheck: {usage}", file=sys.stderr)
        return 2
    if getattr(args, "watch", False):
        from shardcheck.check.watch import watch
        return watch(args, check_command)
    cfg = _config(args, args.stdin_filename if stdin and args.stdin_filename else paths[0])
    if cfg is None:
        return 2
    for w in cfg.warnings:
        print(f"shardcheck: warning: {w}", file=sys.stderr)
    if stdin:
        return _check_stdin(args, cfg)
    warnings: List[str] = []
    configs: List[str] = []
    files, missing = discover(paths, cfg, force_exclude=args.force_exclude, warnings=warnings,
                              configs=configs)
    for w in warnings:
        print(f"shardcheck: warning: {w}", file=sys.stderr)
    for m in missing:
        print(f"shardcheck: {m}: no such file or directory", file=sys.stderr)
    if missing:
        return 2
    cache_dir = None
    if not args.no_cache:
        cache_dir = args.cache_dir or cfg.cache_dir or cachemod.default_dir(
            cfg.root if cfg.source else None, paths[0])
    if args.show_settings or args.show_files:
        from shardcheck.check.settings import show_files, show_settings
        print(show_settings(cfg, cache_dir) if args.show_settings else show_files(files))
        return 0
    start = time.perf_counter()
    from shardcheck.check.discovery import project_files
    from shardcheck.output.terminal import progress
    # the project around the files checked: its files that call theirs are analysed too
    project_configs: List[str] = []
    args.project_files = project_files(cfg, paths, configs=project_configs)
    if args.project_files is None:  # the paths are the project
        project_configs = configs
    with progress(0 if args.quiet else len(files), sys.stderr) as update:
        result = runner.run(files, cfg, jobs=args.jobs, cache_dir=cache_dir, progress=update,
                            project_files=args.project_files, config_files=project_configs)
    if args.add_noqa:
        return _add_noqa(args, result.findings, files, cfg, cache_dir)
    unwritten = 0  # files --fix had to write and could not: the run exits 2
    if args.fix or args.diff:
        from shardcheck.check.fixes import fix_findings
        fixed = fix_findings(result.findings, files, args.unsafe_fixes, write=not args.diff)
        for problem in fixed.problems:
            print(f"shardcheck: warning: {problem}", file=sys.stderr)
        if args.diff:
            from shardcheck.check.fixes import unified_diff
            for f in fixed.files:
                sys.stdout.write(unified_diff(f))
            print(f"Would fix {fixed.applied} finding(s) in {len(fixed.files)} file(s).",
                  file=sys.stderr)
            return 1 if fixed.applied else 0
        if fixed.files:  # what remains, checked on the fixed files
            result = runner.run(files, cfg, jobs=args.jobs, cache_dir=cache_dir,
                                project_files=args.project_files, config_files=project_configs)
        unwritten = fixed.unwritten
        print(f"Fixed {fixed.applied} finding(s) in {len(fixed.files)} file(s); "
              f"{len(result.findings)} remaining{_unwritten(unwritten)}.", file=sys.stderr)
    if configs:
        from shardcheck.check.project_checks import config_findings
        result.findings = result.findings + config_findings(
            configs, cfg, args.project_files if args.project_files is not None else files)
        result.files += len(configs)
    elapsed = time.perf_counter() - start
    if args.write_baseline:
        return _write_baseline(args.write_baseline, result.findings)
    findings = _baselined(args, cfg, result.findings)
    if findings is None:
        return 2
    if not _emit(_report(args, findings, files + configs), args):
        return 2
    if args.verbose:
        besides = (f", and {result.importers} file(s) of the project that import them"
                   if result.importers else "")
        print(f"checked {result.files} files{besides} ({result.cached} from cache) in "
              f"{elapsed:.2f}s",
              file=sys.stderr)
    return 2 if unwritten else _status(findings, args)


# the formats --format selects, which --output-format also takes (ruff's spelling)
_MACHINE_FORMATS = ("json", "sarif", "github")


def _formats(args: argparse.Namespace) -> str:
    """``--output-format json`` (ruff's spelling) as ``--format json``; what is wrong when
    the two disagree ("" when nothing is)."""
    wanted = args.output_format
    if wanted == "text":
        args.output_format = "full"
    elif wanted in _MACHINE_FORMATS:
        if args.format not in ("text", wanted):
            return f"--format {args.format} and --output-format {wanted} disagree: give one"
        args.format, args.output_format = wanted, "full"
    return ""


def _usage_problem(args: argparse.Namespace, paths: List[str], stdin: bool) -> str:
    """What is wrong with the command line's own values ("" when nothing is)."""
    formats = _formats(args)
    if formats:
        return formats
    if args.jobs is not None and not 1 <= args.jobs <= MAX_JOBS:
        return f"-j/--jobs must be from 1 to {MAX_JOBS}, got {args.jobs}"
    if "-" in paths and not stdin:
        return "`-` (standard input) cannot be mixed with other paths"
    if stdin and (args.fix or args.diff or args.add_noqa or args.write_baseline):
        return ("--fix/--diff/--add-noqa/--write-baseline write files; they do not apply to "
                "standard input")
    if getattr(args, "watch", False):
        clash = [flag for flag, on in (("-", stdin), ("--fix", args.fix), ("--diff", args.diff),
                                       ("--add-noqa", args.add_noqa),
                                       ("--write-baseline", args.write_baseline),
                                       ("--output-file", args.output_file),
                                       ("--show-settings", args.show_settings),
                                       ("--show-files", args.show_files)) if on]
        if clash:
            return f"--watch checks again on each change; it does not combine with {clash[0]}"
    return ""


def _config(args: argparse.Namespace, start_at: str):
    """The config for ``start_at`` with the command line's flags over it; None after a
    config error, said on stderr."""
    from shardcheck.check import config as cfgmod
    try:
        cfg = cfgmod.load(args.config, start=start_at if os.path.lexists(start_at) else ".")
        cfg = cfgmod.merge_cli(cfg, select=_split(args.select), ignore=_split(args.ignore),
                               extend_select=_split(args.extend_select),
                               exclude=_split(args.exclude))
        if args.mesh is not None:
            cfg.scale_mesh = cfgmod.resolve_mesh_option(args.mesh, cfg)
        if args.warn_unused_ignores:
            cfg.warn_unused_ignores = True
        if args.timeout_per_file is not None:
            cfg.timeout_per_file = cfgmod.parse_seconds(args.timeout_per_file, "--timeout-per-file")
        if args.memory_per_file is not None:
            cfg.memory_per_file = cfgmod.parse_bytes(args.memory_per_file, "--memory-per-file",
                                                     at_least=cfgmod.MIN_MEMORY_PER_FILE)
    except cfgmod.ConfigError as e:
        print(f"shardcheck: config error: {e}", file=sys.stderr)
        return None
    return cfg


def _write_baseline(path: str, findings: list) -> int:
    from shardcheck.check.baseline import BaselineError, write
    try:
        n = write(path, findings)
    except BaselineError as e:
        print(f"shardcheck: {e}", file=sys.stderr)
        return 2
    print(f"Wrote {n} finding(s) to the baseline {path}; runs with --baseline {path} "
          "(or `baseline` in [tool.shardcheck]) report only new ones.", file=sys.stderr)
    return 0


def _baselined(args: argparse.Namespace, cfg, findings: list) -> Optional[list]:
    """The findings the baseline (``--baseline``, else the config's) does not hide; None
    after an error, said on stderr."""
    path = args.baseline or cfg.baseline
    if not path:
        return findings
    from shardcheck.check.baseline import BaselineError, load
    try:
        base = load(path)
    except BaselineError as e:
        print(f"shardcheck: baseline error: {e}", file=sys.stderr)
        return None
    kept, hidden, stale = base.split(findings)
    if not args.quiet and (hidden or stale):
        fixed = f"; {stale} of its entries match nothing now (fixed: drop them with " \
                f"--write-baseline {path})" if stale else ""
        print(f"shardcheck: {hidden} finding(s) hidden by the baseline {path}{fixed}",
              file=sys.stderr)
    return kept


def _add_noqa(args: argparse.Namespace, findings: list, files: list, cfg, cache_dir) -> int:
    """``--add-noqa``: suppress every finding that stands where it is, then report what
    remains (file-level findings, lines inside strings)."""
    from shardcheck.check import runner
    from shardcheck.check.add_noqa import add_noqa
    noqa = add_noqa(findings, checked=files)
    for problem in noqa.problems:
        print(f"shardcheck: warning: {problem}", file=sys.stderr)
    result = runner.run(files, cfg, jobs=args.jobs, cache_dir=cache_dir,
                        project_files=args.project_files)
    print(f"Added {noqa.added} suppression comment(s); {len(result.findings)} finding(s) "
          f"remain{_unwritten(noqa.unwritten)}.", file=sys.stderr)
    if not _emit(_report(args, result.findings, files), args):
        return 2
    return 2 if noqa.unwritten else _status(result.findings, args)


def _unwritten(n: int) -> str:
    """How many files a requested write left unchanged (each said above), for the summary."""
    return f"; {n} file(s) could not be written (exit status 2)" if n else ""


def _report(args: argparse.Namespace, findings: list, files: Union[int, List[str]]) -> str:
    from shardcheck.output import findings as output
    if args.statistics:
        return output.statistics(args.format, findings)
    frames = args.output_format == "full" and not getattr(args, "from_stdin", False)
    report = output.render(args.format, findings, files, quiet=args.quiet, frames=frames,
                           group=args.output_format == "grouped")
    if args.format == "text" and not args.output_file:
        from shardcheck.output.terminal import colour, wants_colour
        if args.color == "always" or (args.color == "auto" and wants_colour(sys.stdout)):
            report = colour(report)
    return report


def _status(findings: list, args: argparse.Namespace) -> int:
    from shardcheck.analyzer.codes import INTERNAL_ERROR
    from shardcheck.analyzer.ftypes import ERROR
    if any(f.code == INTERNAL_ERROR for f in findings):
        return 2
    if args.exit_zero:
        return 0
    return 1 if any(f.severity == ERROR for f in findings) else 0


def _emit(report: str, args: argparse.Namespace) -> bool:
    """The report on standard output, or in ``--output-file`` (False: it could not be
    written, which is said on stderr)."""
    if not args.output_file:
        print(report)
        return True
    try:
        with open(args.output_file, "w", encoding="utf-8") as f:
            f.write(report + "\n")
    except OSError as e:
        print(f"shardcheck: cannot write --output-file {args.output_file}: "
              f"{e.strerror or e}", file=sys.stderr)
        return False
    return True


def _check_stdin(args: argparse.Namespace, cfg) -> int:
    """``shardcheck check - [--stdin-filename PATH]``: the source on standard input, checked
    as ``check PATH`` checks the file, under the same budgets and size limit (no cache;
    imports resolved from PATH's directory)."""
    from shardcheck.check.supervisor import SourceTask, analyse_source
    name = args.stdin_filename or "-"
    args.from_stdin = True  # the file on disk is not the buffer: no code frames from it
    data = sys.stdin.buffer.read()
    if args.stdin_filename and args.force_exclude and cfg.is_excluded(os.path.abspath(name)):
        findings: list = []
    else:
        files = (name,) if args.stdin_filename and os.path.isfile(name) else ()
        findings = analyse_source(SourceTask(name, data, cfg, files))
    kept = _baselined(args, cfg, findings)
    if kept is None:
        return 2
    if not _emit(_report(args, kept, 1), args):
        return 2
    return _status(kept, args)


def files_and_project(args: argparse.Namespace):
    """(config, files, project) for the paths given, or an exit status after an error.
    The project holds the files of the project around them too (``project_files``): a
    file's imports resolve as they do when the whole tree is named (a script beside a
    src layout finds its package)."""
    from shardcheck.check import config as cfgmod
    from shardcheck.check.discovery import discover, project_files
    from shardcheck.analyzer.project import Project
    try:
        start = args.paths[0] if os.path.lexists(args.paths[0]) else "."
        cfg = cfgmod.load(args.config, start=start)
    except cfgmod.ConfigError as e:
        print(f"shardcheck: config error: {e}", file=sys.stderr)
        return 2
    warnings: List[str] = list(cfg.warnings)
    files, missing = discover(args.paths, cfg, warnings=warnings)
    for w in warnings:
        print(f"shardcheck: warning: {w}", file=sys.stderr)
    for m in missing:
        print(f"shardcheck: {m}: no such file or directory", file=sys.stderr)
    if missing:
        return 2
    project = Project(cfg)
    for f in files + list(project_files(cfg, args.paths) or ()):
        if os.path.isfile(f):  # a FIFO or a dangling link is reported, never imported
            project.add_file(f)
    return cfg, files, project


def types_command(args: argparse.Namespace) -> int:
    _tune_gc()
    import json

    from shardcheck.analyzer.inferred_types import infer_types
    loaded = files_and_project(args)
    if isinstance(loaded, int):
        return loaded
    cfg, files, project = loaded
    from shardcheck.check.discovery import project_files
    from shardcheck.check.per_file import listed, say
    rows, known, total, status = [], 0, 0, 0
    every = list(dict.fromkeys(files + list(project_files(cfg, args.paths) or ())))
    for path, (types, why) in listed(infer_types, files, cfg, project, every, args.jobs):
        if types is None:  # said, and the run goes on
            say(path, why)
            status = 2
            continue
        for t in types:
            total += 1
            known += t.type is not None
            if t.type is None and not args.all:
                continue
            rows.append({"path": path, "line": t.row, "column": t.column, "name": t.name,
                         "type": t.type, "known": t.partial})
    if args.format == "json":
        print(json.dumps({"types": rows, "known": known, "total": total}, indent=2))
    else:
        for r in rows:
            shown = r["type"] if r["type"] is not None else f"unknown (known: {r['known']})"
            print(f"{r['path']}:{r['line']}:{r['column']}: {r['name']}: {shown}")
        share = f"{100.0 * known / total:.0f}%" if total else "n/a"
        print(f"{known} of {total} array assignments have a known type ({share})")
    return status


def specs_command(args: argparse.Namespace) -> int:
    _tune_gc()
    from shardcheck.check import specs
    from shardcheck.check.discovery import is_config_file
    args.config_variant = None
    if args.config and is_config_file(args.config):  # a YAML/JSON run config, not pyproject
        args.config_variant, args.config = args.config, None
    return specs.run(args, files_and_project)


def _split(values: Optional[List[str]]) -> List[str]:
    out: List[str] = []
    for v in values or []:
        out.extend(x.strip() for x in v.split(",") if x.strip())
    return out


def add_check_parser(sub) -> None:
    c = sub.add_parser("check", help="check Python files and directories (the default command)")
    c.add_argument("paths", nargs="*", metavar="PATH", help="files or directories (default: .)")
    c.add_argument("--format", choices=("text", "json", "sarif", "github"), default="text",
                   help="text (default), json, sarif or github; --output-format takes these too")
    c.add_argument("--output-format",
                   choices=("full", "concise", "grouped") + _MACHINE_FORMATS + ("text",),
                   default="full",
                   help="text: each finding with its source line and a caret under it "
                        "(full, the default), one line per finding (concise), or the "
                        "findings under each file's name (grouped); or, as ruff spells "
                        "them, json, sarif or github (the same as --format)")
    c.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                   help="colour the text report: auto (a terminal, unless NO_COLOR; "
                        "FORCE_COLOR forces it), always, or never")
    c.add_argument("--select", action="append", metavar="RULES",
                   help="only these rules: codes, code prefixes or names, comma-separated")
    c.add_argument("--extend-select", action="append", metavar="RULES")
    c.add_argument("--ignore", action="append", metavar="RULES", help="skip these rules")
    c.add_argument("--exclude", action="append", metavar="GLOBS", help="skip paths matching these")
    c.add_argument("--config", metavar="PYPROJECT", help="read [tool.shardcheck] from this file")
    c.add_argument("--mesh", metavar="AXIS=SIZE,...|NAME",
                   help="check as if every mesh in the source had this shape (the production "
                        "mesh: data=64,model=8, or a mesh declared in [tool.shardcheck.meshes])")
    c.add_argument("--exit-zero", action="store_true", help="exit 0 even with findings")
    c.add_argument("--fix", action="store_true",
                   help="apply safe fixes in place (atomically), then report what remains")
    c.add_argument("--diff", action="store_true",
                   help="print the fixes as a unified diff instead of writing them (exit 1 if any)")
    c.add_argument("--unsafe-fixes", action="store_true",
                   help="with --fix/--diff, also apply fixes that may change what the code means")
    c.add_argument("--no-cache", action="store_true", help="do not read or write the cache")
    c.add_argument("--cache-dir", metavar="DIR",
                   help="default: .shardcheck_cache beside pyproject.toml, else at the root of "
                        "the checkout, else in the user's cache directory")
    c.add_argument("-j", "--jobs", type=int, default=None, help="processes (default: all cores)")
    c.add_argument("--force-exclude", action="store_true",
                   help="apply `exclude` to files named on the command line too (for pre-commit, "
                        "which names every staged file)")
    c.add_argument("--timeout-per-file", type=float, metavar="SECONDS",
                   help="skip a file whose analysis takes longer (default: [tool.shardcheck] "
                        "timeout-per-file, 60; 0: no limit)")
    c.add_argument("--memory-per-file", metavar="BYTES",
                   help="skip a file whose analysis needs more memory (default: [tool.shardcheck] "
                        "memory-per-file, 2GiB; 0: no limit)")
    c.add_argument("--statistics", action="store_true",
                   help="print how many findings each rule has instead of the findings")
    c.add_argument("-q", "--quiet", action="store_true",
                   help="text output: the findings only, no summary lines")
    c.add_argument("-v", "--verbose", action="store_true",
                   help="also print how many files were checked (and from cache) and how long "
                        "it took, to stderr")
    c.add_argument("--add-noqa", action="store_true",
                   help="add a `# shardcheck: ignore[...]` comment for each finding (adopt "
                        "shardcheck on an existing codebase), then report what remains")
    c.add_argument("--baseline", metavar="FILE",
                   help="hide the findings recorded in this baseline file (written by "
                        "--write-baseline); also `baseline` in [tool.shardcheck]")
    c.add_argument("--write-baseline", metavar="FILE",
                   help="record every finding in FILE and exit 0 (adopting shardcheck on a "
                        "codebase: later runs with --baseline report only new findings)")
    c.add_argument("--warn-unused-ignores", action="store_true",
                   help="report suppression comments that silence nothing (unused-suppression)")
    c.add_argument("--show-settings", action="store_true",
                   help="print the settings the run would use (config file, rules, meshes, "
                        "logical axis rules, cache, limits) and exit")
    c.add_argument("--show-files", action="store_true",
                   help="print the files the run would check and exit")
    c.add_argument("--output-file", metavar="FILE",
                   help="write the report to FILE instead of standard output")
    c.add_argument("--stdin-filename", metavar="PATH",
                   help="with PATH `-` (source on standard input, as editors pipe a buffer): "
                        "the file it is, for the config, per-file-ignores, imports and messages")
    c.add_argument("--watch", action="store_true",
                   help="check, then check again each time a file it checks (or a new one), "
                        "a sharding config or pyproject.toml changes, until Ctrl-C")
    c.add_argument("--daemon", action="store_true",
                   help="run in a warm background process (started by the first such run; "
                        "also SHARDCHECK_DAEMON=1): the same report, without the start-up's "
                        "imports; see `shardcheck daemon`")
    c.add_argument("--no-daemon", action="store_true",
                   help="run in this process even when SHARDCHECK_DAEMON is set")
    c.set_defaults(func=check_command)
