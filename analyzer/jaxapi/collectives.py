"""Collectives (``psum``, ``all_gather``, ``pcast``, ``axis_index``, ...): the axes they
name, and the varying axes of their results."""

from __future__ import annotations

from dataclasses import replace
from typing import List, Optional, Tuple

from . import names as api
from .. import transfer as tr
from ..events import CollectiveCall
from ..facts import CollectiveSplitSize, InvariantReduction, PermutationClash, VaryingGather
from ..values import (UNKNOWN, ArrayVal, Const, TupleVal, Value, const_int, const_str,
                      str_tuple, varying_of)
from ..provenance import Origin, leaves, note, origin_of
from ..api import ApiCall, ApiContext, models

# The pre-check's vocabulary (jax.lax's collectives): the names this family models
# make sharding values, so a file spelling one is analysed
# (analyzer/registry_manifest.py).
MAKES_SHARDINGS = True


_REDUCTIONS = ("psum", "pmean", "pmax", "pmin")
_MOVES = ("all_gather", "psum_scatter", "ppermute", "all_to_all", "pshuffle")


@models(*api.COLLECTIVES)
def collective(it: ApiContext, c: ApiCall) -> Value:
    axes = str_tuple(c.args.get(api.COLLECTIVES[c.name], "axis_name"))
    if axes is not None and it.recording():
        it.record("collectives", CollectiveCall(c.name, axes, c.node, c.ctx))  # type: ignore[arg-type]  # unknown names kept as None
    if axes is None or None in axes:
        return UNKNOWN
    names = tuple(a for a in axes if a is not None)
    bound = c.ctx.proven_bound_axes
    if bound is not None and not set(names) <= bound:
        return UNKNOWN  # an unbound axis (SC202): JAX raises here, nothing after runs
    if c.short in ("psum", "pmean") and c.args.pos:
        _check_invariant_operand(it, c, frozenset(names))
    if (c.short in _SPLITS or c.short == "ppermute") and c.args.pos and not c.args.starred \
            and c.ctx.shard_map is not None and set(names) <= c.ctx.manual_axes:
        n = tr.axes_size(names, it.sizes(c.ctx))  # the devices along the manual axes
        if n:
            (_check_permutation if c.short == "ppermute" else _check_split)(it, c, names, n)
    out = _result(it, c, names)
    if c.short == "all_gather" and "to" not in c.args.kw and isinstance(out, ArrayVal) \
            and out.varying is not None and out.varying & frozenset(names):
        # every device holds the whole gathered array, yet JAX types it as varying
        it.prove(VaryingGather(out, tuple(a for a in names if a in out.varying)), c.node)
    return out


def _check_invariant_operand(it: ApiContext, c: ApiCall, axes: frozenset) -> None:
    """``psum``/``pmean`` of a value that is already invariant over the axes, for a known
    reason: psum then adds identical copies (the result is the axis size times too
    large); a gradient w.r.t. a replicated input is already summed by JAX under
    check_vma, so pmean returns the sum, not the mean."""
    sm = c.ctx.shard_map
    if sm is None or not (axes & c.ctx.manual_axes):
        return
    for path, leaf in leaves(c.args.pos[0]):
        origin = origin_of(leaf)
        vary = varying_of(leaf)
        if origin is None or vary is None:
            continue
        redundant = (axes - vary) & origin.axes & c.ctx.manual_axes
        if not redundant:
            continue
        if origin.kind == "gradient":
            if sm.check_vma is not True:
                continue  # without check_vma JAX does not sum the gradient
        elif c.short != "psum":
            continue  # pmean of an invariant value is the value: right numbers
        size = tr.axes_size(tuple(sorted(redundant)), it.sizes(c.ctx))
        it.prove(InvariantReduction(c.short, tuple(sorted(redundant)), origin.kind,
                                    origin.node, size, path), c.node)
        return


# the collectives that split a dim of the local block over the axis: that dim's parameter
# (its position, its default)
_SPLITS = {"psum_scatter": ("scatter_dimension", 99, 0),  # keyword-only
           "all_to_all": ("split_axis", 2, None)}


