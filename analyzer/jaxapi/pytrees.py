"""Pytrees: ``jax.tree.map`` / ``jax.tree_util.tree_map`` over the containers the
analyzer follows, and the library's own pytree nodes (optax's state NamedTuples,
``flax.struct`` dataclasses such as ``TrainState``) as values whose structure is known.

JAX flattens a NamedTuple as a node of its own type with its fields as children, and a
``flax.struct.dataclass`` as a node whose children are its ``pytree_node=True`` fields and
whose static fields (``TrainState.apply_fn``, ``.tx``) are part of the tree's structure
(``jax/_src/tree_util.py``, ``flax/struct.py``). A NamedTuple is not a plain tuple to JAX:
``tree_map`` and ``jit``'s prefix check both compare the node types.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Tuple

import libcst as cst

from ..api import ApiCall, ApiContext, attribute_of, method_of, models
from ..events import MeshCtx
from ..interp.state import Arg
from ..values import (UNKNOWN, ArrayVal, Const, DictVal, FuncVal, JitVal, PartialVal, QualName,
                      ShardingVal, SpecVal, TupleVal, Value)

# Not the pre-check's vocabulary: tree utilities move values; they make no sharding
MAKES_SHARDINGS = False


@dataclass(frozen=True, eq=False)
class TreeDefVal(Value):
    """The ``PyTreeDef`` that ``jax.tree_util.tree_flatten`` returns beside the leaves:
    a tree's structure, not a tree of anything."""


@dataclass(frozen=True, eq=False)
class PyTreeNodeVal(Value):
    """A library object JAX flattens as a pytree node: ``kind`` names its type (JAX
    compares it), ``children`` its pytree fields in order, ``static`` its fields that
    belong to the structure (a struct dataclass's ``pytree_node=False`` fields).
    Every field is known to be there; a child's value may be unknown."""

    kind: str  # the class's qualified name: "optax.ScaleByAdamState"
    children: Tuple[Tuple[str, Value], ...]
    static: Tuple[Tuple[str, Value], ...] = ()

    @property
    def short(self) -> str:
        return self.kind.rsplit(".", 1)[-1]

    def field(self, name: str) -> Optional[Value]:
        for k, v in self.children + self.static:
            if k == name:
                return v
        return None

    def with_children(self, children: List[Value]) -> "PyTreeNodeVal":
        return PyTreeNodeVal(self.kind, tuple((k, v) for (k, _), v in zip(self.children, children)),
                             self.static)

    def replaced(self, changes: Dict[str, Value]) -> "PyTreeNodeVal":
        return PyTreeNodeVal(
            self.kind, tuple((k, changes.get(k, v)) for k, v in self.children),
            tuple((k, changes.get(k, v)) for k, v in self.static))


def same_node_type(a: Value, b: Value) -> bool:
    """Whether ``b`` is a node of ``a``'s type with the same fields (what JAX requires of
    two trees mapped together, static fields aside)."""
    return isinstance(a, PyTreeNodeVal) and isinstance(b, PyTreeNodeVal) and a.kind == b.kind \
        and [k for k, _ in a.children] == [k for k, _ in b.children]


def map_leaves(tree: Value, fn: Callable[[Value], Value]) -> Value:
    """``tree`` with ``fn`` applied to each leaf below the containers the analyzer
    follows (dicts, tuples and lists, pytree nodes); ``None`` is an empty subtree and an
    unknown subtree stays unknown."""
    if isinstance(tree, DictVal):
        return DictVal(tuple((k, map_leaves(v, fn)) for k, v in tree.items))
    if isinstance(tree, TupleVal):
        return TupleVal(tuple(map_leaves(v, fn) for v in tree.items), tree.is_list)
    if isinstance(tree, PyTreeNodeVal):
        return tree.with_children([map_leaves(v, fn) for _, v in tree.children])
    if tree is UNKNOWN or (isinstance(tree, Const) and tree.value is None):
        return tree
    return fn(tree)


def map_pairs(tree: Value, other: Value, fn: Callable[[Value, Value], Value]) -> Value:
    """``tree`` with ``fn(leaf, other's leaf)`` at each leaf, where ``other`` has
    ``tree``'s structure down to that leaf; ``fn(leaf, UNKNOWN)`` below where it does not."""
    if isinstance(tree, DictVal) and isinstance(other, DictVal) and \
            [k for k, _ in tree.items] == [k for k, _ in other.items]:
        return DictVal(tuple((k, map_pairs(v, w, fn))
                             for (k, v), (_, w) in zip(tree.items, other.items)))
    if isinstance(tree, TupleVal) and isinstance(other, TupleVal) and \
            len(tree.items) == len(other.items):
        return TupleVal(tuple(map_pairs(v, w, fn) for v, w in zip(tree.items, other.items)),
                        tree.is_list)
    if same_node_type(tree, other):
        assert isinstance(tree, PyTreeNodeVal) and isinstance(other, PyTreeNodeVal)
        return tree.with_children([map_pairs(v, w, fn) for (_, v), (_, w)
                                   in zip(tree.children, other.children)])
    if isinstance(tree, (DictVal, TupleVal, PyTreeNodeVal)):
        return map_leaves(tree, lambda leaf: fn(leaf, UNKNOWN))
    if tree is UNKNOWN or (isinstance(tree, Const) and tree.value is None):
        return tree
    return fn(tree, other)


