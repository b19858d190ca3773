"""``shardcheck daemon start|stop|status|restart|run`` and ``shardcheck server``."""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse


def add_daemon_parser(sub) -> None:
    import argparse
    d = sub.add_parser("daemon", help="start, stop or query the background process that "
                                      "`check --daemon` runs in")
    d.add_argument("action", choices=("start", "stop", "status", "restart", "run"),
                   help="run: serve in the foreground (what `start` spawns)")
    d.add_argument("--idle-timeout", type=float, default=None, metavar="SECONDS",
                   help="exit after this long with no request (default 1800; 0: never)")
    d.add_argument("--socket", metavar="PATH", help=argparse.SUPPRESS)
    d.set_defaults(func=daemon_command)


def daemon_command(args: argparse.Namespace) -> int:
    from shardcheck.integrations import daemon
    path = args.socket or daemon.socket_path()
    if path is None:
        print("shardcheck: no daemon here: this platform has no Unix sockets, or no private "
              "directory for them (set SHARDCHECK_DAEMON_DIR to one only you can write)",
              file=sys.stderr)
        return 2
    idle = daemon.IDLE_TIMEOUT if args.idle_timeout is None else args.idle_timeout
    from shardcheck.check.config import ConfigError, parse_seconds
    try:
        idle = parse_seconds(idle, "--idle-timeout")
    except ConfigError as e:
        print(f"shardcheck: {e}", file=sys.stderr)
        return 2
    if args.action == "run":
        from shardcheck.integrations.daemon_serve import serve
        return serve(path, idle, run_argv=args.cli_run, warm=args.cli_parser)
    if args.action in ("stop", "restart"):
        stopped = daemon.stop(path)
        if args.action == "stop":
            print({"stopped": "stopped", "killed": "stopped (it did not answer: its processes "
                   "were ended)"}.get(stopped or "", "no daemon was running"))
            return 0
    if args.action in ("start", "restart"):
        running = daemon.status(path)
        if running is not None:
            print(f"already running (pid {running['pid']})")
            return 0
        wedged = daemon.holder(path)
        if wedged is not None:
            print(f"shardcheck: {_not_answering(wedged)}; `shardcheck daemon stop` ends it",
                  file=sys.stderr)
            return 2
        pid = daemon.start(path, wait=True, idle_timeout=idle)
        if pid is None:
            print(f"shardcheck: the daemon did not start; see {daemon.sibling(path, '.log')}",
                  file=sys.stderr)
            return 2
        print(f"started (pid {pid}, socket {path})")
        return 0
    info = daemon.status(path)
    if info is None:
        wedged = daemon.holder(path)
        if wedged is None:
            print("not running")
            return 3
        print(f"{_not_answering(wedged)}: busy with a long run, stopped or wedged; "
              "`shardcheck daemon stop` ends it")
        return 1
    import time
    print(f"running: pid {info['pid']}, shardcheck {info['version']} on {info['python']}, "
          f"up {time.time() - info['started']:.0f} s, {info['served']} run(s) served, "
          f"socket {path}")
    return 0


def _not_answering(pid: int) -> str:
    who = f"pid {pid}" if pid > 0 else "a process"
    return f"not answering: the daemon ({who}) holds its socket but did not answer in 5 s"


def server_command(args: argparse.Namespace) -> int:
    from shardcheck.integrations import server
    return server.run()
