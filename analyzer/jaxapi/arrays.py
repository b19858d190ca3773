"""Arrays: operators (``+``, ``@``, comparisons, indexing), attributes (``x.T``,
``x.shape``) and methods, the ``jax.numpy``/``jax.nn``/``jax.lax`` functions typed by the
op transfer rules, and what any other call may do. Deprecated JAX names are recorded
wherever they are referenced."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, List, Optional, Tuple

import libcst as cst

from sharding_types import AxisType

from .. import compat, ops
from .. import transfer as tr
from ..events import ApiUse, MeshCtx
from ..interp.state import Env
from ..transfer.arrays import no_sizes
from ..transfer.call import no_out_sharding
from ..values import (UNKNOWN, ArrayVal, Const, FuncVal, JitVal, PartialVal, QualName,
                      ShardingVal, SpecVal, TupleVal, TypeOfVal, Value, const_int, int_tuple,
                      union_varying)
from .constructors import resolve_reshape, unmodelled
from .mesh import check_meshes
from .placement import check_out_sharding
from ..api import (ApiCall, ApiContext, attribute_of, hook, index_of, method_of, models,
                   models_prefix)
from .specs import out_sharding_fn

# Not the pre-check's vocabulary: arrays without a sharding never conflict: a sharded
# operand comes from a name of the vocabulary
MAKES_SHARDINGS = False


_OP_SYMBOLS = {"Add": "+", "Subtract": "-", "Multiply": "*", "Divide": "/", "FloorDivide": "//",
               "Modulo": "%", "Power": "**", "BitAnd": "&", "BitOr": "|", "BitXor": "^",
               "MatrixMultiply": "@"}
_ARRAY_FUNCTION_PREFIXES = ("jax.numpy.", "jax.nn.", "jax.lax.", "jax.scipy.special.",
                            "jax.scipy.linalg.")
_CONTRACTIONS = ("jax.numpy.dot", "jax.numpy.matmul", "jax.numpy.einsum", "jax.lax.dot_general",
                 "jax.lax.dot", "jax.numpy.tensordot")
# Methods whose result varies over the union of the operands' varying axes even when
# the op rules cannot type it.
_VARYING_METHODS = ("sum", "mean", "max", "min", "prod", "transpose", "squeeze", "ravel",
                    "flatten", "swapaxes", "std", "var", "clip", "round", "conj", "cumsum",
                    "argmax", "argmin", "dot", "real", "imag", "__getitem__")


def _varying_fallback(values: List[Value], node: cst.CSTNode) -> Value:
    """What is known of an untyped result: it varies over its operands' axes."""
    vary = union_varying(values)
    return ArrayVal(None, node=node, varying=vary) if vary is not None else UNKNOWN


# -- the fallback and the array functions --------------------------------------------------
@models("")
def any_call(it: ApiContext, c: ApiCall) -> Value:
    return unmodelled(it, c)


@models(*_CONTRACTIONS)
def contraction(it: ApiContext, c: ApiCall) -> Value:
    if check_meshes(it, c.node, c.args.pos, c.ctx, f"`{c.name}`"):
        return UNKNOWN  # JAX raises here
    check_out_sharding(it, c, None)
    fallback = _varying_fallback([a.value for a in c.args.args if a.keyword is None], c.node)
    if c.args.starred:
        return fallback
    return it.infer(c.node, ops.call_op, c.name, c.args.pos, c.args.kw_values(), c.node,
                    it.sizes(c.ctx), out_sharding_fn(c.ctx), fallback=fallback)


