"""Findings in a project's YAML/JSON sharding configs (MaxText style): the config file
is read with the positions of its entries, so a finding points at the line to change.

A config variant names its base with ``base_config: "base.yml"`` (a path relative to the
file); what it sets replaces its base's value of that key, and
``override_logical_axis_rules`` replaces the base's rules of the names it lists. A
variant is checked as it is merged: its ``logical_axis_rules`` and ``data_sharding`` may
name only axes of its ``mesh_axes``. Each finding is reported in the file that wrote
the value to change: a rule naming an axis no ``mesh_axes`` has, at the rule; a variant
whose own ``mesh_axes`` drops an axis the inherited rules use, at its ``mesh_axes``
(the rule noted). ``config-mesh-axes`` (SC113) words them; its examples run under JAX.

Only this module reads configs for findings; it never imports JAX. A file that does not
parse, or that the limits of ``config_data`` refuse, has no findings here (discovery and
``[tool.shardcheck.logical]`` say why where they read it).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from .config_data import MAX_BYTES, Refused, expanded_size
from .ftypes import WARNING, Finding, Related

CODE, NAME = "SC113", "config-mesh-axes"
# the top-level keys that make a YAML/JSON file a sharding config worth checking
KEYS = ("mesh_axes", "logical_axis_rules", "override_logical_axis_rules", "data_sharding")
_MAX_BASES = 8  # base_config hops followed from one variant


@dataclass
class ConfigDoc:
    """One config file: its top-level entries as (key node, value node), and its base."""

    path: str
    lines: List[str]
    entries: Dict[str, Tuple[Any, Any]] = field(default_factory=dict)
    base: Optional["ConfigDoc"] = None

    def get(self, key: str) -> Optional[Tuple["ConfigDoc", Any, Any]]:
        """(the file that sets ``key``, its key node, its value node): this file's, else
        its bases' nearest."""
        doc: Optional[ConfigDoc] = self
        while doc is not None:
            if key in doc.entries:
                return (doc,) + doc.entries[key]
            doc = doc.base
        return None


def looks_like_sharding_config(text: str) -> bool:
    """Whether a YAML/JSON file's text may hold a sharding config (a cheap test)."""
    return any(k in text for k in KEYS)


def read(path: str, text: Optional[str] = None, depth: int = 0,
         opened: Optional[List[str]] = None) -> Optional[ConfigDoc]:
    """The config at ``path`` (its text given, or read) with its ``base_config`` chain;
    None where it does not parse, is refused, or is not a mapping. ``opened``: each
    file read from disk is added to it."""
    import yaml
    if text is None:
        if opened is not None:
            opened.append(path)
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read(MAX_BYTES + 1)
        except (OSError, UnicodeDecodeError):
            return None
    if len(text) > MAX_BYTES:
        return None
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
    try:
        root = loader.get_single_node()
        if root is None:
            return None
        expanded_size(root)
    except (yaml.YAMLError, Refused, RecursionError):
        return None
    finally:
        loader.dispose()
    if not isinstance(root, yaml.MappingNode):
        return None
    doc = ConfigDoc(path, text.splitlines())
    for k, v in root.value:
        if isinstance(k, yaml.ScalarNode) and isinstance(k.value, str):
            doc.entries.setdefault(k.value, (k, v))
    base = doc.entries.get("base_config")
    if base is not None and isinstance(base[1], yaml.ScalarNode) and depth < _MAX_BASES:
        name = str(base[1].value)
        base_path = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(path)), name))
        if name and os.path.isfile(base_path) and os.path.abspath(base_path) != os.path.abspath(path):
            doc.base = read(base_path, None, depth + 1, opened)
    return doc


def _strings(node: Any) -> Optional[List[Any]]:
    """The scalar nodes of a list of names (one level); None where it is not one."""
    import yaml
    if not isinstance(node, yaml.SequenceNode):
        return None
    out = []
    for item in node.value:
        if not isinstance(item, yaml.ScalarNode) or item.tag != "tag:yaml.org,2002:str":
            return None
        out.append(item)
    return out


