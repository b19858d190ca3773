"""Arguments of a kind a sharding API does not take, where the value shows it.

Each check is what JAX 0.10.2 to 0.12 reject when the call runs (``wrong-argument-kind``,
SC311, words them; ``tests/analyzer/test_compat.py`` raises each):

- ``NamedSharding(mesh, spec)``: a ``mesh`` that is a ``PartitionSpec`` (the arguments
  swapped), the array of devices ``create_device_mesh`` returns, a list, ``None``;
  a ``spec`` that is a tuple or string of axis names, a list, ``None``, a sharding;
- ``jax.make_mesh(sizes, ...)``, ``create_device_mesh(shape)``, ``AbstractMesh(sizes,
  ...)``: an int where a shape goes (``(8,)``); ``Mesh(devices, ...)`` given a number;
- ``jax.jit``'s ``in_shardings``/``out_shardings`` and ``with_sharding_constraint``'s
  shardings: a leaf that is no sharding, spec or ``None`` (a ``PyTreeDef`` from
  ``tree_flatten``, the ints of a tree of shapes, arrays, a mesh, axis-name strings);
  JAX checks them when ``jax.jit`` is called, before any call of the jitted function;
- ``jax.device_put(x, device)``: a leaf of ``device`` that is a number, a string or a mesh;
- a mesh's ``axis_types``: anything but a tuple of ``AxisType``s (strings such as
  ``"explicit"``, a list, ``None`` inside), or a tuple whose length is not the number of
  axis names (one ``AxisType`` alone is a tuple of one: it fits one axis only).

Only a value known to be of the wrong kind counts: anything unknown passes.
"""

from __future__ import annotations

from typing import Any, Dict, FrozenSet, List, Optional, Tuple

import libcst as cst

from ..facts import WrongArgumentKind
from ..syntax import bound_once, dotted, enclosing_scope, small_statements, target_names
from ..values import (UNKNOWN, ArrayVal, Const, DictVal, MeshVal, QualName, ShardingVal, SpecVal,
                      TupleVal, Value)
from ..api import ApiCall, ApiContext
from .literals import literals_of
from .pytrees import PyTreeNodeVal, TreeDefVal


def describe(v: Value) -> Optional[str]:
    """What ``v`` is, for a message; None where the analyzer cannot say."""
    if isinstance(v, Const):
        x = v.value
        if x is None:
            return "None"
        if isinstance(x, bool):
            return f"the bool {x}"
        if isinstance(x, (int, float)):
            return f"the {type(x).__name__} {x}"
        if isinstance(x, str):
            return f"the string {x!r}"
        return None
    if isinstance(v, SpecVal):
        return "a PartitionSpec"
    if isinstance(v, ShardingVal):
        return "a NamedSharding"
    if isinstance(v, MeshVal):
        return "a mesh"
    if isinstance(v, TreeDefVal):
        return "a PyTreeDef (the structure `tree_flatten` returns beside the leaves)"
    if isinstance(v, ArrayVal):
        shape = v.shape
        if shape is not None and None not in shape:
            return f"an array of shape {tuple(shape)}"
        return "an array"
    if isinstance(v, TupleVal):
        return "a list" if v.is_list else "a tuple"
    if isinstance(v, DictVal):
        return "a dict"
    return None


def check_mesh(it: ApiContext, c: ApiCall, v: Value, node: Optional[cst.CSTNode]) -> bool:
    """``NamedSharding``'s first argument: a mesh (``Mesh`` or ``AbstractMesh``). Each
    check returns whether it proved the argument wrong (JAX raised: no value follows)."""
    got = None if isinstance(v, MeshVal) else describe(v)
    if got is not None:
        it.prove(WrongArgumentKind("mesh", c.short, "mesh", got), node or c.node)
    return got is not None


def check_spec(it: ApiContext, c: ApiCall, v: Value, node: Optional[cst.CSTNode]) -> bool:
    """``NamedSharding``'s second argument: a ``PartitionSpec``."""
    got = None if isinstance(v, SpecVal) else describe(v)
    if got is not None:
        it.prove(WrongArgumentKind("spec", c.short, "spec", got), node or c.node)
    return got is not None