@models_prefix(*_ARRAY_FUNCTION_PREFIXES)
def array_function(it: ApiContext, c: ApiCall) -> Value:
    """Any other jax.numpy/nn/lax function: typed by the op rules where they know it."""
    if check_meshes(it, c.node, c.args.pos, c.ctx, f"`{c.name}`"):
        return UNKNOWN  # JAX raises here
    if c.args.kw.get("out_sharding") is not None:
        check_out_sharding(it, c, None)
    it.pass_functions(c.args.args, c.ctx)
    if any(isinstance(a.value, (FuncVal, JitVal, PartialVal)) for a in c.args.args):
        return UNKNOWN
    vary = union_varying([a.value for a in c.args.args if a.keyword not in ("axis", "dtype")])
    fallback = ArrayVal(None, node=c.node, varying=vary) if vary is not None else UNKNOWN
    if c.args.starred:
        return fallback
    x = c.args.pos[0] if c.args.pos else None
    res = it.infer(c.node, ops.call_op, c.name, c.args.pos, c.args.kw_values(), c.node,
                   it.sizes(c.ctx, x), out_sharding_fn(c.ctx), fallback=fallback)
    if isinstance(res, ArrayVal) and vary is not None and res.varying != vary:
        res = replace(res, varying=vary)
    return res


# -- operators ------------------------------------------------------------------------------
@hook("binop")
def binop(it: ApiContext, op: str, a: Value, b: Value, node: cst.CSTNode, ctx: MeshCtx) -> Value:
    if check_meshes(it, node, (a, b), ctx, f"`{_OP_SYMBOLS.get(op, op)}`"):
        return UNKNOWN  # JAX raises here
    if all(x.numpy for x in (a, b) if isinstance(x, ArrayVal)):
        return ArrayVal(None, node=node, numpy=True)
    fallback = _varying_fallback([a, b], node)
    if op == "MatrixMultiply" and not (isinstance(a, ArrayVal) and isinstance(b, ArrayVal)):
        return fallback
    name = tr.OPERATORS.get(op)
    if name is None:
        return fallback
    res = it.infer(node, ops.call_op, name, [a, b], {}, node, it.sizes(ctx), out_sharding_fn(ctx),
                   fallback=fallback)
    if op == "Divide" and isinstance(res, ArrayVal):
        dt, weak = tr.to_float((res.dtype, res.weak))
        res = replace(res, dtype=dt, weak=weak)
    return res


@hook("compare")
def compare(it: ApiContext, a: Value, b: Value, node: cst.Comparison) -> Value:
    fallback = ArrayVal(None, varying=union_varying([a, b]))
    name = tr.OPERATORS.get(type(node.comparisons[0].operator).__name__)
    if name is None:
        return fallback
    res = it.infer(node, ops.call_op, name, [a, b], {}, node, no_sizes, no_out_sharding,
                   fallback=fallback)
    return replace(res, dtype="bool", weak=False) if isinstance(res, ArrayVal) else res


@hook("unary")
def unary(it: ApiContext, op: cst.BaseUnaryOp, v: ArrayVal, node: cst.CSTNode) -> Value:
    name = tr.OPERATORS.get(type(op).__name__)  # -x, +x, ~x; `not x` has no array result
    if name is None:
        return UNKNOWN
    return it.infer(node, ops.call_op, name, [v], {}, node, no_sizes, no_out_sharding)


def _index_items(it: ApiContext, e: cst.Subscript, env: Env, ctx: MeshCtx
                 ) -> Tuple[List[Any], List[Value]]:
    """The items of ``x[...]`` as ``transfer.index`` reads them, and the values read."""
    items: List[Any] = []
    parts: List[Value] = []
    for s in e.slice:
        sl = s.slice
        if isinstance(sl, cst.Slice):
            vals = [it.ev(x, env, ctx) if x is not None else Const(None)
                    for x in (sl.lower, sl.upper, sl.step)]
            parts.extend(vals)
            if all(isinstance(v, Const) and v.value is None for v in vals):
                items.append(tr.FULL)
            else:
                items.append(("slice",) + tuple(
                    v.value if isinstance(v, Const) and (v.value is None or const_int(v) is not None)
                    else "?" for v in vals))
            continue
        assert isinstance(sl, cst.Index)
        v = it.ev(sl.value, env, ctx)
        parts.append(v)
        if isinstance(v, Const) and v.value is None:
            items.append(tr.NEW)
        elif isinstance(v, Const) and v.value is Ellipsis:
            items.append(tr.ELLIPSIS)
        elif const_int(v) is not None:
            items.append(("int", const_int(v)))
        elif isinstance(v, ArrayVal) and v.dtype != "bool" and tr.rank(v) is not None:
            items.append(("array", v))
        else:
            items.append(None)
    return items, parts