def _check_split(it: ApiContext, c: ApiCall, axes: Tuple[str, ...], n: int) -> None:
    """``psum_scatter``/``all_to_all`` over manual axes (``n`` devices) of a block whose
    split dim they cannot split: tiled, its size must divide by ``n``; untiled, equal it."""
    x = c.args.pos[0]
    if not isinstance(x, ArrayVal) or x.shape is None:
        return
    name, i, default = _SPLITS[c.short]
    dim = const_int(c.args.get(i, name)) if c.args.given(i, name) else default
    tiled = c.args.keyword("tiled") or Const(False)
    if dim is None or not isinstance(tiled, Const) or not isinstance(tiled.value, bool) \
            or not -len(x.shape) <= dim < len(x.shape):
        return
    dim %= len(x.shape)
    size = x.shape[dim]
    if size is None or (size % n == 0 if tiled.value else size == n):
        return
    it.prove(CollectiveSplitSize(c.short, axes, dim, size, n, tiled.value, x), c.node)


def _check_permutation(it: ApiContext, c: ApiCall, axes: Tuple[str, ...], n: int) -> None:
    """``ppermute``'s pairs, every one known, two of which share a source or a
    destination modulo the axes' size ``n`` (a ring built for another count of devices)."""
    perm = c.args.get(2, "perm")
    if not isinstance(perm, TupleVal):
        return
    pairs: List[Tuple[int, int]] = []
    for p in perm.items:
        ends = [const_int(e) for e in p.items] if isinstance(p, TupleVal) else []
        if len(ends) != 2 or ends[0] is None or ends[1] is None:
            return
        pairs.append((ends[0], ends[1]))
    for k, end in ((0, "source"), (1, "destination")):
        first: dict = {}
        for pair in pairs:
            other = first.setdefault(pair[k] % n, pair)
            if other is not pair:
                it.prove(PermutationClash(axes, tuple(pairs), n, (other, pair), end), c.node)
                return


def _result(it: ApiContext, c: ApiCall, axes: Tuple[str, ...]) -> Value:
    """The varying axes after a collective, as JAX 0.10.2 types them (checked against
    jax.typeof in tests): reductions drop the reduced axes; axis_index varies over its
    axis; pcast(to='varying') adds axes; all_gather, psum_scatter, ppermute and
    all_to_all keep the operand's."""
    short = c.short
    if short == "axis_index":
        return ArrayVal((), it.context_mesh(c.ctx), varying=frozenset(axes), dtype="int32",
                        weak=False, dims=())
    n_ax = tr.axes_size(axes, it.sizes(c.ctx))
    if short == "axis_size":
        return Const(n_ax) if n_ax is not None else UNKNOWN
    x = c.args.pos[0] if c.args.pos else UNKNOWN
    if short == "psum" and isinstance(x, Const) and type(x.value) in (int, float):
        # a Python number: JAX 0.10.2 returns the number times the axes' size, a Python
        # number too (``psum(x.shape[0], 'data')`` counts the rows of every shard)
        return Const(x.value * n_ax) if n_ax is not None else UNKNOWN
    vx = varying_of(x)
    if vx is None:
        return UNKNOWN
    if not isinstance(x, ArrayVal):
        x = ArrayVal(None)
    to: Optional[str] = const_str(c.args.kw["to"].value) if "to" in c.args.kw else None
    if short in _REDUCTIONS:
        res = replace(x, node=None, spec=None, varying=vx - frozenset(axes))
        if short == "pmean":
            dt, weak = tr.to_float((x.dtype, x.weak))
            res = replace(res, dtype=dt, weak=weak)
        note(res, Origin("reduced", c.node, frozenset(axes)))
        return res
    if short == "pcast":
        if to == "varying":
            return replace(x, node=None, spec=None, varying=vx | frozenset(axes))
        return UNKNOWN
    if short == "all_gather" and to == "invarying":  # the gathered whole, typed invariant
        gathered = tr.gather_like(short, x, n_axis=n_ax, kw={k: (a.value.value if isinstance(
            a.value, Const) else a.value) for k, a in c.args.kw.items() if k != "to"},
            pos=[p.value if isinstance(p, Const) else p for p in c.args.pos], varying=vx)
        if isinstance(gathered, ArrayVal):
            return replace(gathered, varying=vx - frozenset(axes))
        return UNKNOWN
    if short in _MOVES:
        if "to" in c.args.kw and to != "varying":
            return UNKNOWN
        if short in ("ppermute", "pshuffle"):
            return replace(x, node=None, spec=None, varying=vx)
        kw = {k: (a.value.value if isinstance(a.value, Const) else a.value)
              for k, a in c.args.kw.items()}
        pos = [p.value if isinstance(p, Const) else p for p in c.args.pos]
        return tr.gather_like(short, x, n_axis=n_ax, kw=kw, pos=pos, varying=vx)
    return UNKNOWN