def holds_unknown(tree: Value) -> bool:
    """Whether a subtree of ``tree`` is unknown (``leaves_of`` passes over one)."""
    if isinstance(tree, DictVal):
        return any(holds_unknown(v) for _, v in tree.items)
    if isinstance(tree, TupleVal):
        return any(holds_unknown(v) for v in tree.items)
    if isinstance(tree, PyTreeNodeVal):
        return any(holds_unknown(v) for _, v in tree.children)
    return tree is UNKNOWN


def leaves_of(tree: Value) -> List[Value]:
    """The leaves ``map_leaves`` would visit, in order."""
    if isinstance(tree, DictVal):
        return [leaf for _, v in tree.items for leaf in leaves_of(v)]
    if isinstance(tree, TupleVal):
        return [leaf for v in tree.items for leaf in leaves_of(v)]
    if isinstance(tree, PyTreeNodeVal):
        return [leaf for _, v in tree.children for leaf in leaves_of(v)]
    if tree is UNKNOWN or (isinstance(tree, Const) and tree.value is None):
        return []
    return [tree]


def _flattened(tree: Value) -> Optional[List[Value]]:
    """The leaves in JAX's order (a dict's by sorted key, ``None`` an empty subtree)
    where every part of ``tree`` is known to be a container or a leaf; None otherwise."""
    if isinstance(tree, DictVal):
        keys = [k for k, _ in tree.items]
        if not all(isinstance(k, str) for k in keys):
            return None
        out: List[Value] = []
        for _, v in sorted(tree.items, key=lambda kv: kv[0]):
            sub = _flattened(v)
            if sub is None:
                return None
            out.extend(sub)
        return out
    if isinstance(tree, TupleVal):
        items = [_flattened(v) for v in tree.items]
        return None if any(i is None for i in items) else [x for i in items for x in i or ()]
    if isinstance(tree, Const):
        return [] if tree.value is None else [tree]
    if isinstance(tree, (ArrayVal, ShardingVal)):
        return [tree]
    return None  # unknown, a library node, an object JAX may or may not flatten


@models("jax.tree_util.tree_flatten", "jax.tree.flatten")
def tree_flatten(it: ApiContext, c: ApiCall) -> Value:
    """``(leaves, treedef)``: the leaves where the whole tree is known (with no
    ``is_leaf=``), and the structure as a ``TreeDefVal``."""
    leaves = None
    if not c.args.starred and not c.args.given(1, "is_leaf"):
        leaves = _flattened(c.args.get(0, "tree"))
    return TupleVal((TupleVal(tuple(leaves), is_list=True) if leaves is not None else UNKNOWN,
                     TreeDefVal()))


# methods of a node type, by the type's qualified name (a family registers its own:
# ``TrainState.apply_gradients`` in jaxapi/optax.py)
NodeMethod = Callable[[ApiContext, PyTreeNodeVal, ApiCall], Optional[Value]]
NODE_METHODS: Dict[Tuple[str, str], NodeMethod] = {}


def node_method(kind: str, name: str) -> Callable[[NodeMethod], NodeMethod]:
    def register(fn: NodeMethod) -> NodeMethod:
        NODE_METHODS[(kind, name)] = fn
        return fn
    return register


@attribute_of(PyTreeNodeVal)
def node_attribute(it: ApiContext, v: Value, attr: str, node: cst.CSTNode, ctx: MeshCtx) -> Value:
    """``state.params``, ``opt_state.mu``: the field's value."""
    assert isinstance(v, PyTreeNodeVal)
    found = v.field(attr)
    return found if found is not None else UNKNOWN


@method_of(PyTreeNodeVal)
def node_call(it: ApiContext, v: Value, c: ApiCall) -> Optional[Value]:
    """A method of a node: its type's own (``NODE_METHODS``), or a struct dataclass's
    ``replace(**changes)``; None for any other."""
    assert isinstance(v, PyTreeNodeVal)
    fn = NODE_METHODS.get((v.kind, c.name))
    if fn is not None:
        return fn(it, v, c)
    if c.name == "replace" and v.static:  # flax.struct.dataclass.replace
        if c.args.pos or c.args.starred:
            return UNKNOWN
        known = {k for k, _ in v.children + v.static}
        changes = c.args.kw_values()
        if not set(changes) <= known:
            return UNKNOWN  # dataclasses.replace raises: not a field
        return v.replaced(changes)
    return None