def check_shape(it: ApiContext, c: ApiCall, v: Value, node: Optional[cst.CSTNode],
                argument: str) -> bool:
    """A mesh's sizes: a sequence of ints, never one int."""
    if not (isinstance(v, Const) and isinstance(v.value, int) and not isinstance(v.value, bool)):
        return False
    it.prove(WrongArgumentKind("shape", c.short, argument, f"the int {v.value}"), node or c.node)
    return True


def check_devices(it: ApiContext, c: ApiCall, v: Value, node: Optional[cst.CSTNode],
                  names: Value = UNKNOWN) -> bool:
    """``Mesh``'s devices: an array (or nested sequence) of devices, never a number, with
    one dim per axis name (``names``): ``Mesh(jax.devices(), ("data", "model"))`` is a
    flat list for two names, and JAX raises the same ValueError for both."""
    wrong = isinstance(v, Const) and isinstance(v.value, (int, float)) \
        and not isinstance(v.value, bool)
    if wrong:
        it.prove(WrongArgumentKind("devices", c.short, "devices", describe(v) or "a number"),
                 node or c.node)
        return True
    rank = _devices_rank(it, c, v, node)
    count = len(names.items) if isinstance(names, TupleVal) and not any(
        isinstance(i, Const) and not isinstance(i.value, str) for i in names.items) else None
    if rank is not None and count is not None and rank != count:
        plural = "s" if count != 1 else ""
        it.prove(WrongArgumentKind(
            "devices", c.short, "devices",
            f"{rank}-dimensional for {count} axis name{plural}"), node or c.node)
        return True
    return False


def _devices_rank(it: ApiContext, c: ApiCall, v: Value,
                  node: Optional[cst.CSTNode]) -> Optional[int]:
    """How many dims ``Mesh``'s devices have: an array's known rank, or 1 for the list
    ``jax.devices()`` (``jax.local_devices()``) written as the argument."""
    if isinstance(v, ArrayVal):
        return len(v.shape) if v.shape is not None else None
    return 1 if is_device_list_call(it, c, node) else None


_DEVICE_LISTS = ("jax.devices", "jax.local_devices")


def is_device_list_call(it: ApiContext, c: ApiCall, node: Optional[cst.CSTNode]) -> bool:
    """Whether ``node``, an argument of ``c``, is the flat list of the devices: written
    ``jax.devices()`` (or ``jax.local_devices()``), or a name the function (or module)
    around the call binds to that once and in no other way (``devices =
    jax.devices()``; not a parameter, which a caller may give another value)."""
    def written(e: Optional[cst.CSTNode]) -> bool:
        if not isinstance(e, cst.Call) or e.args:
            return False
        func = it.ev(e.func, c.env, c.ctx)
        return isinstance(func, QualName) and it.profile.canonical(func.name) in _DEVICE_LISTS

    if isinstance(node, cst.Name):
        if node.value not in _device_list_names(it.module):
            return False
        scope = enclosing_scope(it.module, c.node)
        node = bound_once(scope, node.value, written) if scope is not None else None
    return written(node)


_NAMES_OF_DEVICE_LISTS: Dict[int, Tuple[cst.Module, FrozenSet[str]]] = {}


def _device_list_names(module: cst.Module) -> FrozenSet[str]:
    """The names some statement of ``module`` assigns a ``...devices()`` call to: one
    pass over its statements, kept per module, before a name is followed to its one
    binding (most modules have none, and following a name walks its function)."""
    kept = _NAMES_OF_DEVICE_LISTS.get(id(module))
    if kept is not None and kept[0] is module:
        return kept[1]
    names: set = set()
    for stmt in small_statements(module):
        if isinstance(stmt, cst.Assign) and isinstance(stmt.value, cst.Call) \
                and not stmt.value.args \
                and dotted(stmt.value.func).rsplit(".", 1)[-1] in ("devices", "local_devices"):
            names.update(n.value for t in stmt.targets for n in target_names(t.target))
    if len(_NAMES_OF_DEVICE_LISTS) >= 256:
        _NAMES_OF_DEVICE_LISTS.clear()
    _NAMES_OF_DEVICE_LISTS[id(module)] = (module, frozenset(names))
    return frozenset(names)


