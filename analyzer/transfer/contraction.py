"""Contractions: ``lax.dot_general`` and what jnp lowers to it (``matmul``/``@``, ``dot``,
``einsum``)."""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

from ..facts import ContractionConflict
from ..values import ArrayVal, TupleVal, const_str, int_tuple, union_varying
from .arrays import Conflict, array, derived, one_dim_per_axis, rank, unknown_like
from .call import Call, Op, OutSpec, Registry, register
from .dtypes import promote
from .layout import transpose
from .reduction import reduce

DimPair = Tuple[Sequence[int], Sequence[int]]  # (lhs dims, rhs dims)


def dot_general(op: str, lhs: ArrayVal, rhs: ArrayVal, contracting: DimPair, batch: DimPair,
                out: Optional[OutSpec] = None, has_out: bool = False,
                out_perm: Optional[Sequence[int]] = None) -> ArrayVal:
    """``lax._dot_general_sharding_rule``: batch and contracting dims must be sharded
    consistently; a contraction sharded on both sides needs ``out_sharding``; the result
    is batch + lhs free + rhs free dims (permuted by ``out_perm``), and one mesh axis may
    not land on two of them. ``out``: the resolved ``out_sharding=`` (None when it was
    not passed or cannot be resolved; ``has_out`` tells which)."""
    vary = union_varying([lhs, rhs])
    dt = promote((lhs.dtype, lhs.weak), (rhs.dtype, rhs.weak))
    (lc, rc), (lb, rb) = contracting, batch
    if lhs.dims is None or rhs.dims is None or lhs.unreduced or rhs.unreduced \
            or lhs.unreduced is None or rhs.unreduced is None:
        return ArrayVal(None, varying=vary, dtype=dt[0], weak=dt[1])
    ls, rs = lhs.dims, rhs.dims
    lshape = lhs.shape or (None,) * len(ls)
    rshape = rhs.shape or (None,) * len(rs)
    for check, (li, ri) in (("batch", (lb, rb)), ("contracting", (lc, rc))):
        lspec, rspec = tuple(ls[i] for i in li), tuple(rs[i] for i in ri)
        if any(a and b and a != b for a, b in zip(lspec, rspec)):  # lax._check_specs_match
            raise Conflict(ContractionConflict(op, check, lhs, rhs, lspec, rspec))
    lcs, rcs = tuple(ls[i] for i in lc), tuple(rs[i] for i in rc)
    if not has_out and any(a and b for a, b in zip(lcs, rcs)):
        raise Conflict(ContractionConflict(op, "ambiguous", lhs, rhs, lcs, rcs))
    free_l = [i for i in range(len(ls)) if i not in lb and i not in lc]
    free_r = [i for i in range(len(rs)) if i not in rb and i not in rc]
    shape = ([lshape[i] if lshape[i] is not None else rshape[j] for i, j in zip(lb, rb)]
             + [lshape[i] for i in free_l] + [rshape[i] for i in free_r])
    if out_perm is not None:
        shape = [shape[i] for i in out_perm]
    if has_out:
        return _with_out_sharding(shape, out, dt, vary, lhs)
    dims: List[Tuple[str, ...]] = [ls[i] if ls[i] else rs[j] for i, j in zip(lb, rb)]
    dims += [ls[i] for i in free_l] + [rs[i] for i in free_r]
    if out_perm is not None:
        dims = [dims[i] for i in out_perm]
    one_dim_per_axis(op, dims)
    return array(shape, tuple(dims), dt[0], dt[1], vary, lhs)


def _with_out_sharding(shape, out: Optional[OutSpec], dt, vary, lhs: ArrayVal) -> ArrayVal:
    if out is None:
        return array(shape, None, dt[0], dt[1], vary, lhs)
    dims = tuple(out[0]) + ((),) * (len(shape) - len(out[0]))
    if len(dims) != len(shape):
        return ArrayVal(None, varying=vary)
    return derived(array(shape, dims, dt[0], dt[1], vary, lhs), unreduced=out[1])


def matmul(op: str, a: ArrayVal, b: ArrayVal, out: Optional[OutSpec] = None,
           has_out: bool = False) -> ArrayVal:
    """``a @ b`` / ``jnp.matmul`` / ``jnp.dot`` for the ranks numpy defines."""
    ra, rb = rank(a), rank(b)
    if ra is None or rb is None or ra == 0 or rb == 0:
        return unknown_like([a, b])
    if ra == 1 and rb == 1:
        return dot_general(op, a, b, ((0,), (0,)), ((), ()), out, has_out)
    if rb == 1:
        return dot_general(op, a, b, ((ra - 1,), (0,)), ((), ()), out, has_out)
    if ra == 1:
        return dot_general(op, a, b, ((0,), (rb - 2,)), ((), ()), out, has_out)
    if ra == 2 or rb == 2 or op == "jax.numpy.dot" or op == "jax.Array.dot":
        if rb == 2:
            return dot_general(op, a, b, ((ra - 1,), (0,)), ((), ()), out, has_out)
        return unknown_like([a, b])
    if ra != rb:
        return unknown_like([a, b])
    if a.dims is not None and b.dims is not None and a.dims[:-2] != b.dims[:-2]:
        raise Conflict(ContractionConflict(op, "matmul-batch", a, b, a.dims, b.dims))
    nb = ra - 2
    return dot_general(op, a, b, ((ra - 1,), (nb,)), (tuple(range(nb)), tuple(range(nb))),
                       out, has_out)