def string_lists(paths: List[str], opened: Optional[List[str]] = None
                 ) -> Dict[str, List[Tuple[str, List[str]]]]:
    """Each top-level key of the configs ``paths`` whose value is a list of strings, with
    each config's value for it as the config is merged (its own, else its bases'):
    ``mesh_axes`` -> (each config, the axes a run under it has). ``opened``: each file
    read (the configs, and the bases they name) is added to it."""
    out: Dict[str, List[Tuple[str, List[str]]]] = {}
    for path in dict.fromkeys(paths):
        doc = read(path, opened=opened)
        if doc is None:
            continue
        keys: List[str] = []
        chain: Optional[ConfigDoc] = doc
        while chain is not None:
            keys += [k for k in chain.entries if k not in keys]
            chain = chain.base
        for key in keys:
            got = doc.get(key)
            nodes = _strings(got[2]) if got is not None else None
            if nodes is not None:
                out.setdefault(key, []).append((path, [n.value for n in nodes]))
    return out


def _rule_axes(entry: Any) -> Optional[Tuple[Any, List[Any]]]:
    """A rule ``[name, axis]`` / ``[name, [axes]]`` / ``[name, null]``: (the name's node,
    the axis nodes); None where the entry is not one."""
    import yaml
    if not isinstance(entry, yaml.SequenceNode) or len(entry.value) != 2:
        return None
    name, axes = entry.value
    if not isinstance(name, yaml.ScalarNode) or name.tag != "tag:yaml.org,2002:str":
        return None
    if isinstance(axes, yaml.ScalarNode):
        if axes.tag == "tag:yaml.org,2002:null":
            return name, []
        return (name, [axes]) if axes.tag == "tag:yaml.org,2002:str" else None
    listed = _strings(axes)
    return (name, listed) if listed is not None else None


def _where(doc: ConfigDoc, node: Any) -> Tuple[int, int, int, int]:
    s, e = node.start_mark, node.end_mark
    return s.line + 1, s.column + 1, e.line + 1, e.column + 1


def _shown(doc: ConfigDoc, other: ConfigDoc, node: Any) -> str:
    line = node.start_mark.line + 1
    if other is doc:
        return f"line {line}"
    return f"{os.path.basename(other.path)}, line {line}"


def _suppressed(doc: ConfigDoc, row: int) -> bool:
    line = doc.lines[row - 1] if 0 < row <= len(doc.lines) else ""
    if "#" not in line:
        return False
    comment = line[line.index("#"):]
    if "shardcheck: ignore" in comment:
        return "[" not in comment or CODE in comment or NAME in comment
    return "noqa" in comment and CODE in comment