# -- jax.tree.map ------------------------------------------------------------------------------
_TREE_MAPS = ("jax.tree.map", "jax.tree_util.tree_map")


@models(*_TREE_MAPS)
def tree_map(it: ApiContext, c: ApiCall) -> Value:
    from .transforms import wrapper
    if len(c.args.pos) >= 2:
        it.pass_functions(c.args.args, c.ctx, opaque=False)
        is_leaf = c.args.kw.get("is_leaf")
        plain = is_leaf is None or (isinstance(is_leaf.value, Const) and is_leaf.value.value is None)
        mapped = _tree_map(it, c.args.pos[0], c.args.pos[1:], c.ctx, c, plain)
        if mapped is not None:
            return mapped
    return wrapper(it, c)


def _tree_map(it: ApiContext, f: Value, trees: List[Value], ctx: MeshCtx,
              c: Optional[ApiCall] = None, plain: bool = False) -> Optional[Value]:
    """jax.tree.map over dicts/tuples/pytree nodes of known structure: f on each leaf
    (arrays, and the specs and shardings of a tree of shardings, which JAX treats as
    leaves). With ``plain`` (no ``is_leaf=``), constants too: ``None`` is an empty
    subtree, kept as is and never passed to f; a string or number is a leaf (a tuple of
    logical axis names mapped to mesh axes: ``jax.tree.map(lambda a: getattr(rules, a),
    ("batch", None))``; a TrainState's Python int ``step``). A leaf of the first tree
    that is unknown is passed to f where another tree has a spec or sharding there:
    the others must have the first's structure, so it is a leaf too."""
    if not isinstance(f, (FuncVal, PartialVal, JitVal)):
        return None
    first = trees[0]
    if plain and isinstance(first, Const):
        if first.value is None:
            return first if all(isinstance(t, Const) and t.value is None for t in trees) \
                else UNKNOWN  # JAX raises: the trees' structures differ
        if isinstance(f, FuncVal) and all(isinstance(t, Const) for t in trees):
            return it.eval_return(f, tuple(trees), {}, ctx)
        return UNKNOWN
    if isinstance(first, DictVal):
        keys = [k for k, _ in first.items]
        if not all(isinstance(t, DictVal) and [k for k, _ in t.items] == keys for t in trees):
            return None
        out = [(k, _tree_map(it, f, [t.get(k) for t in trees], ctx, c, plain)) for k in keys]  # type: ignore[attr-defined]  # all DictVal
        return DictVal(tuple((k, v if v is not None else UNKNOWN) for k, v in out))
    if isinstance(first, TupleVal):
        n = len(first.items)
        if not all(isinstance(t, TupleVal) and len(t.items) == n for t in trees):
            return None
        res = [_tree_map(it, f, [t.items[i] for t in trees], ctx, c, plain) for i in range(n)]  # type: ignore[attr-defined]  # all TupleVal
        return TupleVal(tuple(v if v is not None else UNKNOWN for v in res), first.is_list)
    if isinstance(first, PyTreeNodeVal):
        if not all(same_node_type(first, t) for t in trees):
            return None
        res = [_tree_map(it, f, [t.children[i][1] for t in trees], ctx, c, plain)  # type: ignore[attr-defined]  # all PyTreeNodeVal
               for i in range(len(first.children))]
        return first.with_children([v if v is not None else UNKNOWN for v in res])
    if isinstance(f, FuncVal) and isinstance(first, ArrayVal) \
            and not any(isinstance(t, (DictVal, TupleVal, PyTreeNodeVal)) for t in trees):
        # each leaf's call is checked (a spec tree placing a parameter tree), as if
        # written out: the function's own analysis sees only the leaves' join
        return it.eval_return(f, tuple(trees), {}, ctx, record=True)
    if isinstance(f, FuncVal) and first is UNKNOWN and len(trees) > 1 \
            and all(isinstance(t, (SpecVal, ShardingVal)) for t in trees[1:]):
        # ``jax.tree.map(lambda x, s: jax.device_put(x, NamedSharding(mesh, s)), tree, specs)``
        return it.eval_return(f, tuple(trees), {}, ctx, record=True)
    if isinstance(f, FuncVal) and all(isinstance(t, (SpecVal, ShardingVal)) for t in trees):
        return it.eval_return(f, tuple(trees), {}, ctx)  # a tree of specs made into shardings
    if isinstance(f, PartialVal) and isinstance(f.func, QualName) and c is not None \
            and all(isinstance(t, (SpecVal, ShardingVal)) for t in trees):  # partial(NamedSharding, mesh)
        with it.unrecorded():  # evaluated for its value: the site is the tree's
            args = [Arg(None, "", a, c.node) for a in tuple(f.args) + tuple(trees)]
            args += [Arg(k, "", v, c.node) for k, v in f.kwargs]
            return it.call_api(it.profile.canonical(f.func.name), c.node, args, c.env, ctx)
    return UNKNOWN