@hook("index")
def index(it: ApiContext, base: ArrayVal, e: cst.Subscript, env: Env, ctx: MeshCtx) -> Value:
    """``x[...]``: basic indexing through ``transfer.index``."""
    items, parts = _index_items(it, e, env, ctx)
    vary = union_varying([base] + parts)
    fallback = ArrayVal(None, node=e, varying=vary) if vary is not None else UNKNOWN
    # traced code slices where eager code gathers; where nobody knows (a function not
    # provably eager) the traced rule flags only what both modes reject
    res = it.infer(e, _index_at, base, items, e, not ctx.eager, it.sizes(ctx, base),
                   fallback=fallback)
    if isinstance(res, ArrayVal) and res.varying != vary:
        res = replace(res, varying=vary)
    if isinstance(res, ArrayVal) and base.numpy:  # a host array's part is on the host
        res = replace(res, numpy=True)
    return res


# -- x.at[...]: indexed updates and gathers -----------------------------------------------------
@dataclass(frozen=True, eq=False)
class AtVal(Value):
    """``x.at``: indexing it names the places of an indexed update or gather."""

    array: ArrayVal


@dataclass(frozen=True, eq=False)
class AtIndexVal(Value):
    """``x.at[...]``: ``get``, ``set``, ``add``, ... at those places."""

    array: ArrayVal
    items: Tuple[Any, ...]
    parts: Tuple[Value, ...]


_UPDATES = ("set", "add", "subtract", "multiply", "mul", "divide", "power", "min", "max",
            "apply")


@index_of(AtVal)
def at_index(it: ApiContext, base: Value, e: cst.Subscript, env: Env,
             ctx: MeshCtx) -> Optional[Value]:
    assert isinstance(base, AtVal)
    items, parts = _index_items(it, e, env, ctx)
    return AtIndexVal(base.array, tuple(items), tuple(parts))


@method_of(AtIndexVal)
def at_method(it: ApiContext, at: Value, c: ApiCall) -> Optional[Value]:
    """``x.at[i].get()`` is ``x[i]`` (the same checks); with ``out_sharding=`` the
    gather's shape, sharded as asked. ``x.at[i].set(v)`` (``add``, ...) is a scatter:
    ``x``'s type where no indexed dim of ``x`` is sharded and ``v`` is unsharded (JAX
    0.10.2 asks for ``out_sharding=`` on a sharded indexed dim, and rejects a sharded
    update it must broadcast); otherwise unknown here."""
    assert isinstance(at, AtIndexVal)
    x, node = at.array, c.node
    if c.args.starred:
        return UNKNOWN
    vary = union_varying([x, *at.parts, *c.args.pos])
    if c.name == "get":
        if c.args.kw.get("out_sharding") is None:
            res = it.infer(node, _index_at, x, list(at.items), node, not c.ctx.eager,
                           it.sizes(c.ctx, x), fallback=UNKNOWN)
        else:
            check_out_sharding(it, c, None)
            plain = [("array", replace(i[1], dims=_replicated(i[1])))
                     if isinstance(i, tuple) and i[0] == "array" else i for i in at.items]
            shaped = tr.indexing.index(replace(x, dims=_replicated(x)), plain)
            out = out_sharding_fn(c.ctx)(c.args.kw["out_sharding"].value, tr.rank(shaped))
            if shaped.shape is None or out is None or len(out[0]) != len(shaped.shape):
                return ArrayVal(None, node=node, varying=vary) if vary is not None else UNKNOWN
            res = replace(shaped, node=node, dims=out[0], unreduced=out[1])
        if isinstance(res, ArrayVal) and vary is not None and res.varying != vary:
            res = replace(res, varying=vary)
        return res
    if c.name not in _UPDATES:
        return None
    if "out_sharding" in c.args.kw or x.dims is None or x.shape is None:
        return UNKNOWN
    expanded = tr.indexing.expand(list(at.items), len(x.dims))
    if expanded is None or any(it_ != tr.FULL and axes for it_, axes in zip(
            [i for i in expanded if i != tr.NEW], x.dims)):
        return UNKNOWN
    if any(isinstance(i, tuple) and i[0] == "array" and i[1].dims != _replicated(i[1])
           for i in at.items):
        return UNKNOWN
    for v in c.args.pos[:1]:
        if isinstance(v, ArrayVal) and (v.dims is None or any(v.dims)):
            return UNKNOWN
        if not isinstance(v, (ArrayVal, Const)) and c.name != "apply":
            return UNKNOWN
    return replace(x, node=node, spec=None, varying=vary)


