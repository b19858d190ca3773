"""Structured control flow: ``lax.scan``, ``fori_loop``, ``while_loop``, ``cond`` and
``switch``. Their functions run where they are called (no axis names bound); a loop's
carry must keep its type from one iteration to the next, and every branch must return
the same types. That includes the Explicit axes each dim is sharded over and, inside
``shard_map`` (``check_vma=True``), the varying manual axes (``{V:...}``): a carry that
starts replicated and is sharded or varies after one step, or a branch that returns a
replicated default beside a sharded or per-shard value, is a ``TypeError`` in JAX
(checked on 0.10.2 and 0.12.0.1)."""

from __future__ import annotations

from dataclasses import replace
from typing import Iterator, List, Optional, Tuple

import libcst as cst

from ..events import MeshCtx
from ..facts import ControlFlowTypeMismatch, ShardedAxisConflict
from ..interp.state import Arg
from ..values import (UNKNOWN, ArrayVal, Const, DictVal, FuncVal, JitVal, PartialVal,
                      TupleVal, Value, const_int, join, varying_of)
from ..api import ApiCall, ApiContext, models

# Not the pre-check's vocabulary: scan and cond carry whatever the shard_map or mesh
# around them makes (a body in a file of its own is checked from the file that maps
# it)
MAKES_SHARDINGS = False


CONTROL_FLOW = ("jax.lax.scan", "jax.lax.fori_loop", "jax.lax.while_loop", "jax.lax.cond",
                "jax.lax.switch")


def apply(it: ApiContext, f: Value, args: tuple, ctx: MeshCtx) -> Value:
    """What ``f(*args)`` returns, for a function of the source (else unknown)."""
    if isinstance(f, JitVal):
        f = f.func
    if isinstance(f, PartialVal):
        inner = f.func.func if isinstance(f.func, JitVal) else f.func
        if isinstance(inner, FuncVal):
            return it.eval_return(inner, tuple(f.args) + tuple(args), dict(f.kwargs), ctx)
        return UNKNOWN
    if isinstance(f, FuncVal):
        return it.eval_return(f, tuple(args), {}, ctx)
    return UNKNOWN


def _checks_varying(ctx: MeshCtx) -> bool:
    """JAX compares varying axes here: inside a shard_map body with check_vma=True."""
    sm = ctx.shard_map
    return bool(ctx.manual_axes) and sm is not None and sm.check_vma is True


Path = Tuple[object, ...]  # the keys (tuple indices, dict keys) down to a leaf


def differences(a: Value, b: Value, ctx: MeshCtx,
                path: Path = ()) -> Iterator[Tuple[Path, str, Value, Value]]:
    """(leaf path, "varying" or "sharding", leaf of a, leaf of b) wherever two trees of
    values provably differ in a part of the type JAX compares: the manual axes they vary
    over (inside a check_vma shard_map), or the Explicit axes each dim is sharded over."""
    if isinstance(a, TupleVal) and isinstance(b, TupleVal) and len(a.items) == len(b.items):
        for i, (x, y) in enumerate(zip(a.items, b.items)):
            yield from differences(x, y, ctx, path + (i,))
        return
    if isinstance(a, DictVal) and isinstance(b, DictVal) and \
            [k for k, _ in a.items] == [k for k, _ in b.items]:
        for k, x in a.items:
            yield from differences(x, b.get(k), ctx, path + (k,))
        return
    if _checks_varying(ctx):
        va, vb = _leaf_varying(a), _leaf_varying(b)
        if va is not None and vb is not None and (va & ctx.manual_axes) != (vb & ctx.manual_axes):
            yield path, "varying", a, b
            return
    if isinstance(a, ArrayVal) and isinstance(b, ArrayVal) and not (a.numpy or b.numpy) \
            and a.dims is not None and b.dims is not None and len(a.dims) == len(b.dims) \
            and a.dims != b.dims:
        yield path, "sharding", a, b


def _leaf_varying(v: Value) -> Optional[frozenset]:
    if isinstance(v, ArrayVal) and v.numpy:
        return frozenset()  # a host array enters as a replicated constant
    return varying_of(v) if isinstance(v, (ArrayVal, Const)) else None


def _slice_leading(v: Value) -> Value:
    """One step's slice of ``xs`` (the leading dim dropped), leaf by leaf."""
    if isinstance(v, TupleVal):
        return TupleVal(tuple(_slice_leading(x) for x in v.items), v.is_list)
    if isinstance(v, DictVal):
        return DictVal(tuple((k, _slice_leading(x)) for k, x in v.items))
    if isinstance(v, ArrayVal) and not v.numpy:
        if v.shape is None or not v.shape:
            return ArrayVal(None, v.mesh, varying=v.varying)
        dims = v.dims[1:] if v.dims is not None and len(v.dims) == len(v.shape) else None
        return replace(v, shape=v.shape[1:], dims=dims, node=None, spec=None)
    if isinstance(v, Const) and v.value is None:
        return v
    return UNKNOWN


