"""Terminal output: colour for the text report and a progress display for long runs,
both through rich, imported only when a terminal will show them.

Colour follows the conventions of https://no-color.org and https://force-color.org:
``NO_COLOR`` (non-empty) turns it off, ``FORCE_COLOR`` (non-empty) turns it on even
when piped; otherwise it is on when the report goes to a terminal (not ``TERM=dumb``).
Progress shows on standard error when that is a terminal, outside CI, for runs of at
least ``PROGRESS_FROM`` files, and leaves nothing behind when done.
"""

from __future__ import annotations

import os
import re
from typing import IO, Callable, Mapping, Optional

PROGRESS_FROM = 20

_HEAD = re.compile(r"^(?P<where>\s*(?:\S.*?:)?\d+:\d+:) (?P<code>SC\d+)(?P<fix> \[\*\])? "
                   r"(?P<sev>error|warning):(?P<msg>.*?)(?P<name> \[[a-z0-9-]+\])?$")
_NOTE = re.compile(r"^(?P<where>\s*\S.*?:\d+:\d+:) note:(?P<msg>.*)$")
_GUTTER = re.compile(r"^(?P<gutter>\s*\d* \|)(?P<rest>.*)$")


def wants_colour(stream: IO[str], environ: Optional[Mapping[str, str]] = None) -> bool:
    env = os.environ if environ is None else environ
    if env.get("NO_COLOR"):
        return False
    if env.get("FORCE_COLOR"):
        return True
    if env.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def colour(report: str) -> str:
    """The text report with ANSI styles: severity and code coloured, locations bold,
    code frames' gutters and carets, notes and the summary."""
    from rich.console import Console
    from rich.text import Text
    console = Console(force_terminal=True, color_system="standard", no_color=False, width=1 << 16,
                      highlight=False, markup=False, emoji=False, soft_wrap=True)
    severity = "red"
    with console.capture() as cap:
        for line in report.split("\n"):
            console.print(_styled(Text, line, severity), end="\n")
            m = _HEAD.match(line)
            if m:
                severity = "red" if m.group("sev") == "error" else "yellow"
    return cap.get().rstrip("\n")


def _styled(Text, line: str, severity: str):
    m = _HEAD.match(line)
    if m:
        sev = "red" if m.group("sev") == "error" else "yellow"
        t = Text()
        t.append(m.group("where"), style="bold")
        t.append(" ")
        t.append(m.group("code"), style=f"bold {sev}")
        if m.group("fix"):
            t.append(m.group("fix"), style="cyan")
        t.append(" ")
        t.append(m.group("sev") + ":", style=f"bold {sev}")
        t.append(m.group("msg"))
        if m.group("name"):
            t.append(m.group("name"), style="dim")
        return t
    m = _NOTE.match(line)
    if m:
        return Text.assemble((m.group("where"), "bold"), " ", ("note:", "bold cyan"), m.group("msg"))
    m = _GUTTER.match(line)
    if m:
        rest = m.group("rest")
        caret = rest.strip() and set(rest.strip()) == {"^"}
        return Text.assemble((m.group("gutter"), "bold blue"), (rest, f"bold {severity}" if caret else ""))
    if line.endswith(":") and not line[:1].isspace():  # a file's name (grouped)
        return Text(line, style="bold underline")
    if line.startswith("All checks passed"):
        return Text(line, style="bold green")
    if line.startswith("Found "):
        return Text(line, style="bold")
    if line.startswith("[*]"):
        return Text.assemble(("[*]", "cyan"), line[3:])
    return Text(line)


def progress(total: int, stream: IO[str], environ: Optional[Mapping[str, str]] = None):
    """A context manager giving an ``update(done, total)`` callback: a rich progress bar
    on ``stream`` where that is a terminal outside CI and the run is long, else a no-op."""
    env = os.environ if environ is None else environ
    isatty = getattr(stream, "isatty", None)
    shown = total >= PROGRESS_FROM and bool(isatty and isatty()) and not env.get("CI") \
        and env.get("TERM") != "dumb"
    return _Progress(total, stream) if shown else _Quiet()


class _Quiet:
    def __enter__(self) -> Callable[[int, int], None]:
        return lambda done, total: None

    def __exit__(self, *exc) -> None:
        return None


class _Progress:
    def __init__(self, total: int, stream: IO[str]) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
        self.bar = Progress(TextColumn("checking"), BarColumn(), MofNCompleteColumn(),
                            TextColumn("files"), TimeElapsedColumn(),
                            console=Console(file=stream), transient=True)
        self.task = self.bar.add_task("check", total=total)

    def __enter__(self) -> Callable[[int, int], None]:
        self.bar.start()
        return lambda done, total: self.bar.update(self.task, completed=done, total=total)

    def __exit__(self, *exc) -> None:
        self.bar.stop()