def _replicated(x: ArrayVal) -> Optional[Tuple[Tuple[str, ...], ...]]:
    return None if x.dims is None else ((),) * len(x.dims)


def _index_at(x: ArrayVal, items: List[Any], node: cst.CSTNode, traced: bool,
              sizes: tr.Sizes) -> ArrayVal:
    return replace(tr.indexing.index(x, items, traced, sizes), node=node)


# -- attributes and methods -------------------------------------------------------------------
@attribute_of(ArrayVal)
def array_attribute(it: ApiContext, base: Value, attr: str, node: cst.CSTNode,
                    ctx: MeshCtx) -> Value:
    assert isinstance(base, ArrayVal)
    if attr == "sharding":
        # a concrete array's NamedSharding (a traced one has none: JAX raises
        # AttributeError and points to jax.typeof), read from its dims: on Explicit axes
        # only (on Auto ones the dims are empty, whatever spec placed the array)
        explicit = base.mesh is not None and base.mesh.types is not None and \
            all(t == AxisType.Explicit for t in base.mesh.types)
        return typed_sharding(base, ctx, node) if ctx.eager and explicit else UNKNOWN
    if attr == "shape" and base.shape is not None:
        return TupleVal(tuple(Const(s) if s is not None else UNKNOWN for s in base.shape))
    if attr == "ndim" and base.shape is not None:
        return Const(len(base.shape))
    if attr == "T":
        return replace(tr.layout.transpose(base, None), node=node)
    if attr == "at" and not base.numpy:
        return AtVal(base)
    if attr == "mT" and tr.rank(base):
        return replace(tr.layout.swapaxes(base, -1, -2), node=node)
    if attr == "size" and base.shape is not None and None not in base.shape:
        return Const(math.prod(s for s in base.shape if s is not None))
    if attr == "dtype" and base.dtype is not None:
        return QualName(f"jax.numpy.{base.dtype}")
    return UNKNOWN


@models("jax.numpy.shape", "jax.numpy.ndim", "jax.numpy.size", "numpy.shape", "numpy.ndim",
        "numpy.size")
def shape_function(it: ApiContext, c: ApiCall) -> Value:
    """``jnp.shape(x)``, ``jnp.ndim(x)``, ``jnp.size(x)`` (and NumPy's) of an array: what
    ``x.shape``, ``x.ndim`` and ``x.size`` are (a static shape, on host and device)."""
    x = c.args.pos[0] if len(c.args.pos) == 1 and not c.args.kw and not c.args.starred \
        else None
    if not isinstance(x, ArrayVal):
        return UNKNOWN
    return array_attribute(it, x, c.name.rpartition(".")[2], c.node, c.ctx)