def _sharded_leading(v: Value) -> List[ArrayVal]:
    """The leaves of ``xs`` whose leading (scanned) dim is sharded: JAX 0.10.2 and 0.12.0.1
    raise ValueError ("0th dimension of all xs should be replicated")."""
    if isinstance(v, TupleVal):
        return [a for x in v.items for a in _sharded_leading(x)]
    if isinstance(v, DictVal):
        return [a for _, x in v.items for a in _sharded_leading(x)]
    if isinstance(v, ArrayVal) and v.dims and v.shape and v.dims[0]:
        return [v]
    return []


def _leading(v: Value) -> Optional[int]:
    """The scan length that ``xs`` gives (its leaves' leading dim)."""
    if isinstance(v, TupleVal):
        sizes = [_leading(x) for x in v.items]
    elif isinstance(v, DictVal):
        sizes = [_leading(x) for _, x in v.items]
    elif isinstance(v, ArrayVal) and v.shape:
        return v.shape[0]
    else:
        return None
    known = [s for s in sizes if s is not None]
    return known[0] if known else None


def _stacked(v: Value, n: Optional[int]) -> Value:
    """``ys``: each step's ``y`` stacked along a new, unsharded leading dim."""
    if isinstance(v, TupleVal):
        return TupleVal(tuple(_stacked(x, n) for x in v.items), v.is_list)
    if isinstance(v, DictVal):
        return DictVal(tuple((k, _stacked(x, n)) for k, x in v.items))
    if isinstance(v, ArrayVal) and not v.numpy:
        shape = (n,) + v.shape if v.shape is not None else None
        dims = ((),) + v.dims if v.dims is not None else None
        return replace(v, shape=shape, dims=dims, node=None, spec=None)
    if isinstance(v, Const) and v.value is None:
        return v
    return UNKNOWN


def _carried(it: ApiContext, c: ApiCall, kind: str, init: Value, init_node: Optional[cst.CSTNode],
             out: Value, body: Value) -> Value:
    """A loop's carry after the loop: proven type mismatches recorded; the parts of the
    type that the first step keeps."""
    for path, what, before, after in differences(init, out, c.ctx):
        it.prove(ControlFlowTypeMismatch(kind, "carry", path, what, before, after,
                                         c.ctx.manual_axes, _function_node(body)),
                 _leaf_node(init_node, path) or c.node)
        return UNKNOWN
    return join(init, out)


def _axes_of(v: Value, what: str, ctx: MeshCtx) -> frozenset:
    if what == "varying":
        return (_leaf_varying(v) or frozenset()) & ctx.manual_axes
    dims = v.dims if isinstance(v, ArrayVal) and v.dims is not None else ()
    return frozenset(a for d in dims for a in d)


def _leaf_node(node: Optional[cst.CSTNode], path: Path) -> Optional[cst.CSTNode]:
    """The part of a written tree (``(0, jnp.zeros(4))``) that ``path`` leads to."""
    for key in path:
        if isinstance(node, (cst.Tuple, cst.List)) and isinstance(key, int) \
                and key < len(node.elements) and not any(
                    isinstance(e, cst.StarredElement) for e in node.elements):
            node = node.elements[key].value
        elif isinstance(node, cst.Dict):
            match = [e.value for e in node.elements if isinstance(e, cst.DictElement)
                     and isinstance(e.key, cst.SimpleString) and e.key.evaluated_value == key]
            if not match:
                return node
            node = match[0]
        else:
            return node
    return node


def _site(f: Value, arg: Optional[cst.CSTNode]) -> Optional[cst.CSTNode]:
    """Where a branch's output is written: a lambda where it is passed, a ``def``'s last
    ``return``."""
    node = _function_node(f)
    if isinstance(node, cst.FunctionDef):
        returns = [s for line in node.body.body if isinstance(line, cst.SimpleStatementLine)
                   for s in line.body if isinstance(s, cst.Return)]
        return returns[-1] if returns else node
    return arg


def _function_node(f: Value) -> Optional[cst.CSTNode]:
    if isinstance(f, (JitVal, PartialVal)):
        return _function_node(f.func)
    return f.node if isinstance(f, FuncVal) else None


