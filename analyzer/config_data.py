"""YAML and JSON config files read within limits: a config is data from the project, and
a check must not hang or run out of memory on one.

A 600-byte YAML file of nested aliases ("billion laughs") expands to a billion nodes
when walked; PyYAML builds it as shared references, so the load is quick and the walk
that follows (the rule table, the literal fields) is what took a minute and gigabytes.
So a YAML document is composed first, and the size it would have once its aliases are
expanded is counted on that graph (each node once, its expanded size remembered)
before anything is built from it. An alias that refers to itself, nesting too deep to
compose, and a file larger than ``MAX_BYTES`` are refused the same way.
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Optional, Tuple

MAX_BYTES = 1 << 20  # 1 MiB: MaxText's largest config is about 40 KiB
MAX_NODES = 100_000  # nodes once aliases are expanded: a large config has a few thousand
_SCAN_BYTES = 8 << 20  # how far an oversized file is searched for a key, at most
_PARSE_ABOVE = 64 << 10  # a file without aliases is parsed for ``refusal`` only past this


class Refused(ValueError):
    """A config file the limits refuse; the message says why, for a user."""


def load(text: str, name: str) -> Any:
    """The data of a YAML (or, by ``name``, JSON) file's ``text``; ``Refused`` past a
    limit, the parser's own error for text that does not parse."""
    if len(text) > MAX_BYTES:
        raise Refused(f"it is larger than {MAX_BYTES >> 20} MiB")
    if name.endswith(".json"):
        try:
            return json.loads(text)
        except RecursionError:
            raise Refused("it is nested too deeply to read") from None
    return _load_yaml(text)


def _load_yaml(text: str) -> Any:
    import yaml
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
    try:
        try:
            node = loader.get_single_node()
        except RecursionError:
            raise Refused("it is nested too deeply to read") from None
        if node is None:
            return None
        expanded_size(node)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def expanded_size(root: Any) -> int:
    """The number of nodes of a composed YAML graph with every alias expanded;
    ``Refused`` once past ``MAX_NODES`` or on an alias to a node that holds it."""
    sizes: Dict[int, int] = {}
    open_: set = set()  # the nodes on the path from the root (a cycle returns to one)
    todo: List[Tuple[Any, bool]] = [(root, False)]
    while todo:
        node, finished = todo.pop()
        key = id(node)
        kids = _children(node)
        if finished:
            open_.discard(key)
            total = 1 + sum(sizes[id(k)] for k in kids)
            if total > MAX_NODES:
                raise Refused(f"its aliases expand it past {MAX_NODES:,} nodes (a YAML alias "
                              "bomb?)")
            sizes[key] = total
            continue
        if key in sizes:
            continue
        if key in open_:
            raise Refused("a YAML alias in it refers to a node that holds it")
        open_.add(key)
        todo.append((node, True))
        todo.extend((k, False) for k in kids if id(k) not in sizes)
    return sizes[id(root)]


def _children(node: Any) -> List[Any]:
    value = getattr(node, "value", None)
    if not isinstance(value, list):
        return []  # a scalar
    out: List[Any] = []
    for item in value:
        if isinstance(item, tuple):  # a mapping's (key, value)
            out.extend(item)
        else:
            out.append(item)
    return out


def refusal(path: str, key: str) -> Optional[str]:
    """Why the limits refuse the config file ``path`` that holds ``key`` (None when
    they do not, or it holds no ``key``): what discovery passes over, said once so
    the user knows a config was not read. Cheap for the usual file: only one with an
    alias, or over the size limit, is parsed or searched."""
    try:
        data = _head(path, _SCAN_BYTES)
    except OSError:
        return None
    if data is None:
        return None  # not a regular file: a FIFO named like a config is never opened to read
    if len(data) > MAX_BYTES:
        return f"it is larger than {MAX_BYTES >> 20} MiB" if key.encode() in data else None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if key not in text or (("*" not in text or "&" not in text) and len(text) < _PARSE_ABOVE):
        # no alias (an alias needs an `&` anchor; a `*` alone is a comment's
        # `num_heads * head_dim`, as in each of maxdiffusion's configs), and small:
        # nothing in it can be past the limits
        return None
    try:
        load(text, path)
    except Refused as e:
        return str(e)
    except Exception:  # does not parse: discovery passes over it, as over any such file
        return None
    return None


def _head(path: str, limit: int) -> Optional[bytes]:
    """The first ``limit`` bytes of the regular file ``path`` (None for anything else:
    opened non-blocking and checked with ``fstat``, so a FIFO never blocks)."""
    import stat
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks, left = [], limit
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)
