"""Typed facts: what inference found, with the offending values, for the rules to judge.

A transfer rule (``analyzer/transfer``) that sees JAX reject an operation raises
``Conflict(fact)``; the interpreter records the fact with the node it happened at, and
exactly one rule (``analyzer/rules``) reads facts of that type, decides, and words the
finding. The API models (``analyzer/jaxapi``) prove the declaration conflicts below the
same way, with ``Interpreter.prove``. Facts hold values, never prose: the abstract arrays, the dims and axes involved,
the op's canonical name (``jax.numpy.concatenate``, ``jax.Array.__add__``) and which of
JAX's checks rejects it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Optional, Tuple

import libcst as cst

from sharding_types import AxisType, ShardingType

from .values import ArrayVal, MeshVal, SpecVal, Value

Axes = Tuple[str, ...]  # the mesh axes one dim is sharded over; () = unsharded
Dims = Tuple[Axes, ...]  # per dim, as jax.typeof shows them after '@'


class Fact:
    """Base of every fact type (frozen dataclasses below). ``CHECKS``: the values of a
    fact's ``check`` field, for the fact types that have one."""

    __slots__ = ()
    CHECKS: ClassVar[Tuple[str, ...]] = ()


@dataclass(frozen=True)
class ContractionConflict(Fact):
    """A contraction whose operands JAX's dot_general sharding rule rejects.

    ``check``: ``"batch"`` (batch dims sharded inconsistently), ``"contracting"``
    (contracting dims sharded over different axes), ``"ambiguous"`` (a contracting dim
    sharded over the same axes on both sides and no ``out_sharding=``) or
    ``"matmul-batch"`` (``matmul``'s leading dims differ: a ValueError). ``lhs_spec`` and
    ``rhs_spec`` are the compared dims' shardings (the whole specs for matmul-batch)."""

    CHECKS: ClassVar[Tuple[str, ...]] = ("batch", "contracting", "ambiguous", "matmul-batch")
    op: str
    check: str
    lhs: ArrayVal
    rhs: ArrayVal
    lhs_spec: Dims
    rhs_spec: Dims


@dataclass(frozen=True)
class BroadcastConflict(Fact):
    """An elementwise op whose operands, rank-aligned, shard one dim over different axes.

    ``primitive``: the JAX primitive whose sharding rule rejects it, by the name JAX's
    error starts with (``add``, ``div``, ``lt``), or None where it depends on the dtype."""

    op: str
    primitive: Optional[str]
    specs: Tuple[Dims, ...]  # every array operand's spec, padded to the result's rank
    dim: int
    left: Axes
    right: Axes


@dataclass(frozen=True)
class DuplicateResultAxis(Fact):
    """A contraction (or, ``broadcast``, an elementwise op broadcasting its operands)
    whose result would shard two dims over one mesh axis."""

    op: str
    spec: Dims  # the result's would-be spec
    axis: str
    dims: Tuple[int, int]
    broadcast: bool = False


@dataclass(frozen=True)
class OperandConflict(Fact):
    """Operands that must be sharded alike and are not.

    ``check``: ``"same-sharding"`` (concatenate, stack), ``"update"``
    (dynamic_update_slice), ``"select-cases"``, ``"select-condition"`` (a select whose
    operands need no broadcasting; also the select inside a float ``//``),
    ``"select-broadcast"`` (a select broadcasting its
    operands, two of which shard ``dim`` over different axes)."""

    CHECKS: ClassVar[Tuple[str, ...]] = ("same-sharding", "update", "select-cases",
                                         "select-condition", "select-broadcast")
    op: str
    check: str
    specs: Tuple[Dims, ...]
    dim: Optional[int] = None


@dataclass(frozen=True)
class ReshapeConflict(Fact):
    """A reshape of an array with sharded dims that JAX's reshape rule cannot follow."""

    op: str
    array: ArrayVal
    new_shape: Tuple[int, ...]


@dataclass(frozen=True)
class ShardedAxisConflict(Fact):
    """An op that must run along dim ``dim`` of ``array``, which is sharded.

    ``check`` names the JAX check that rejects it: ``"gather"`` (indexing that becomes a
    gather), ``"slice"`` (a static slice whose length does not divide by the axes' size),
    ``"cumulative"``, ``"sort"``, ``"top_k"``, ``"factorization"`` (a linalg primitive,
    named by ``primitive``), ``"symmetrize"`` (a Hermitian factorisation adds the matrix to
    its transpose), ``"triangular_solve"``, ``"scan"`` (``lax.scan`` over ``xs`` whose
    leading dim is sharded), ``"pad"`` or ``"dynamic_slice"`` (the dim's new length,
    ``size``, does not divide by the axes' size). ``index``: for indexing, what indexes
    the dim (``"int"``, ``"slice"``, ``"array"``)."""

    CHECKS: ClassVar[Tuple[str, ...]] = ("gather", "slice", "cumulative", "unspecified-axis",
                                         "sort", "top_k", "factorization", "symmetrize",
                                         "triangular_solve", "scan", "pad", "dynamic_slice")
    op: str
    array: ArrayVal
    dim: int
    check: str
    index: Optional[str] = None
    primitive: Optional[str] = None
    size: Optional[int] = None

    @property
    def axes(self) -> Axes:
        return self.array.dims[self.dim] if self.array.dims is not None else ()


