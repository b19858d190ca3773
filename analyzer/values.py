"""Abstract values: what the analyzer knows about an expression without running it.

Every value is frozen. ``UNKNOWN`` is first-class: anything the analyzer cannot prove is
unknown, and an unknown never leads to an error-level finding.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, List, Optional, Tuple

import libcst as cst

from sharding_types import AxisType, PartialMesh, PartialType, ShardingType, format_spec


class Value:
    """Base class of abstract values."""

    __slots__ = ()


@dataclass(frozen=True)
class Unknown(Value):
    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN = Unknown()


class _Spread(Unknown):
    def __repr__(self) -> str:
        return "SPREAD"


# the last positional argument of a call that spreads a sequence (``f(a, *xs)``): what
# follows it, and what a ``*args`` parameter holds, is unknown
SPREAD = _Spread()


@dataclass(frozen=True)
class Const(Value):
    """A Python constant: str, int, float, bool or None."""

    value: Any


@dataclass(frozen=True)
class TupleVal(Value):
    items: Tuple[Value, ...]
    is_list: bool = False


# The methods that change a list, dict or set in place: after one, what the interpreter
# held for the container (its entries when it was made) is no longer what it holds
MUTATING_METHODS = frozenset({"append", "extend", "insert", "update", "setdefault", "pop",
                              "popitem", "clear", "remove", "sort", "reverse", "__setitem__",
                              "__delitem__", "__ior__", "add", "discard"})


@dataclass(frozen=True)
class DictVal(Value):
    items: Tuple[Tuple[Any, Value], ...]  # (constant key, value)

    def get(self, key: Any) -> Value:
        for k, v in self.items:
            if k == key:
                return v
        return UNKNOWN


def merge_item(pairs: List[Tuple[Any, "Value"]], key: Any, value: "Value") -> None:
    """Set ``key`` in a dict's (key, value) list as Python does: a key already there keeps
    its place and takes the new value."""
    for i, (k, _) in enumerate(pairs):
        if k == key:
            pairs[i] = (key, value)
            return
    pairs.append((key, value))


@dataclass(frozen=True)
class QualName(Value):
    """A reference to something importable, by its canonical qualified name."""

    name: str


@dataclass(frozen=True)
class ProjectModule(Value):
    """A module of the checked tree, by module name."""

    name: str


@dataclass(frozen=True, eq=False)
class MeshVal(PartialMesh, Value):
    """A mesh made in the source: a ``PartialMesh`` (names, sizes or types may be
    unknown) plus where it was made. Two MeshVals are equal only when they are the same
    mesh value (identity), as the analyzer compares meshes by where they come from."""

    node: Optional[cst.CSTNode] = field(default=None, compare=False, repr=False)
    origin: str = ""  # "make_mesh", "Mesh", "AbstractMesh", "config:<name>"

    __eq__ = object.__eq__
    __hash__ = object.__hash__


def meshes_differ(a: MeshVal, b: MeshVal) -> bool:
    """Whether JAX provably tells the two meshes apart where it requires one mesh: they
    differ (names, sizes or axis types) and not both have only Auto axes (JAX lets
    all-Auto meshes mix)."""
    if a is b:
        return False
    same = a.same_shape(b)
    if same is None:
        return False
    if same and (a.types is None or b.types is None or a.types == b.types):
        return False
    explicit = [m for m in (a, b) if m.types is not None and any(t != AxisType.Auto for t in m.types)]
    return bool(explicit)


# A spec entry: None (replicated), a tuple of axis names (each a str, or None when that
# name is not known), or UNKNOWN for the whole entry.
@dataclass(frozen=True, eq=False)
class SpecVal(Value):
    """A PartitionSpec made in the source."""

    entries: Tuple[Any, ...]
    unreduced: Tuple[Optional[str], ...] = ()
    reduced: Tuple[Optional[str], ...] = ()
    node: Optional[cst.CSTNode] = field(default=None, compare=False, repr=False)
    complete: bool = True  # False when *args or other unknown parts were spliced in
    # a spec a helper function built: ``node`` is then the helper's call (where the
    # arguments that decide the spec are written) and this the P(...) inside the helper
    built_at: Optional[cst.CSTNode] = field(default=None, compare=False)

    def axis_names(self) -> Tuple[str, ...]:
        out: list = []
        for e in self.entries:
            if isinstance(e, tuple):
                out.extend(a for a in e if isinstance(a, str))
        return tuple(out)

    def describe(self) -> str:
        """``P('data', None)``; ``?`` for an unknown entry or name."""
        return format_spec(self.entries, self.unreduced, self.reduced)


@dataclass(frozen=True, eq=False)
class SpecChoice(Value):
    """An entry of a table of specs (``SPECS[name]``, ``LAYOUT[i]``) picked by a key the
    analyzer cannot resolve: any of ``options`` may be used. Not a spec (what a spec means
    stays unknown); the mesh checks run on every option, reported at the option."""

    options: Tuple[SpecVal, ...]
    node: Optional[cst.CSTNode] = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, eq=False)
class ShardingVal(Value):
    """``NamedSharding(mesh, spec)``."""

    mesh: Value
    spec: Value
    node: Optional[cst.CSTNode] = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, eq=False, init=False)
class ArrayVal(PartialType, Value):
    """An array whose shape (and perhaps sharding) the source states: a ``PartialType``
    plus what only the analyzer needs.

    The type parts keep the analyzer's defaults: ``varying``/``unreduced`` known empty
    (an array made outside ``shard_map`` by ops the analyzer models has none), ``weak``
    False. ``reduced`` and ``memory_space`` are not modelled and stay unknown, so they
    never give a finding; ``sharding_type()`` assumes JAX's defaults for them (none,
    device memory). ``dims``: per dim, the Explicit mesh axes it is sharded over (what
    typeof shows after '@'). Equal only to itself (identity), as before.
    """

    mesh: Optional[MeshVal] = None  # the mesh it was placed on, when known
    spec: Optional[SpecVal] = None
    node: Optional[cst.CSTNode] = field(default=None, compare=False, repr=False)
    numpy: bool = False  # a NumPy array on the host (no sharding type of its own)

    __eq__ = object.__eq__
    __hash__ = object.__hash__

    def __init__(self, shape: Optional[Tuple[Optional[int], ...]],
                 mesh: Optional[MeshVal] = None, spec: Optional[SpecVal] = None,
                 node: Optional[cst.CSTNode] = None,
                 varying: Optional[frozenset] = frozenset(), *,
                 dtype: Optional[str] = None, weak: Optional[bool] = False,
                 dims: Optional[Tuple[Tuple[str, ...], ...]] = None,
                 unreduced: Optional[frozenset] = frozenset(),
                 reduced: Optional[frozenset] = None, memory_space: Optional[str] = None,
                 numpy: bool = False) -> None:
        # the analyzer's positional order (shape, mesh, spec, node, varying) is kept
        setattr_ = object.__setattr__
        setattr_(self, "shape", shape)
        setattr_(self, "mesh", mesh)
        setattr_(self, "spec", spec)
        setattr_(self, "node", node)
        setattr_(self, "varying", varying)
        setattr_(self, "dtype", dtype)
        setattr_(self, "weak", weak)
        setattr_(self, "dims", dims)
        setattr_(self, "unreduced", unreduced)
        setattr_(self, "reduced", reduced)
        setattr_(self, "memory_space", memory_space)
        setattr_(self, "numpy", numpy)

    def type_part(self) -> PartialType:
        """What the analyzer knows of the value's type, without the analyzer's parts."""
        return PartialType(dtype=self.dtype, weak=self.weak, shape=self.shape, dims=self.dims,
                           varying=self.varying, unreduced=self.unreduced,
                           reduced=self.reduced, memory_space=self.memory_space)

    def axis_order(self, mesh_order: Optional[Tuple[str, ...]] = None) -> Tuple[str, ...]:
        return mesh_order or (self.mesh.names if self.mesh is not None else None) or ()

    def sharding_type(self, mesh_order: Optional[Tuple[str, ...]] = None) -> Optional[ShardingType]:
        """The full type, when every part the analyzer models is known (sets in
        ``mesh_order``, else its mesh's order)."""
        if self.numpy:
            return None
        assumed = PartialType(dtype=self.dtype, weak=self.weak, shape=self.shape, dims=self.dims,
                              varying=self.varying, unreduced=self.unreduced,
                              reduced=frozenset() if self.reduced is None else self.reduced,
                              memory_space=self.memory_space or "device")
        return assumed.complete(self.axis_order(mesh_order))

    def __str__(self) -> str:
        if self.numpy and self.dims is None and self.shape is not None:
            # a host array has no sharding: each dim unsharded, as the message's sizes say
            part = self.type_part()
            return PartialType(dtype=part.dtype, weak=part.weak, shape=part.shape,
                               dims=tuple(() for _ in self.shape), varying=part.varying,
                               unreduced=part.unreduced, reduced=part.reduced,
                               memory_space=part.memory_space).format(())
        return self.format(self.axis_order())


@dataclass(frozen=True, eq=False)
class TypeOfVal(Value):
    """``jax.typeof(x)`` of an array: its abstract value, whose ``.shape``, ``.dtype`` and
    ``.sharding`` are the array's (not an array itself: no op takes it)."""

    array: ArrayVal


@dataclass(frozen=True, eq=False)
class FuncVal(Value):
    """A function defined in the source (def or lambda)."""

    node: cst.CSTNode = field(repr=False)  # FunctionDef or Lambda
    name: str
    scope: Any = field(default=None, compare=False)  # the Env it closes over


@dataclass(frozen=True, eq=False)
class PartialVal(Value):
    """``functools.partial(func, *args, **kwargs)``."""

    func: Value
    args: Tuple[Value, ...]
    kwargs: Tuple[Tuple[str, Value], ...]


@dataclass(frozen=True, eq=False)
class JitVal(Value):
    """``jax.jit(f, ...)`` / ``pjit``: calls go to ``func``."""

    func: Value
    node: Optional[cst.CSTNode] = field(default=None, compare=False, repr=False)
    in_shardings: Optional[Value] = None
    # jit's keyword options (in_shardings, out_shardings, static_argnums, ...): (keyword,
    # value, the node it is written at)
    options: Tuple[Tuple[str, Value, cst.CSTNode], ...] = ()

    def option(self, name: str) -> Optional[Tuple[Value, cst.CSTNode]]:
        for k, v, n in self.options:
            if k == name:
                return v, n
        return None


@dataclass(frozen=True, eq=False)
class ShardMapVal(Value):
    """``jax.shard_map(f, ...)``: the mapped function."""

    func: Value
    event: Any  # the ShardMapCall event


@dataclass(frozen=True, eq=False)
class IteratorVal(Value):
    """What a generator function's call returns, or an object's ``__iter__`` gives: an
    iterator whose every item is ``item`` (the join of what it yields)."""

    item: Value


def join(a: Value, b: Value) -> Value:
    """The value of a name that is ``a`` on one path and ``b`` on another."""
    if a is b:
        return a
    if isinstance(a, Const) and isinstance(b, Const) and a == b:
        return a
    if isinstance(a, QualName) and a == b:
        return a
    if isinstance(a, ArrayVal) and isinstance(b, ArrayVal):
        return join_arrays(a, b)
    if isinstance(a, TupleVal) and isinstance(b, TupleVal) and len(a.items) == len(b.items):
        return TupleVal(tuple(join(x, y) for x, y in zip(a.items, b.items)), a.is_list)
    if isinstance(a, DictVal) and isinstance(b, DictVal) and [k for k, _ in a.items] == [k for k, _ in b.items]:
        return DictVal(tuple((k, join(v, b.get(k))) for k, v in a.items))
    if isinstance(a, MeshVal) and isinstance(b, MeshVal):
        return join_meshes(a, b)
    if isinstance(a, IteratorVal) and isinstance(b, IteratorVal):
        return IteratorVal(join(a.item, b.item))
    if isinstance(a, InstanceVal) and isinstance(b, InstanceVal) and a.cls is b.cls \
            and a.assumed == b.assumed:  # ``cfg.x = v`` on one path only: x is unknown
        ga, gb = dict(a.given), dict(b.given)
        keys = list(dict.fromkeys(list(ga) + list(gb)))
        return InstanceVal(a.cls, tuple(
            (k, join(ga[k], gb[k]) if k in ga and k in gb else UNKNOWN) for k in keys),
            a.assumed, a.made and b.made, a.written & b.written)
    return UNKNOWN


def join_meshes(a: MeshVal, b: MeshVal) -> Value:
    """A mesh made on either of two paths (a factory that builds ``Mesh(devices,
    names)`` from devices chosen per platform): what both agree on, where they have the
    same axis names and axis types; a size they differ on is unknown."""
    if a.names is None or a.names != b.names or a.types != b.types:
        return UNKNOWN
    sizes = None
    if a.sizes is not None and b.sizes is not None:
        sizes = tuple(x if x == y else None for x, y in zip(a.sizes, b.sizes))
    return MeshVal(a.names, sizes, a.types, a.node if a.node is b.node else None,
                   a.origin if a.origin == b.origin else "")


def join_arrays(a: "ArrayVal", b: "ArrayVal") -> "ArrayVal":
    """What two arrays have in common; every part that differs becomes unknown."""
    t = PartialType.join(a, b)
    return ArrayVal(t.shape, a.mesh if a.mesh is b.mesh else None,
                    a.spec if a.spec is b.spec else None, None, t.varying, dtype=t.dtype,
                    weak=t.weak, dims=t.dims, unreduced=t.unreduced, reduced=t.reduced,
                    memory_space=t.memory_space, numpy=a.numpy and b.numpy)


def const_str(v: Value) -> Optional[str]:
    return v.value if isinstance(v, Const) and isinstance(v.value, str) else None


def const_int(v: Value) -> Optional[int]:
    if isinstance(v, Const) and isinstance(v.value, int) and not isinstance(v.value, bool):
        return v.value
    return None


@dataclass(frozen=True, eq=False)
class LogicalInit(Value):
    """An initializer boxed by Linen's ``nn.with_logical_partitioning``: the spec entries
    its logical names resolve to, applied when ``Module.param`` unboxes the parameter."""

    entries: Tuple[Any, ...]
    names: Tuple[Any, ...]
    node: Any = None
    rules_given: bool = False  # its own rules= (else those in force when it is unboxed)
    dtype: Optional[str] = None  # the wrapped initializer's default dtype, when known


@dataclass(frozen=True, eq=False)
class PytreeNodeVal(Value):
    """A pytree whose top node's type a library model knows but not its children (an NNX
    ``State``): where JAX matches trees, it is neither a tuple, a list nor a dict."""

    kind: str  # the type as messages name it: "nnx.State"


@dataclass(frozen=True, eq=False)
class RuleTreeVal(Value):
    """A tree of specs chosen per leaf by rules (``shardcheck specs``): each leaf takes
    the spec of the first rule that matches it. The rules are regexes over its path, as
    EasyLM-style ``match_partition_rules(rules, params)`` has them
    (``interp/rule_trees.py``), or NNX filters, as ``nnx.StateSharding({filter: sharding})``
    and ``nnx.prefix(module, {filter: sharding})`` have them (``jaxapi/filter_tables.py``).
    Which leaves there are is not known; what each rule gives is."""

    rules: Tuple[Tuple[str, Value], ...]  # (pattern or filter's source, spec or sharding)
    filters: bool = False  # the rules' keys are NNX filters, written as in the source


def str_keyed_pairs(v: Value) -> Optional[List[Tuple[str, Value]]]:
    """A table written as constants: a tuple or list of (string, value) pairs (a Flax
    logical rule table, a regex partition-rule table); None for anything else."""
    if not isinstance(v, TupleVal):
        return None
    out = []
    for pair in v.items:
        if not isinstance(pair, TupleVal) or len(pair.items) != 2:
            return None
        key, value = pair.items
        if not isinstance(key, Const) or not isinstance(key.value, str):
            return None
        out.append((key.value, value))
    return out


def int_tuple(v: Value) -> Optional[Tuple[Optional[int], ...]]:
    """A shape: a tuple of ints (an entry may be None when unknown); an int is a 1-tuple."""
    if const_int(v) is not None:
        return (const_int(v),)
    if isinstance(v, TupleVal):
        return tuple(const_int(i) for i in v.items)
    return None


def str_tuple(v: Value) -> Optional[Tuple[Optional[str], ...]]:
    if const_str(v) is not None:
        return (const_str(v),)
    if isinstance(v, TupleVal):
        return tuple(const_str(i) for i in v.items)
    return None


def varying_of(v: Value) -> Optional[frozenset]:
    """The axes ``v`` varies over: an array's, none for a Python number, else unknown."""
    if isinstance(v, ArrayVal):
        return v.varying
    if isinstance(v, Const) and isinstance(v.value, (int, float, bool)):
        return frozenset()
    return None


def union_varying(values) -> Optional[frozenset]:
    """The varying set of an elementwise result: the union, or None if any is unknown."""
    out: frozenset = frozenset()
    for v in values:
        if isinstance(v, (Const, TupleVal, DictVal, QualName)) and not isinstance(v, ArrayVal):
            if isinstance(v, Const) or isinstance(v, QualName):
                continue
            inner = union_varying(v.items if isinstance(v, TupleVal) else [x for _, x in v.items])
            if inner is None:
                return None
            out |= inner
            continue
        vv = varying_of(v)
        if vv is None:
            return None
        out |= vv
    return out


@dataclass(frozen=True, eq=False)
class ClassVal(Value):
    """A class defined in the source (``shardcheck specs``; ``check`` leaves classes
    unknown but for a method's ``self``, ``interp/set_up.py``). ``env``: its body's
    scope; ``fields``: annotated names in order (a dataclass's positional order) with
    their annotation nodes; ``dataclass``: its constructor takes its fields;
    ``set_elsewhere``: attributes its methods assign on
    ``self`` (their class value is not what an instance holds); ``opaque``: it defines
    ``__getattr__``."""

    node: cst.CSTNode = field(repr=False)
    name: str
    env: Any = field(repr=False)
    bases: Tuple[Value, ...] = field(default=(), repr=False)
    fields: Tuple[Tuple[str, Any], ...] = field(default=(), repr=False)
    dataclass: bool = False
    set_elsewhere: frozenset = field(default=frozenset(), repr=False)
    opaque: bool = False
    frozen: bool = False  # instances never change once made (NamedTuple, frozen dataclass)
    module: Any = field(default=None, repr=False)  # the cst.Module whose source defines it


@dataclass(frozen=True, eq=False)
class InstanceVal(Value):
    """An instance of a source class: the constructor's arguments (``given``) where a
    call in view made it; ``assumed``: made by no call in view (a parameter's
    annotation, ``self``), so its fields read as their declared defaults.

    ``check`` (``interp/objects.py``): ``made``: a call in view constructed it, and
    ``given`` holds what its set-up methods stored on it; ``written``: the attributes
    the code being analysed assigned since (what it reads back is what it wrote)."""

    cls: ClassVal
    given: Tuple[Tuple[str, Value], ...] = ()
    assumed: bool = False
    made: bool = False
    written: frozenset = frozenset()
    # ``shardcheck specs``: how an assumed instance was made, as its assumptions name it
    # (``ShardingConfig.get_default_sharding()``; the class's name where empty)
    shown: str = ""


# the kinds of value ``join`` keeps something of when both paths have that kind (of
# the others, only one and the same object)
JOINABLE = (Const, QualName, ArrayVal, TupleVal, DictVal, MeshVal, IteratorVal, InstanceVal)