def check(path: str, text: Optional[str] = None, filename: Optional[str] = None,
          used: Optional[Dict[str, List[Tuple[str, int, int]]]] = None) -> List[Finding]:
    """The findings of the config file ``path`` (``text``: its content, else read);
    ``filename``: the name findings carry (default ``path``); ``used``: the logical
    names the project's code writes (``logical_names_used``), each with where."""
    doc = read(path, text)
    if doc is None:
        return []
    shown = filename or path
    out: List[Finding] = []

    def report(node: Any, message: str, related: Tuple[Tuple[ConfigDoc, Any, str], ...] = (),
               code_related: Tuple[Tuple[str, Tuple[str, int, int]], ...] = ()) -> None:
        row, col, end_row, end_col = _where(doc, node)
        if _suppressed(doc, row):
            return
        rel = tuple(Related(note, shown if d is doc else d.path, *_where(d, n)) for d, n, note in related)
        rel += tuple(Related(note, p, r, c, r, c) for note, (p, r, c) in code_related)
        out.append(Finding(CODE, NAME, message, WARNING, shown, row, col, end_row, end_col,
                           related=rel))

    mesh = doc.get("mesh_axes")
    axes_nodes = _strings(mesh[2]) if mesh is not None else None
    if mesh is None or axes_nodes is None:
        _check_rule_shapes(doc, report)
        if used:
            _check_unmapped(doc, [], used, report)
        return out
    mesh_doc, mesh_key, _ = mesh
    axes = [n.value for n in axes_nodes]
    if mesh_doc is doc:
        seen: Dict[str, Any] = {}
        for n in axes_nodes:
            if n.value in seen:
                report(n, f"mesh axis {n.value!r} is listed twice in `mesh_axes`: a mesh built from "
                       "it is rejected (`jax.make_mesh` and `Mesh` raise on repeated axis names). "
                       "List each axis once.", ((doc, seen[n.value], "listed first here"),))
            seen.setdefault(n.value, n)
    _check_rule_shapes(doc, report)
    where_mesh = _shown(doc, mesh_doc, mesh_key)
    missing_from_mine: Dict[str, List[Tuple[ConfigDoc, Any, str]]] = {}  # axis -> (doc, node, name)
    for key in ("logical_axis_rules", "override_logical_axis_rules"):
        got = doc.get(key)
        if got is None or not hasattr(got[2], "value") or not isinstance(got[2].value, list):
            continue
        rules_doc, _, table = got
        for entry in table.value:
            rule = _rule_axes(entry)
            if rule is None:
                continue
            name, axis_nodes = rule
            for a in axis_nodes:
                if a.value in axes:
                    continue
                if rules_doc is doc:
                    report(a, f"the logical axis rule {name.value!r} -> {a.value!r} names a mesh "
                           f"axis `mesh_axes` ({where_mesh}) does not have: {_axes(axes)}. Where "
                           f"the code uses {name.value!r}, the sharding names {a.value!r} and JAX "
                           "raises ValueError (\"Resource axis: ... is not found in mesh\"). Map it "
                           "to an axis of the mesh, or add the axis to `mesh_axes`.",
                           ((mesh_doc, mesh_key, "the mesh axes"),) if mesh_doc is not doc else ())
                elif mesh_doc is doc and a.value in _own_axes(rules_doc):
                    # the variant dropped an axis its base has (an axis no mesh_axes has
                    # is reported at the rule, in the base)
                    missing_from_mine.setdefault(a.value, []).append((rules_doc, a, name.value))
    for axis, uses in missing_from_mine.items():
        first_doc = uses[0][0]
        names = ", ".join(repr(n) for _, _, n in uses)
        report(mesh_key, f"`mesh_axes` of this config lacks {axis!r}, which the logical axis rules "
               f"it inherits from {os.path.basename(first_doc.path)} map {names} to: where the "
               f"code uses {'that name' if len(uses) == 1 else 'those names'}, the sharding names "
               f"{axis!r} and JAX raises ValueError (\"Resource axis: ... is not found in mesh\"). "
               "Add the axis, or override those rules in this config.",
               tuple((d, n, f"the rule {name!r} -> {axis!r}") for d, n, name in uses[:3]))
    ds = doc.get("data_sharding")
    if ds is not None and (ds[0] is doc or mesh_doc is doc):
        ds_doc, ds_key, ds_value = ds
        for n in _nested_strings(ds_value):
            if n.value in axes:
                continue
            if ds_doc is doc:
                report(n, f"`data_sharding` names {n.value!r}, which `mesh_axes` ({where_mesh}) does "
                       f"not have: {_axes(axes)}. The batch's sharding names it and JAX raises "
                       "ValueError (\"Resource axis: ... is not found in mesh\"). Name an axis of "
                       "the mesh.", ((mesh_doc, mesh_key, "the mesh axes"),) if mesh_doc is not doc
                       else ())
            elif n.value in _own_axes(ds_doc):
                report(mesh_key, f"`mesh_axes` of this config lacks {n.value!r}, which the "
                       f"`data_sharding` it inherits from {os.path.basename(ds_doc.path)} names: "
                       "the batch's sharding names it and JAX raises ValueError (\"Resource axis: "
                       "... is not found in mesh\"). Add the axis, or set `data_sharding` here.",
                       ((ds_doc, n, "the data_sharding entry"),))
    _check_mesh_shapes(doc, axes, mesh_doc, mesh_key, report)
    if used:
        _check_unmapped(doc, axes, used, report)
    out.sort(key=lambda f: (f.row, f.column))
    return out


