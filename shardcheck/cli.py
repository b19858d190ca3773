"""The ``shardcheck`` command. Thin: parse arguments, call the library, print, exit.

Exit codes: 0 fine, 1 findings (or an invalid type for ``parse``), 2 usage error.
"""

from __future__ import annotations

import argparse
import sys
from typing import List, Optional

from sharding_types import GRAMMAR, ShardingSyntaxError, __version__, parse


def _cmd_parse(args: argparse.Namespace) -> int:
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


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="shardcheck",
        description="An explicit-sharding type checker for JAX.",
        epilog="Sharding type syntax (as str(jax.typeof(x)) prints it):\n\n" + GRAMMAR,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"shardcheck {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    pp = sub.add_parser("parse", help="check sharding type strings and print them canonically")
    pp.add_argument("types", nargs="+", metavar="TYPE", help='e.g. "float32[8@data,16]"')
    pp.add_argument("-v", "--verbose", action="store_true", help="also print the parsed fields")
    pp.set_defaults(func=_cmd_parse)
    return p


def main(argv: Optional[List[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
