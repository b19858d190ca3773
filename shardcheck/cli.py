"""The ``shardcheck`` command. Thin: the command line's parser, built from each command's
module (``check/command.py``, ``confirm/command.py``, ``integrations/commands.py``), and the
dispatch; the small commands (explain, rules, parse) live here.

    shardcheck PATH...            same as `shardcheck check PATH...`
    shardcheck explain SC101      a rule's docs (code or name)
    shardcheck rules              every rule
    shardcheck parse TYPE...      check sharding type strings
    shardcheck specs PATH...      the sharding map: every sharding site and its spec
    shardcheck check --daemon     the same check, served by a warm background process
    shardcheck daemon status      start, stop, restart or query that process

Exit codes: 0 no error-level findings; 1 findings (or an invalid type for ``parse``);
2 usage, config or internal error.
"""

from __future__ import annotations

import os
import sys

from shardcheck._version import __version__

# Start-up is kept to the interpreter's own: what a command needs (argparse, json, the
# model, the analyzer) is imported when it runs, so `shardcheck --version` and a fully
# cached `shardcheck check` stay fast. Annotations are strings (the __future__ import);
# the names they use are imported for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import List, Optional

COMMANDS = ("check", "explain", "rule", "rules", "parse", "types", "confirm", "specs", "server",
            "daemon", "clean")


def _parser_class() -> type:
    import argparse

    class _Parser(argparse.ArgumentParser):
        def error(self, message: str):  # usage errors exit 2, with no traceback
            self.print_usage(sys.stderr)
            self.exit(2, f"{self.prog}: error: {message}\n")

        def format_help(self) -> str:
            if self.prog == "shardcheck" and self.epilog is None:  # the model, for --help only
                from sharding_types import GRAMMAR
                self.epilog = "Sharding type syntax (as str(jax.typeof(x)) prints it):\n\n" + GRAMMAR
            return super().format_help()

    return _Parser


def _cmd_parse(args: argparse.Namespace) -> int:
    from sharding_types import ShardingSyntaxError, parse
    status = 0
    for text in args.types:
        try:
            t = parse(text)
        except ShardingSyntaxError as e:
            print(e, file=sys.stderr)
            status = 1
            continue
        print(t)
        if args.verbose:
            print(f"  dtype={t.dtype} shape={t.shape} spec={t.spec} varying={t.varying} "
                  f"unreduced={t.unreduced} reduced={t.reduced} weak={t.weak_type}")
    return status


def _find_rule(key: str):
    from shardcheck.analyzer.rules import all_rules
    for code, rule in all_rules().items():
        if key.upper() == code or key == rule.NAME:
            return rule
    return None


def _cmd_clean(args: argparse.Namespace) -> int:
    from shardcheck.check.cache import CacheError, remove_cache
    from shardcheck.check import config as cfgmod
    try:
        cfg = cfgmod.load(None, start=args.path)
    except cfgmod.ConfigError as e:
        print(f"shardcheck: config error: {e}", file=sys.stderr)
        return 2
    try:
        removed = remove_cache(cfg, args.path)
    except CacheError as e:
        print(f"shardcheck: {e}", file=sys.stderr)
        return 2
    print(f"removed {removed}" if removed else "no cache to remove", file=sys.stderr)
    return 0


def _cmd_explain(args: argparse.Namespace) -> int:
    rule = _find_rule(args.rule)
    if rule is None:
        print(f"shardcheck: unknown rule {args.rule!r}; `shardcheck rules` lists them",
              file=sys.stderr)
        return 2
    print(rule.explain())
    return 0


