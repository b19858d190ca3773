"""Facts the semantic model records for the rules to read.

Rules never re-derive meshes, specs or contexts: they read these events.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, FrozenSet, Optional, Tuple

import libcst as cst

from .values import MeshVal, SpecVal, Value


@dataclass(frozen=True)
class MeshCtx:
    """The mesh context code runs under.

    ``known`` False: the analyzer cannot tell (e.g. a library function nobody calls in
    this file). ``mesh`` None with ``known`` True: provably no mesh is set.
    ``bound_axes``: axis names a collective may use here (the manual axes of enclosing
    shard_maps and vmap/pmap axis names); None when unknown.
    ``eager``: the code provably runs outside any JAX trace (module level, and functions
    called only from there), so its arrays are concrete: a committed one brings its
    sharding to a jitted call. False where it may be traced (jit, shard_map, grad, scan
    bodies) or nobody knows.
    ``abstract``: ``mesh`` is JAX's abstract context mesh (set by ``jax.set_mesh`` or
    ``use_abstract_mesh``), against which operations check their operands' meshes; the
    legacy ``with mesh:`` sets only pjit's physical mesh.
    """

    known: bool
    mesh: Optional[MeshVal] = None
    bound_axes: Optional[FrozenSet[str]] = frozenset()
    manual_axes: FrozenSet[str] = frozenset()
    shard_map: Any = None  # the innermost enclosing ShardMapCall event
    eager: bool = False
    abstract: bool = False
    # flax's logical axis rules in force (``nn.logical_axis_rules``): a tuple of
    # (logical name, mesh axes) pairs, () when provably none, None when unknown
    logical_rules: Any = None

    @property
    def proven_bound_axes(self) -> Optional[FrozenSet[str]]:
        """The axes a collective here may use, where that is proven (a known context, or
        inside a shard_map): any other axis is unbound, and JAX raises. None: unknown."""
        if self.bound_axes is None or not self.known and self.shard_map is None:
            return None
        return self.bound_axes

    def same(self, other: "MeshCtx") -> bool:
        return (self.known == other.known and self.mesh is other.mesh
                and self.bound_axes == other.bound_axes
                and self.manual_axes == other.manual_axes and self.shard_map is other.shard_map
                and self.eager == other.eager and self.abstract == other.abstract
                and self.logical_rules == other.logical_rules)

    def traced(self) -> "MeshCtx":
        """This context inside a function JAX traces here (jit, grad, scan, ...)."""
        return replace(self, eager=False) if self.eager else self


UNKNOWN_CTX = MeshCtx(known=False, bound_axes=None)
NO_MESH = MeshCtx(known=True, mesh=None, eager=True, logical_rules=())  # the module's top level


@dataclass(frozen=True, eq=False)
class SpecUse:
    """A PartitionSpec applied to a mesh (and, when known, to an array of some shape)."""

    spec: SpecVal
    node: cst.CSTNode
    where: str  # "device_put", "NamedSharding", "shard_map in_specs", ...
    mesh: Optional[MeshVal]
    shape: Optional[Tuple[Optional[int], ...]] = None
    from_context: bool = False  # the mesh is the context mesh, not named at the call
    manual_axes: FrozenSet[str] = frozenset()
    at: Optional[cst.CSTNode] = None  # the call that applies it (where JAX raises)
    # a hint the compiler may pad (a constraint on axes not all Explicit, maybe traced):
    # the rank must fit the shape, an indivisible dim is no error
    padded: bool = False


@dataclass(frozen=True, eq=False)
class MeshMade:
    mesh: MeshVal
    node: cst.Call
    names_node: Optional[cst.CSTNode]
    api: str


@dataclass(frozen=True, eq=False)
class CollectiveCall:
    api: str
    axes: Tuple[Optional[str], ...]  # None where an axis name is not a known constant
    node: cst.Call
    ctx: MeshCtx


@dataclass(eq=False)
class ShardMapCall:
    node: cst.Call
    api: str
    func: Value
    in_specs: Value
    out_specs: Value
    mesh: Optional[MeshVal]
    explicit_mesh: bool
    ctx: MeshCtx
    axis_names: Optional[FrozenSet[str]]
    check_vma: Optional[bool]
    call_args: Optional[Tuple[Value, ...]] = None
    returns: list = field(default_factory=list)  # [(return node, Value)] of the body
    has_mesh_arg: bool = False  # mesh= was passed (maybe with a value we cannot resolve)
    axis_names_unknown: bool = False  # axis_names= was passed with a value we cannot resolve
    mesh_node: Optional[cst.CSTNode] = None  # where mesh= is written
    noted: Optional[tuple] = None  # the body arguments noted when activated
    body_ctx: Optional[MeshCtx] = None
    manual: Optional[FrozenSet[str]] = None

    @property
    def manual_axes(self) -> Optional[FrozenSet[str]]:
        if self.axis_names is not None:
            return self.axis_names
        if self.mesh is not None and self.mesh.names is not None:
            return frozenset(self.mesh.names)
        return None


@dataclass(frozen=True, eq=False)
class ApiUse:
    """A reference to a JAX API by qualified name (for deprecated-api)."""

    api: str
    node: cst.CSTNode
    kind: str  # "call", "reference", "import", "with", "keyword"
    detail: str = ""
    keyword: Optional[cst.CSTNode] = None  # for "keyword": the argument's name, which a fix renames


@dataclass(frozen=True, eq=False)
class NeedsMesh:
    """An operation that needs a mesh in context, and the context it runs in; ``raises``:
    what JAX (or the library) raises without one, as the finding quotes it."""

    node: cst.CSTNode
    what: str
    ctx: MeshCtx
    raises: str = "JAX raises ValueError (set a mesh via jax.set_mesh)"


@dataclass(frozen=True, eq=False)
class AxisTypedUse:
    """A spec passed to an API that requires Explicit axes (reshard, out_sharding=)."""

    node: cst.CSTNode
    api: str
    spec: SpecVal
    mesh: MeshVal
    manual_axes: FrozenSet[str]


@dataclass(frozen=True, eq=False)
class MeshMeet:
    """Two meshes that must be equal meet at ``node``."""

    node: cst.CSTNode
    a: MeshVal
    b: MeshVal
    what: str


@dataclass(frozen=True, eq=False)
class FactAt:
    """A typed fact (``analyzer.facts``) proven at ``node``."""

    fact: Any
    node: cst.CSTNode


@dataclass(frozen=True, eq=False)
class CallFact:
    """A fact a helper proves for one call's arguments (``fact`` at ``origin``, inside the
    helper): reported at ``call`` where the helper's own analysis does not prove it."""

    fact: Any
    origin: cst.CSTNode
    call: cst.CSTNode