FACT_TYPES: Tuple[type, ...] = (ContractionConflict, BroadcastConflict, DuplicateResultAxis,
                                OperandConflict, ReshapeConflict, ShardedAxisConflict)


# -- declarations that contradict the inferred type (proved by analyzer/jaxapi) -------------
@dataclass(frozen=True, eq=False)
class AnnotationConflict(Fact):
    """A runtime-layer declaration (``Sharded[...]`` parameter, ``assert_sharding``)
    that the inferred type contradicts."""

    declared: ShardingType
    inferred: ArrayVal
    reasons: Tuple[str, ...]
    parameter: Optional[str] = None  # set for an annotated parameter
    function: Optional[str] = None


@dataclass(frozen=True, eq=False)
class InShardingsConflict(Fact):
    """``jax.jit(in_shardings=...)`` declares ``declared`` for a committed argument of
    another sharding, outside any trace."""

    declared: Dims
    inferred: ArrayVal
    # the declared spec where the mesh has Auto axes (typeof shows none of them)
    declared_spec: Optional[SpecVal] = None
    # set when the argument lives on another mesh than in_shardings names
    declared_mesh: Optional[MeshVal] = None


@dataclass(frozen=True, eq=False)
class InSpecsConflict(Fact):
    """``shard_map(in_specs=...)`` names Explicit axes other than the input's."""

    spec: SpecVal
    inferred: ArrayVal


@dataclass(frozen=True, eq=False)
class ConstraintConflict(Fact):
    """``with_sharding_constraint`` on an all-Explicit mesh asks for another sharding."""

    requested: Dims
    inferred: ArrayVal


@dataclass(frozen=True, eq=False)
class JitShardingsNotPrefix(Fact):
    """``jax.jit(in_shardings=/out_shardings=)`` whose tree is no prefix of the call's
    positional arguments (or of the function's outputs) at ``path``."""

    which: str  # "in_shardings" or "out_shardings"
    path: Tuple[Any, ...]  # the key path into the shardings; () for the top level
    declared: Value  # the shardings' subtree there
    actual: Value  # the values' subtree (at the top of in_shardings: the dynamic arguments)
    static: Tuple[str, ...] = ()  # the call's static parameters (they take no entry)
    shown: str = ""  # the argument or output the subtree belongs to
    written: Optional[Tuple[Any, ...]] = None  # the container the function's returns write


@dataclass(frozen=True, eq=False)
class JitKeywordArguments(Fact):
    """A function jitted with ``in_shardings=`` called with keyword arguments."""

    keywords: Tuple[str, ...]


@dataclass(frozen=True, eq=False)
class MeshConflict(Fact):
    """Two meshes that JAX requires equal differ, and not both are all-Auto: two operands'
    (``against`` "operand"), or an operand's or an ``out_sharding=``'s and the context
    mesh set by ``jax.set_mesh`` (``against`` "context")."""

    against: str  # "operand" or "context"
    mesh: MeshVal  # the array's (or the sharding's) mesh
    other: MeshVal  # the other operand's mesh, or the context mesh
    what: str  # the operation, e.g. "`*`" or "jnp.einsum"
    sharding: bool = False  # mesh is that of an out_sharding= NamedSharding


@dataclass(frozen=True, eq=False)
class MeshDeviceCount(Fact):
    """A mesh needs other than the devices the module sets up for itself:
    ``jax.make_mesh`` more of them, ``create_device_mesh`` not exactly that many."""

    api: str  # "jax.make_mesh" or "jax.experimental.mesh_utils.create_device_mesh"
    sizes: Tuple[int, ...]
    count: int  # the devices the module sets up
    how: str  # the setting, as written
    cpu_pinned: bool  # the module pins the platform to the CPU