def _cmd_rules(args: argparse.Namespace) -> int:
    import json

    from shardcheck.analyzer.rules import all_rules
    rules = all_rules()
    if args.format == "json":
        print(json.dumps([{"code": c, "name": r.NAME, "severity": r.SEVERITY,
                           "summary": r.summary()} for c, r in rules.items()], indent=2))
        return 0
    for code, r in rules.items():
        print(f"{code}  {r.NAME:28s} {r.SEVERITY:8s} {r.summary()}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    import argparse
    _Parser = _parser_class()
    p = _Parser(
        prog="shardcheck",
        description="An explicit-sharding type checker and static analyzer for JAX.\n\n"
                    "  shardcheck PATH...          check files (same as `shardcheck check`)\n"
                    "  shardcheck specs PATH...    the sharding map: each sharding site's spec\n"
                    "  shardcheck explain SC101    a rule's documentation",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"shardcheck {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    # each command's module: its arguments and the function that runs it (their own
    # imports, the analysis's included, are made when the command runs)
    from shardcheck.check.command import (add_check_parser, specs_command, types_command)
    from shardcheck.confirm.command import add_confirm_parser
    from shardcheck.integrations.commands import add_daemon_parser, server_command

    add_check_parser(sub)

    e = sub.add_parser("explain", aliases=["rule"], help="print a rule's documentation")
    e.add_argument("rule", metavar="RULE", help="a code (SC101) or name (unknown-mesh-axis)")
    e.set_defaults(func=_cmd_explain)

    cl = sub.add_parser("clean", help="remove the cache of the project in the working "
                        "directory (or of PATH's project)")
    cl.add_argument("path", nargs="?", default=".", metavar="PATH")
    cl.set_defaults(func=_cmd_clean)

    r = sub.add_parser("rules", help="list the rules")
    r.add_argument("--format", choices=("text", "json"), default="text")
    r.set_defaults(func=_cmd_rules)

    t = sub.add_parser("types", help="print the sharding type inferred at each assignment "
                                     "(like mypy's reveal_type)")
    t.add_argument("paths", nargs="+", metavar="PATH", help="files or directories")
    t.add_argument("--all", action="store_true", help="also list assignments whose type is unknown")
    t.add_argument("--format", choices=("text", "json"), default="text")
    t.add_argument("--config", metavar="PYPROJECT", help="read [tool.shardcheck] from this file")
    t.add_argument("-j", "--jobs", type=_jobs, default=None, help="processes (default: all cores)")
    t.set_defaults(func=types_command)

    sp = sub.add_parser("specs", help="the sharding map: every sharding site (constraints, "
                                       "placements, NamedShardings, shard_map and jit specs) "
                                       "with its resolved mesh-axis spec, or why it is unknown")
    sp.add_argument("paths", nargs="+", metavar="PATH", help="files or directories")
    sp.add_argument("--format", choices=("text", "json"), default="text")
    sp.add_argument("--config", metavar="PYPROJECT|CONFIG.yml",
                    help="read [tool.shardcheck] from this file; or, given a YAML/JSON run config "
                         "(MaxText style, base_config followed), map the sites under its "
                         "logical_axis_rules, mesh_axes and fields")
    sp.add_argument("-j", "--jobs", type=_jobs, default=None, help="processes (default: all cores)")
    sp.set_defaults(func=specs_command)

    add_confirm_parser(sub)

    add_daemon_parser(sub)

    lsp = sub.add_parser("server", help="run the language server (LSP on stdin/stdout): "
                                        "diagnostics, quick fixes, hover types")
    lsp.add_argument("--stdio", action="store_true",
                     help="accepted for clients that pass it; stdio is the only transport")
    lsp.set_defaults(func=server_command)

    pp = sub.add_parser("parse", help="check sharding type strings and print them canonically")
    pp.add_argument("types", nargs="+", metavar="TYPE", help='e.g. "float32[8@data,16]"')
    pp.add_argument("-v", "--verbose", action="store_true", help="also print the parsed fields")
    pp.set_defaults(func=_cmd_parse)
    return p


def main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv == ["--version"]:  # the common probe, answered before argparse is even imported
        print(f"shardcheck {__version__}")
        return 0
    if "--daemon" in argv or os.environ.get("SHARDCHECK_DAEMON"):
        from shardcheck.integrations import daemon
        if daemon.wanted(argv, COMMANDS):
            served = daemon.forward(argv)
            if served is not None:
                return served
    return run(argv)


_PARSERS: list = []


def _jobs(text: str) -> int:
    """``-j``'s value for ``types`` and ``specs``: 1 to ``MAX_JOBS`` processes."""
    import argparse
    from shardcheck.check.command import MAX_JOBS
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    if not 1 <= n <= MAX_JOBS:
        raise argparse.ArgumentTypeError(f"must be from 1 to {MAX_JOBS}, got {n}")
    return n


def _parser() -> argparse.ArgumentParser:
    """The command line's parser, built once per process: the daemon would otherwise
    build it again for every request (5 ms). Parsing leaves it as it was."""
    if not _PARSERS:
        _PARSERS.append(build_parser())
    return _PARSERS[0]


def run(argv: List[str]) -> int:
    """The command line ``argv`` run in this process (the daemon's entry as well)."""
    parser = _parser()
    if not argv:
        parser.print_help()
        return 2
    first = next((a for a in argv if not a.startswith("-")), None)
    if first is not None and first not in COMMANDS and argv[0] not in ("-h", "--help", "--version"):
        argv = ["check"] + argv  # `shardcheck src/` means `shardcheck check src/`
    elif first is None and argv[0] not in ("-h", "--help", "--version"):
        argv = ["check"] + argv
    args = parser.parse_args(argv)
    # the daemon serves command lines: `daemon run` hands it this runner and its parser's
    # warm-up (integrations/ does not import the CLI that starts it)
    args.cli_run, args.cli_parser = run, _parser
    try:
        return args.func(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