@models("jax.typeof")
def typeof(it: ApiContext, c: ApiCall) -> Value:
    """``jax.typeof(x)``: x's abstract value (``.sharding``, ``.shape``, ``.dtype``)."""
    x = c.args.pos[0] if len(c.args.pos) == 1 and not c.args.kw else None
    return TypeOfVal(x) if isinstance(x, ArrayVal) and not x.numpy else UNKNOWN


@attribute_of(TypeOfVal)
def typeof_attribute(it: ApiContext, base: Value, attr: str, node: cst.CSTNode,
                     ctx: MeshCtx) -> Value:
    assert isinstance(base, TypeOfVal)
    if attr == "sharding":
        return typed_sharding(base.array, ctx, node)
    if attr in ("shape", "ndim", "dtype", "size"):
        return array_attribute(it, base.array, attr, node, ctx)
    return UNKNOWN


def typed_sharding(x: ArrayVal, ctx: MeshCtx, node: cst.CSTNode) -> Value:
    """The NamedSharding ``jax.typeof(x).sharding`` is: x's mesh, and a spec of one entry
    per dim, the mesh axes typeof shows after '@' (``float32[8@data,16]``:
    ``P('data', None)``). Unknown inside shard_map (JAX gives the mesh its Manual axes
    there) and for an array with unknown dims, varying or unreduced axes. The mesh is
    x's own: JAX's is the AbstractMesh of it (same names, sizes and types)."""
    if x.mesh is None or x.dims is None or x.shape is None or len(x.dims) != len(x.shape) \
            or ctx.manual_axes or ctx.shard_map is not None \
            or x.varying != frozenset() or x.unreduced != frozenset():
        return UNKNOWN
    spec = SpecVal(tuple(tuple(d) if d else None for d in x.dims), node=node)
    return ShardingVal(x.mesh, spec, node)


def _reshaped(base: ArrayVal, args: Any, e: cst.CSTNode) -> ArrayVal:
    pos = args.pos
    if args.starred or not pos:  # `x.reshape(*shape)`: the sizes are not all in view
        shape: Any = None
    else:
        shape = int_tuple(pos[0]) if len(pos) == 1 else tuple(const_int(p) for p in pos)
    return ArrayVal(resolve_reshape(base.shape, shape), node=e, varying=base.varying,
                    numpy=base.numpy, dtype=base.dtype if base.numpy else None)


@method_of(ArrayVal)
def array_method(it: ApiContext, base: Value, c: ApiCall) -> Optional[Value]:
    assert isinstance(base, ArrayVal)
    meth, e, args = c.name, c.node, c.args
    if meth in _VARYING_METHODS or meth in ("astype", "reshape"):
        if check_meshes(it, e, [base] + list(args.pos), c.ctx, f"`.{meth}()`"):
            return UNKNOWN  # JAX raises here
    if meth == "reshape" and base.numpy and not args.starred:  # a host array: its shape only
        return _reshaped(base, args, e)
    if not args.starred:
        pos = [a.value for a in args.args if a.keyword is None]
        fallback = _varying_fallback([base] + pos, e)
        res = it.infer(e, ops.method, base, meth, pos, args.kw_values(), e,
                       it.sizes(c.ctx, base), out_sharding_fn(c.ctx), fallback=None)  # type: ignore[arg-type]  # None marks "not typed"
        if res is not None:
            return res
        if it.conflict_at(e):
            return fallback
    if meth == "reshape":
        return _reshaped(base, args, e)
    if meth in ("astype", "block_until_ready", "copy"):
        return ArrayVal(base.shape, base.mesh, base.spec, e, base.varying)
    if meth in _VARYING_METHODS:
        return _varying_fallback([base] + [a.value for a in args.args if a.keyword is None], e)
    return UNKNOWN


# -- deprecated names ---------------------------------------------------------------------------
@hook("reference")
def reference(it: ApiContext, name: str, node: cst.CSTNode, how: str) -> None:
    entry = compat.deprecated_entry(name)
    if entry is not None:
        it.record("api_uses", ApiUse(entry, node, how, name if entry != name else ""))