@dataclass(frozen=True, eq=False)
class TypeRecord:
    """The value bound to a name at an assignment (what ``shardcheck types`` prints)."""

    node: cst.CSTNode  # the target Name
    name: str
    value: Value
    mesh_order: Optional[Tuple[str, ...]] = None


@dataclass(frozen=True, eq=False)
class JitCall:
    """A jitted function called with these arguments under ``ctx`` (``shardcheck confirm
    --mesh`` re-traces it at production scale)."""

    node: cst.Call
    jit: Any  # the JitVal called
    args: Tuple[Value, ...]
    kwargs: Tuple[Tuple[str, Value], ...]
    ctx: MeshCtx


@dataclass(frozen=True, eq=False)
class ShardingSite:
    """One sharding site as the interpreter evaluated it (what ``shardcheck specs`` maps).

    ``kind``: "with_sharding_constraint", "device_put", "NamedSharding", "reshard",
    "shard_map in_specs", "shard_map out_specs", "jit in_shardings", "jit out_shardings",
    "logical constraint", ... ``path``: the leaf's path in a tree of shardings
    (``['w'][0]``; "" for a single sharding). ``spec``: the resolved mesh-axis spec, or
    None with ``reason`` saying why it is unknown. ``mesh``: the mesh the spec applies
    to, when known. ``logical``: the logical axis names the spec came from (Flax logical
    constraints and partitioning; None where the site names mesh axes directly). A
    handler that resolves logical names records its own site at the call with
    ``logical`` set; the generic recorder then leaves that call alone.
    """

    node: cst.CSTNode  # the call (or argument) the site is written at
    kind: str
    path: str
    spec: Optional[SpecVal]
    mesh: Optional[MeshVal]
    reason: Optional[str] = None
    logical: Optional[Tuple[Optional[str], ...]] = None
    # a site inside a helper, evaluated for one call of it: the helper's name, and the
    # node the site is written at in the helper (``node`` is then the call)
    via: Optional[str] = None
    origin: Optional[cst.CSTNode] = None
    # shardcheck specs: the config defaults the body read before this site ("Cls.field")
    assumes: Tuple[str, ...] = ()