@models("jax.lax.scan")
def scan(it: ApiContext, c: ApiCall) -> Value:
    it.pass_functions(c.args.args, c.ctx, opaque=False)
    f, init = c.args.get(0, "f"), c.args.get(1, "init")
    xs = c.args.get(2, "xs") if c.args.given(2, "xs") else Const(None)
    for leaf in _sharded_leading(xs):
        it.prove(ShardedAxisConflict("jax.lax.scan", leaf, 0, "scan"),
                 c.args.node(2, "xs") or c.node)
    out = apply(it, f, (init, _slice_leading(xs)), c.ctx)
    if not (isinstance(out, TupleVal) and len(out.items) == 2):
        return UNKNOWN
    carry = _carried(it, c, "scan", init, c.args.node(1, "init"), out.items[0], f)
    n = _leading(xs)
    if n is None:
        n = const_int(c.args.get(3, "length"))
    return TupleVal((carry, _stacked(out.items[1], n)))


@models("jax.lax.fori_loop")
def fori_loop(it: ApiContext, c: ApiCall) -> Value:
    it.pass_functions(c.args.args, c.ctx, opaque=False)
    body, init = c.args.get(2, "body_fun"), c.args.get(3, "init_val")
    index = ArrayVal((), it.context_mesh(c.ctx), varying=frozenset(), dtype="int32",
                     weak=False, dims=())
    out = apply(it, body, (index, init), c.ctx)
    return _carried(it, c, "fori_loop", init, c.args.node(3, "init_val"), out, body)


@models("jax.lax.while_loop")
def while_loop(it: ApiContext, c: ApiCall) -> Value:
    it.pass_functions(c.args.args, c.ctx, opaque=False)
    body, init = c.args.get(1, "body_fun"), c.args.get(2, "init_val")
    out = apply(it, body, (init,), c.ctx)
    return _carried(it, c, "while_loop", init, c.args.node(2, "init_val"), out, body)


@models("jax.lax.cond")
def cond(it: ApiContext, c: ApiCall) -> Value:
    it.pass_functions(c.args.args, c.ctx, opaque=False)
    pos = c.args.pos
    if len(pos) < 3 or c.args.starred:
        return UNKNOWN
    operands = tuple(pos[3:])
    if "operand" in c.args.kw:
        operands = (c.args.kw["operand"].value,)
    branches = [(pos[1], _site(pos[1], c.args.node(1, "true_fun")), "true_fun"),
                (pos[2], _site(pos[2], c.args.node(2, "false_fun")), "false_fun")]
    return _branches(it, c, "cond", branches, operands)


@models("jax.lax.switch")
def switch(it: ApiContext, c: ApiCall) -> Value:
    it.pass_functions(c.args.args, c.ctx, opaque=False)
    fns = c.args.get(1, "branches")
    if isinstance(fns, TupleVal):  # a list of functions: each may run here
        it.pass_functions([Arg(None, "", f, None) for f in fns.items], c.ctx, opaque=False)
    if c.args.starred or not isinstance(fns, TupleVal):
        return UNKNOWN
    node = c.args.node(1, "branches")
    elements = list(node.elements) if isinstance(node, (cst.List, cst.Tuple)) else []
    branches = [(f, _site(f, elements[i].value if i < len(elements) else node), f"branch {i}")
                for i, f in enumerate(fns.items)]
    return _branches(it, c, "switch", branches, tuple(c.args.pos[2:]))


def _branches(it: ApiContext, c: ApiCall, kind: str,
              branches: List[Tuple[Value, Optional[cst.CSTNode], str]], operands: tuple) -> Value:
    """The value of cond/switch: every branch's output, which must agree in type."""
    outs = [apply(it, f, operands, c.ctx) for f, _, _ in branches]
    if not outs:
        return UNKNOWN  # no branch at all: JAX rejects it
    for i in range(1, len(outs)):
        for path, what, a, b in differences(outs[0], outs[i], c.ctx):
            # the branch whose output varies over (or is sharded over) fewer axes is the
            # one to change: a replicated default beside a per-shard value
            first_fewer = len(_axes_of(a, what, c.ctx)) < len(_axes_of(b, what, c.ctx))
            at, other = (branches[0], branches[i]) if first_fewer else (branches[i], branches[0])
            here, there = (a, b) if first_fewer else (b, a)
            it.prove(ControlFlowTypeMismatch(kind, at[2], path, what, here, there,
                                             c.ctx.manual_axes, other[1], other[2]),
                     at[1] or c.node)
            return UNKNOWN
    result = outs[0]
    for o in outs[1:]:
        result = join(result, o)
    return result
