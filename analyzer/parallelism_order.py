"""Mesh sizes listed in another order than the axes they size (``parallelism-order``,
SC115).

MaxText-style code builds a mesh from two lists the project keeps apart: the sizes,
a list of config fields named after their axes (``[config.ici_data_parallelism,
config.ici_fsdp_parallelism, config.ici_tensor_parallelism]``), and the axis names,
``config.mesh_axes`` (a YAML config's ``mesh_axes``, a config class's default). The
mesh takes them side by side: where the list names the same axes in another order, each
axis gets another's size. Nothing raises when the sizes multiply to the device count:
the program trains with the wrong parallelism.

A list is compared with every value the project's YAML/JSON configs give ``mesh_axes``
and, where every value the code writes for it is known (``project_names.Resolver.field``),
those too, that names exactly its axes; a value with other axes is for another branch of
the code (a config without the context axis) and is not compared. Python's ``ast`` only; never JAX.
"""

from __future__ import annotations

import ast
import re
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from .codes import PARALLELISM_ORDER
from .ftypes import WARNING, Finding
from .project_names import (ConfigValues, Module, Resolver, distinct_paths, read_text,
                            related_place, shown_place)
from .pyast import char_column, parse

CODE, NAME = PARALLELISM_ORDER, "parallelism-order"

_SIZE_FIELD = re.compile(r"^(?:ici_|dcn_)?(\w+?)_parallelism$")
_LIST_OF_SIZES = re.compile(r"_parallelism\b")


def _size_lists(m: Module) -> List[Tuple[ast.expr, List[str]]]:
    """Each list (or tuple) literal of two or more config fields named
    ``<ici_|dcn_><axis>_parallelism``, with the axes it names in order."""
    out: List[Tuple[ast.expr, List[str]]] = []
    for node in ast.walk(m.tree):
        if not isinstance(node, (ast.List, ast.Tuple)) or len(node.elts) < 2:
            continue
        axes = []
        for e in node.elts:
            match = _SIZE_FIELD.match(e.attr) if isinstance(e, ast.Attribute) else None
            if match is None:
                break
            axes.append(match.group(1))
        else:
            if len(set(axes)) == len(axes):
                out.append((node, axes))
    return out


def check(report_paths: Sequence[str], project_paths: Sequence[str],
          overlay: Optional[Mapping[str, bytes]] = None,
          config_values: Optional[ConfigValues] = None) -> List[Finding]:
    """The SC115 findings of the files ``report_paths``: a list of sizes whose axes are
    those of a ``mesh_axes`` the project writes, in another order."""
    texts: Dict[str, str] = {}
    lists: List[Tuple[Module, ast.expr, List[str]]] = []
    for path in report_paths:
        text = read_text(path, overlay)
        if text is None or not _LIST_OF_SIZES.search(text):
            continue
        parsed = parse(text)
        if parsed is None:
            continue
        m = Module(path, text, parsed.tree, set())
        lists += [(m, node, axes) for node, axes in _size_lists(m)]
    if not lists:
        return []
    for path in distinct_paths(list(project_paths) + list(report_paths)):
        if path.endswith(".py"):
            text = read_text(path, overlay)
            if text is not None:
                texts[path] = text
    # the configs' values, and the code's where every one it writes is known: a value not
    # known (a cache key built from a mesh's names) does not make another one's order right
    values = list((config_values or {}).get("mesh_axes", []))
    resolver = Resolver(texts, set(), config_values)
    if resolver.field("mesh_axes") is not None:
        values = resolver.field_values.get("mesh_axes", [])
    out: List[Finding] = []
    for m, node, axes in lists:
        other = [(where, names) for where, names in values
                 if sorted(names) == sorted(axes) and names != axes]
        if other:
            out.append(_finding(m, node, axes, other))
    return out


def _finding(m: Module, node: ast.expr, axes: List[str],
             other: List[Tuple[str, List[str]]]) -> Finding:
    where, names = other[0]
    shown = shown_place(where)
    more = f" (and {len(other) - 1} more)" if len(other) > 1 else ""
    swapped = [f"{a!r} gets the size of {b!r}" for a, b in zip(names, axes) if a != b]
    message = (f"these mesh sizes are listed in the order {tuple(axes)}, but `mesh_axes` at "
               f"{shown}{more} orders the same axes {tuple(names)}: the mesh takes the two "
               f"side by side, so {', '.join(swapped[:3])}. Nothing raises while the sizes "
               "multiply to the device count; the program runs with the wrong parallelism. "
               "List the sizes in `mesh_axes`' order (or reorder `mesh_axes`).")
    related = tuple(related_place(w, "the mesh axes") for w, _ in other[:3])
    end_row = node.end_lineno or node.lineno
    end_col = node.end_col_offset if node.end_col_offset is not None else node.col_offset
    return Finding(CODE, NAME, message, WARNING, m.path, node.lineno,
                   char_column(m.text, node.lineno, node.col_offset), end_row,
                   char_column(m.text, end_row, end_col), related=related)