def check_axis_types(it: ApiContext, c: ApiCall, v: Value, node: Optional[cst.CSTNode],
                     names: Optional[Tuple[Optional[str], ...]]) -> bool:
    """A mesh's ``axis_types``: a tuple of ``AxisType``s, one per axis name (JAX makes
    anything but a tuple a tuple of one; a list or a string is then no ``AxisType``)."""
    items: Tuple[Value, ...] = v.items if isinstance(v, TupleVal) and not v.is_list else (v,)
    wrong = next((i for i in items if i is not UNKNOWN and not _is_axis_type(i)), None)
    if wrong is not None:
        if isinstance(v, TupleVal) and not v.is_list:
            got = f"a tuple holding {describe(wrong) or 'a value that is no AxisType'}"
        else:
            got = describe(v) or "no AxisType"
        it.prove(WrongArgumentKind("axis_types", c.short, "axis_types", got), node or c.node)
        return True
    if names is not None and not any(i is UNKNOWN for i in items) and len(items) != len(names):
        it.prove(WrongArgumentKind(
            "axis_types_count", c.short, "axis_types",
            f"{len(items)} axis type{'s' if len(items) != 1 else ''} for {len(names)} axis "
            f"name{'s' if len(names) != 1 else ''} {names}"), node or c.node)
        return True
    return False


def _is_axis_type(v: Value) -> bool:
    """Whether ``v`` may be an ``AxisType``: only a value of another kind the analysis
    knows (a constant, a tuple, a spec, ...) is not one; any importable name may be
    (``jax._src.mesh.AxisType.Explicit``, an alias of the enum or of a member)."""
    return not isinstance(v, (Const, TupleVal, DictVal, SpecVal, ShardingVal, MeshVal, ArrayVal,
                              TreeDefVal))


def _bad_sharding_leaf(v: Value, device_put: bool) -> bool:
    if isinstance(v, Const):
        return v.value is not None and (not device_put or isinstance(v.value, (int, float, str)))
    if device_put:
        return isinstance(v, (MeshVal, TreeDefVal))
    return isinstance(v, (ArrayVal, MeshVal, TreeDefVal))


def _wrong_leaves(it: ApiContext, tree: Value, node: Optional[cst.CSTNode], path: Tuple[Any, ...],
                  device_put: bool, out: List[Tuple[Tuple[Any, ...], Value, Optional[cst.CSTNode]]]
                  ) -> None:
    lits = literals_of(it.module)
    if isinstance(tree, TupleVal):
        for i, v in enumerate(tree.items):
            _wrong_leaves(it, v, lits.child(node, i), path + (i,), device_put, out)
    elif isinstance(tree, DictVal):
        for k, v in tree.items:
            _wrong_leaves(it, v, lits.child(node, k), path + (k,), device_put, out)
    elif isinstance(tree, PyTreeNodeVal):
        for k, v in tree.children:
            _wrong_leaves(it, v, None, path + (k,), device_put, out)
    elif tree is not UNKNOWN and _bad_sharding_leaf(tree, device_put):
        out.append((path, tree, node))


def check_shardings(it: ApiContext, c: ApiCall, tree: Value, node: Optional[cst.CSTNode],
                    argument: str, device_put: bool = False) -> bool:
    """A tree of shardings (jit's, ``with_sharding_constraint``'s, ``device_put``'s):
    each leaf a sharding, a spec or ``None`` (or, for ``device_put``, a device)."""
    found: List[Tuple[Tuple[Any, ...], Value, Optional[cst.CSTNode]]] = []
    _wrong_leaves(it, tree, node, (), device_put, found)
    if not found:
        return False
    path, leaf, at = found[0]
    shown = "".join(f"[{k!r}]" for k in path)
    it.prove(WrongArgumentKind("device_put" if device_put else "shardings", c.short, argument,
                               describe(leaf) or "a value", shown, len(found) - 1),
             at or node or c.node)
    return True
