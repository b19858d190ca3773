"""One file's analysis for the commands that list what it finds (``types``, ``specs``)."""

from __future__ import annotations

import sys
from typing import Any, Callable, Optional


def analysed(fn: Callable[..., Any], path: str, cfg: Any, project: Any) -> Optional[Any]:
    """``fn(source, path, cfg, project)`` for ``path``; None after saying on stderr why
    the file was not analysed (unreadable, past the limits, it does not parse, or an
    internal error)."""
    from shardcheck.analyzer.engine import NotAnalysed
    from shardcheck.analyzer.sources import Unreadable, read_source
    try:
        return fn(read_source(path), path, cfg, project)
    except (Unreadable, NotAnalysed) as e:
        print(f"{path}: not analysed: {e}", file=sys.stderr)
    except SyntaxError as e:
        msg = str(e.msg or e)  # ours start "this file ...", Python's do not
        shown = msg if msg.startswith("this file") else f"does not parse: {msg}"
        print(f"{path}: {shown}".splitlines()[0], file=sys.stderr)
    except Exception as e:  # a bug of shardcheck's: said, and the other files still run
        print(f"{path}: not analysed: internal error ({type(e).__name__}: {e}); please "
              "report it with this file".splitlines()[0], file=sys.stderr)
    return None