def einsum(op: str, subscripts: str, operands: Sequence[ArrayVal], out: Optional[OutSpec] = None,
           has_out: bool = False) -> ArrayVal:
    """One- and two-operand einsum as jnp lowers it: letters in both operands and the
    output are batch dims, letters in both but not the output are contracted, a letter in
    one operand only and not in the output is summed away first."""
    spec = subscripts.replace(" ", "")
    if "..." in spec or "->" not in spec:
        return unknown_like(operands)
    ins, outs = spec.split("->")
    terms = ins.split(",")
    if len(terms) != len(operands) or len(operands) not in (1, 2) \
            or any(rank(o) != len(t) for o, t in zip(operands, terms)):
        return unknown_like(operands)
    if len(set(outs)) != len(outs) or any(len(set(t)) != len(t) for t in terms):
        return unknown_like(operands)
    if len(operands) == 1:
        return _einsum_one(operands[0], terms[0], outs)
    (a, ta), (b, tb) = _sum_lone_letters(operands[0], terms[0], terms[1], outs), \
        _sum_lone_letters(operands[1], terms[1], terms[0], outs)
    batch = [c for c in ta if c in tb and c in outs]
    contract = [c for c in ta if c in tb and c not in outs]
    free_a = [c for c in ta if c not in tb]
    free_b = [c for c in tb if c not in ta]
    natural = batch + free_a + free_b
    if sorted(natural) != sorted(outs):
        return unknown_like(operands)
    perm = [natural.index(c) for c in outs]
    dims_c = ([ta.index(c) for c in contract], [tb.index(c) for c in contract])
    dims_b = ([ta.index(c) for c in batch], [tb.index(c) for c in batch])
    if not has_out:
        return dot_general(op, a, b, dims_c, dims_b, out_perm=perm)
    # out_sharding is in the output's order already
    res = dot_general(op, a, b, dims_c, dims_b, None, True)
    if out is None or res.shape is None:
        return derived(res, dims=None)
    shape = tuple(res.shape[i] for i in perm)
    dims = tuple(out[0]) + ((),) * (len(shape) - len(out[0]))
    if len(dims) != len(shape):
        return unknown_like(operands)
    return derived(res, shape=shape, dims=dims, unreduced=out[1])


def _einsum_one(x: ArrayVal, t: str, outs: str) -> ArrayVal:
    if any(c not in t for c in outs):
        return unknown_like([x])
    red = reduce(x, tuple(i for i in range(len(t)) if t[i] not in outs), False, "sum")
    if red.dims is None:
        return red
    order = [c for c in t if c in outs]
    return transpose(red, [order.index(c) for c in outs])


def _sum_lone_letters(x: ArrayVal, t: str, other: str, outs: str) -> Tuple[ArrayVal, str]:
    """Letters only in this operand and not in the output are summed first."""
    lone = tuple(i for i, c in enumerate(t) if c not in other and c not in outs)
    if not lone:
        return x, t
    return reduce(x, lone, False, "sum"), "".join(c for i, c in enumerate(t) if i not in lone)


# -- how calls read their arguments ---------------------------------------------------------
def _read_matmul(c: Call) -> Optional[tuple]:
    if len(c.pos) < 2 or not isinstance(c.pos[0], ArrayVal) or not isinstance(c.pos[1], ArrayVal):
        return None
    return (c.name, c.pos[0], c.pos[1], c.out(None), c.has_out_sharding)


def _read_einsum(c: Call) -> Optional[tuple]:
    sub = const_str(c.pos[0]) if c.pos else None
    operands = list(c.pos[1:])
    if sub is None or not operands or not all(isinstance(o, ArrayVal) for o in operands):
        return None
    return (c.name, sub, operands, c.out(None), c.has_out_sharding)


def _read_dot_general(c: Call) -> Optional[tuple]:
    a, b, dn = c.arg(0, "lhs"), c.arg(1, "rhs"), c.arg(2, "dimension_numbers")
    if not isinstance(a, ArrayVal) or not isinstance(b, ArrayVal) or not isinstance(dn, TupleVal):
        return None
    pairs = [x.items if isinstance(x, TupleVal) else () for x in dn.items]
    if len(pairs) != 2 or any(len(p) != 2 for p in pairs):
        return None
    (lc, rc), (lb, rb) = [[int_tuple(y) for y in p] for p in pairs]
    if any(t is None or None in t for t in (lc, rc, lb, rb)):
        return None
    return (c.name, a, b, (lc, rc), (lb, rb), c.out(None), c.has_out_sharding)


OPS: Registry = {}
register(OPS, ["jax.numpy.matmul", "jax.numpy.dot", "jax.Array.__matmul__", "jax.Array.dot"],
         Op(matmul, _read_matmul))
register(OPS, ["jax.numpy.einsum"], Op(einsum, _read_einsum))
register(OPS, ["jax.lax.dot_general"], Op(dot_general, _read_dot_general))