# the lists of mesh sizes a config writes beside `mesh_axes`, one size per axis
SHAPE_KEYS = ("ici_mesh_shape", "dcn_mesh_shape", "ici_parallelism", "dcn_parallelism",
              "mesh_shape")


def _check_mesh_shapes(doc: ConfigDoc, axes: List[str], mesh_doc: ConfigDoc, mesh_key: Any,
                       report: Any) -> None:
    """A list of mesh sizes whose length is not the number of `mesh_axes`: at the list
    where this file sets it, else at this file's `mesh_axes`."""
    import yaml
    for key in SHAPE_KEYS:
        got = doc.get(key)
        if got is None:
            continue
        shape_doc, shape_key, value = got
        if shape_doc is not doc and mesh_doc is not doc:
            continue  # reported where one of them is written
        if not isinstance(value, yaml.SequenceNode) or not all(
                isinstance(v, yaml.ScalarNode) and v.tag == "tag:yaml.org,2002:int"
                for v in value.value):
            continue
        if len(value.value) == len(axes):
            continue
        where_mesh = _shown(doc, mesh_doc, mesh_key)
        message = (f"`{key}` lists {len(value.value)} sizes, but `mesh_axes` ({where_mesh}) "
                   f"names {len(axes)} axes: {_axes(axes)}. The mesh is built from the two "
                   "side by side: `jax.make_mesh(shape, axes)` and `Mesh` raise ValueError "
                   "(\"Mesh requires the ndim of its first argument (`devices`) to equal the "
                   "length of its second argument (`axis_names`)\"), and sizes zipped with "
                   "the axes by hand size the wrong axes. List one size per axis, in "
                   "`mesh_axes`' order.")
        if shape_doc is doc:
            report(value, message, ((mesh_doc, mesh_key, "the mesh axes"),)
                   if mesh_doc is not doc else ())
        else:
            report(mesh_key, message, ((shape_doc, shape_key, f"the `{key}` it inherits"),))


def _mapped_names(doc: ConfigDoc) -> Dict[str, Any]:
    """The logical names the rules in force in ``doc`` map (its own or its bases', with
    its overrides)."""
    names: Dict[str, Any] = {}
    for key in ("logical_axis_rules", "override_logical_axis_rules"):
        got = doc.get(key)
        for entry in (got[2].value if got is not None and isinstance(getattr(got[2], "value", None),
                                                                     list) else []):
            rule = _rule_axes(entry)
            if rule is not None:
                names.setdefault(rule[0].value, rule[0])
    return names


def _check_unmapped(doc: ConfigDoc, axes: List[str], used: Dict[str, List[Tuple[str, int, int]]],
                    report: Any) -> None:
    """A variant that replaces its base's rule table wholesale and so maps none of some
    logical names its base maps and the code uses: Linen leaves such a dim replicated,
    silently; NNX reads the name as a mesh axis, which the mesh lacks. One finding per
    table, at its key. (A name no config maps may be replicated on purpose: Linen's
    rule for an unmatched name; not reported.)"""
    own = doc.entries.get("logical_axis_rules")
    if own is None or doc.base is None or not isinstance(getattr(own[1], "value", None), list):
        return
    mapped, inherited = _mapped_names(doc), _mapped_names(doc.base)
    missing = sorted(n for n in used if n in inherited and n not in mapped and n not in axes)
    if not missing:
        return
    key = own[0]
    shown = ", ".join(repr(n) for n in missing[:6]) + (f" and {len(missing) - 6} more"
                                                       if len(missing) > 6 else "")
    related = tuple((f"{n!r} is used here", used[n][0]) for n in missing[:3])
    report(key, f"the logical axis rules of this config replace those of "
           f"{os.path.basename(doc.base.path)} and map no rule for {shown}, which that file maps "
           f"and the code uses: Flax Linen leaves such a dim replicated without a word (each device "
           f"holds it whole), and Flax NNX reads the name as a mesh axis, which `mesh_axes` lacks "
           f"(ValueError). Add a rule for each (`['{missing[0]}', ...]`), or `None` to replicate "
           "on purpose.", code_related=related)