@dataclass(frozen=True, eq=False)
class ControlFlowTypeMismatch(Fact):
    """A loop carry whose type changes in one step (proven at the initial carry), or
    ``cond``/``switch`` branches of different output types (proven at the branch to
    change: the one whose output varies over, or is sharded over, fewer axes). ``what``
    says which part of the type differs: "varying" (the manual axes, inside a check_vma
    shard_map) or "sharding" (the Explicit axes of the dims)."""

    api: str  # "scan", "fori_loop", "while_loop", "cond", "switch"
    part: str  # "carry", or the branch to change: "true_fun", "false_fun", "branch 1"
    path: Tuple[object, ...]  # the tuple indices and dict keys down to the leaf
    what: str  # "varying" or "sharding"
    here: Any  # the leaf: the initial carry's, or the branch's to change
    there: Any  # the body's output leaf, or the other branch's
    manual: frozenset  # the manual axes in force
    other: Optional[cst.CSTNode]  # the loop body, or the other branch
    other_name: Optional[str] = None


@dataclass(frozen=True, eq=False)
class ClosedOverExplicitArray(Fact):
    """A ``shard_map`` body uses, in an operation, an array of an enclosing scope that
    lives on a mesh with Explicit axes (proven at the use)."""

    name: str
    value: ArrayVal
    shard_map: cst.CSTNode  # the shard_map call


@dataclass(frozen=True, eq=False)
class ConstraintAxisNotAuto(Fact):
    """``with_sharding_constraint`` names ``axis``, which is not Auto (Manual inside
    shard_map, or Explicit), where the constraint is not an assert (the context mesh is
    not all Explicit)."""

    spec: SpecVal
    axis: str
    axis_type: AxisType
    mesh: MeshVal
    context: str  # "inside shard_map", "with no mesh set", ...


@dataclass(frozen=True, eq=False)
class InvariantReduction(Fact):
    """``psum``/``pmean`` inside shard_map of a value already invariant over ``axes``,
    for a known reason (``origin``): the result of an earlier reduction, or (under
    check_vma) the gradient w.r.t. an input replicated over them, which JAX has already
    summed over them."""

    api: str  # "psum" or "pmean"
    axes: Tuple[str, ...]
    origin: str  # "reduced", "gradient"
    origin_node: Optional[cst.CSTNode]
    axis_size: Optional[int]  # the product of the axes' sizes, when known
    path: Tuple[object, ...] = ()  # the leaf, within a tree operand


@dataclass(frozen=True, eq=False)
class VaryingGather(Fact):
    """``all_gather`` without ``to=``: every device holds the same gathered array, but
    JAX types the result as varying over ``axes`` (``to='invarying'`` types it
    invariant)."""

    value: ArrayVal
    axes: Tuple[str, ...]


@dataclass(frozen=True, eq=False)
class CollectiveSplitSize(Fact):
    """``psum_scatter`` or ``all_to_all`` inside ``shard_map`` splitting dim ``dim`` of
    the local block ``array`` over ``axes`` (``axis_size`` devices in all), whose size
    ``size`` cannot be split so: ``tiled``, it must divide by the axis size; untiled, it
    must equal it (JAX 0.10.2 and 0.12.0.1 raise ValueError at trace time)."""

    api: str  # "psum_scatter" or "all_to_all"
    axes: Tuple[str, ...]
    dim: int
    size: int
    axis_size: int
    tiled: bool
    array: ArrayVal


@dataclass(frozen=True, eq=False)
class PermutationClash(Fact):
    """``ppermute`` over ``axes`` (``axis_size`` devices in all) given ``pairs`` of which
    two name one source (or one destination) once each index is taken modulo the axis
    size, as XLA's lowering takes them: JAX 0.10.2 and 0.12.0.1 raise ValueError when the
    program compiles. ``clash``: the two pairs, ``end`` which of their ends meet."""

    axes: Tuple[str, ...]
    pairs: Tuple[Tuple[int, int], ...]
    axis_size: int
    clash: Tuple[Tuple[int, int], Tuple[int, int]]
    end: str  # "source" or "destination"


@dataclass(frozen=True, eq=False)
class WrongArgumentKind(Fact):
    """A sharding API given an argument of a kind it does not take, known from the value
    (a ``PartitionSpec`` where a mesh goes, an int where a shape goes, a ``PyTreeDef``
    or a shape among jit's shardings). ``kind`` says which of JAX's checks rejects it."""

    CHECKS: ClassVar[Tuple[str, ...]] = ("mesh", "spec", "shape", "devices", "shardings",
                                         "device_put", "axis_types", "axis_types_count")
    kind: str  # one of CHECKS
    api: str  # as the source calls it: "NamedSharding", "jax.jit", "create_device_mesh"
    argument: str  # the parameter: "mesh", "spec", "in_shardings", "mesh_shape", "device"
    got: str  # what the value is: "a PartitionSpec", "the int 8"
    path: str = ""  # where in a tree of shardings: "[0]['w']"
    others: int = 0  # further leaves of that tree of a wrong kind