# Flax's logical-name APIs: the call's last name -> (position, keyword) of the names
_NAME_ARGUMENTS = {
    "with_logical_constraint": (1, "logical_axis_resources"),
    "with_logical_partitioning": (1, "names"),
    "logical_to_mesh_axes": (0, "array_dim_names"),
    "param_with_axes": (None, "axes"),
    "variable_with_axes": (None, "axes"),
    "with_partitioning": (1, "sharding"),
}


def logical_names_used(paths: List[str]) -> Dict[str, List[Tuple[str, int, int]]]:
    """The logical axis names the Python files ``paths`` write in Flax's logical-name
    APIs (a literal tuple or list of strings), each with the places it is written."""
    import ast
    from .pyast import char_column, parse
    out: Dict[str, List[Tuple[str, int, int]]] = {}
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read(MAX_BYTES * 4)
        except (OSError, UnicodeDecodeError):
            continue
        if "logical" not in text and "with_partitioning" not in text and "_with_axes" not in text:
            continue
        parsed = parse(text)
        if parsed is None:
            continue
        for node in ast.walk(parsed.tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else \
                func.id if isinstance(func, ast.Name) else None
            where = _NAME_ARGUMENTS.get(name or "")
            if where is None:
                continue
            position, keyword = where
            arg = next((k.value for k in node.keywords if k.arg == keyword), None)
            if arg is None and position is not None and len(node.args) > position:
                arg = node.args[position]
            if not isinstance(arg, (ast.Tuple, ast.List)):
                continue
            for item in arg.elts:
                if isinstance(item, ast.Constant) and isinstance(item.value, str):
                    out.setdefault(item.value, []).append(
                        (path, item.lineno, char_column(text, item.lineno, item.col_offset)))
    return out


def _check_rule_shapes(doc: ConfigDoc, report: Any) -> None:
    """Entries of this file's rule tables that are no ``[name, axis or axes]`` pair."""
    for key in ("logical_axis_rules", "override_logical_axis_rules"):
        got = doc.entries.get(key)
        if got is None or not isinstance(getattr(got[1], "value", None), list):
            continue
        for entry in got[1].value:
            if _rule_axes(entry) is None:
                report(entry, f"this entry of `{key}` is not a [logical name, mesh axis or list "
                       "of mesh axes] pair: Flax unpacks each rule into a name and its axes "
                       "(`for name, axes in rules`) and raises where the code resolves a logical "
                       "name. Write it as `['name', 'axis']` or `['name', ['axis', ...]]`.")


def _own_axes(doc: ConfigDoc) -> List[str]:
    """The mesh axes in force where ``doc`` is read alone (its own or its bases')."""
    got = doc.get("mesh_axes")
    listed = _strings(got[2]) if got is not None else None
    return [n.value for n in listed] if listed is not None else []


def _nested_strings(node: Any) -> List[Any]:
    import yaml
    if isinstance(node, yaml.ScalarNode):
        return [node] if node.tag == "tag:yaml.org,2002:str" else []
    if isinstance(node, yaml.SequenceNode):
        return [s for item in node.value for s in _nested_strings(item)]
    return []


def _axes(axes: List[str]) -> str:
    return "(" + ", ".join(repr(a) for a in axes) + ")"
