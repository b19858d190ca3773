"""Evaluate a transfer-table row two ways: statically, through the analyzer's op registry,
and under JAX on 8 CPU devices (one process for the whole table).

A row's ``call`` is a Python expression over the inputs ``x``, ``y``, ``z``, ``w`` (typed
by the row) with ``jnp``, ``lax``, ``jax`` and ``P`` in scope. Statically, calls of named
functions and array methods go through ``transfer.call_op`` by canonical name, Python
operators through ``transfer.OPERATORS``, ``x[...]`` through ``transfer.indexing``, and
collectives through ``transfer.collectives``.
"""

from __future__ import annotations

import ast
import json
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

import sharding_types as st
from shardcheck.analyzer import transfer
from shardcheck.analyzer.transfer import indexing, layout
from shardcheck.analyzer.values import ArrayVal, Const, QualName, SpecVal, TupleVal, Value

MESH_NAMES = ("x", "y")
MESH_SIZES = {"x": 2, "y": 4}
INPUT_NAMES = ("x", "y", "z", "w")
_MODULES = {"jnp": "jax.numpy", "lax": "jax.lax", "jax": "jax"}
_COLLECTIVES = ("all_gather", "psum_scatter", "all_to_all")


def abstract(t: str) -> ArrayVal:
    """The analyzer's value for a type written in JAX's syntax."""
    typ = st.parse(t)
    return ArrayVal(tuple(int(d.size) for d in typ.dims), None, None, None, frozenset(typ.varying),
                    dtype=typ.dtype, weak=typ.weak_type, dims=tuple(tuple(d.axes) for d in typ.dims),
                    unreduced=frozenset(typ.unreduced))


def local(t: str) -> ArrayVal:
    """The block a shard_map body sees of an input of type ``t`` placed by its own spec
    over every mesh axis: the axes become manual (varying), the dims local."""
    g = abstract(t)
    shape = tuple(s // transfer.axes_size(a, MESH_SIZES.get) for s, a in zip(g.shape, g.dims))  # type: ignore[arg-type, operator]
    varying = frozenset(a for d in g.dims for a in d)  # type: ignore[union-attr]
    return ArrayVal(shape, None, None, None, varying, dtype=g.dtype, weak=g.weak,
                    dims=((),) * len(shape))


def printed(v: Any) -> Any:
    """A static result as ``str(jax.typeof(...))`` prints it; None where not fully known."""
    if isinstance(v, TupleVal):
        return tuple(printed(i) for i in v.items)
    if isinstance(v, ArrayVal):
        t = v.sharding_type(MESH_NAMES)
        return str(t) if t is not None else None
    return None


def _out_sharding(value: Value, rank: Optional[int]):
    if not isinstance(value, SpecVal):
        return None
    dims = tuple(() if e is None else tuple(e) for e in value.entries)
    if rank is not None:
        dims += ((),) * (rank - len(dims))
    return dims, frozenset(value.unreduced)


class StaticEval:
    """Evaluates one row's expression on abstract values; records the ops it called."""

    def __init__(self, inputs: Sequence[str], mode: str) -> None:
        make = local if mode == "shard_map" else abstract
        self.env: Dict[str, Value] = {n: make(t) for n, t in zip(INPUT_NAMES, inputs)}
        self.traced = mode != "eager"
        self.ops: Set[str] = set()

    def run(self, call: str) -> Value:
        return self.ev(ast.parse(call, mode="eval").body)

    def op(self, name: str, pos: List[Value], kw: Dict[str, Value]) -> Value:
        self.ops.add(name)
        if name not in transfer.OPS:
            raise KeyError(f"{name} is not a registered op")
        return transfer.call_op(name, pos, kw, MESH_SIZES.get, _out_sharding)

    def ev(self, e: ast.expr) -> Value:
        if isinstance(e, ast.Name):
            return self.env[e.id]
        if isinstance(e, ast.Constant):
            return Const(e.value)
        if isinstance(e, (ast.Tuple, ast.List, ast.Set)):
            return TupleVal(tuple(self.ev(i) for i in e.elts), isinstance(e, ast.List))
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub) and isinstance(e.operand, ast.Constant):
            return Const(-e.operand.value)
        if isinstance(e, ast.UnaryOp):
            name = {ast.USub: "Minus", ast.UAdd: "Plus", ast.Invert: "BitInvert"}[type(e.op)]
            return self.op(transfer.OPERATORS[name], [self.ev(e.operand)], {})
        if isinstance(e, ast.BinOp):
            name = {ast.Add: "Add", ast.Sub: "Subtract", ast.Mult: "Multiply", ast.Div: "Divide",
                    ast.FloorDiv: "FloorDivide", ast.Mod: "Modulo", ast.Pow: "Power",
                    ast.MatMult: "MatrixMultiply", ast.BitAnd: "BitAnd", ast.BitOr: "BitOr",
                    ast.BitXor: "BitXor"}[type(e.op)]
            return self.op(transfer.OPERATORS[name], [self.ev(e.left), self.ev(e.right)], {})
        if isinstance(e, ast.Compare):
            name = {ast.Lt: "LessThan", ast.LtE: "LessThanEqual", ast.Gt: "GreaterThan",
                    ast.GtE: "GreaterThanEqual", ast.Eq: "Equal", ast.NotEq: "NotEqual"}[type(e.ops[0])]
            return self.op(transfer.OPERATORS[name], [self.ev(e.left), self.ev(e.comparators[0])], {})
        if isinstance(e, ast.Attribute):
            return self.attribute(e)
        if isinstance(e, ast.Subscript):
            return indexing.index(self.ev(e.value), self.index_items(e.slice), self.traced,  # type: ignore[arg-type]
                                  MESH_SIZES.get)
        if isinstance(e, ast.Call):
            return self.call(e)
        raise ValueError(f"cannot evaluate {ast.dump(e)}")

    def attribute(self, e: ast.Attribute) -> Value:
        dotted = _dotted(e)
        if dotted is not None and dotted.split(".")[0] in _MODULES:
            head, _, tail = dotted.partition(".")
            return QualName(f"{_MODULES[head]}.{tail}")
        base = self.ev(e.value)
        if e.attr == "T":
            return layout.transpose(base, None)  # type: ignore[arg-type]
        if e.attr == "mT":
            return layout.swapaxes(base, -1, -2)  # type: ignore[arg-type]
        raise ValueError(f"attribute {e.attr}")

    def index_items(self, s: ast.expr) -> List[object]:
        out: List[object] = []
        for it in (s.elts if isinstance(s, ast.Tuple) else [s]):
            if isinstance(it, ast.Slice):
                bounds = [self.ev(b).value if b is not None else None  # type: ignore[attr-defined]
                          for b in (it.lower, it.upper, it.step)]
                out.append(indexing.FULL if bounds == [None, None, None] else ("slice", *bounds))
            elif isinstance(it, ast.Constant) and it.value is None:
                out.append(indexing.NEW)
            elif isinstance(it, ast.Constant) and it.value is Ellipsis:
                out.append(indexing.ELLIPSIS)
            elif isinstance(it, ast.Constant) or isinstance(it, ast.UnaryOp):
                out.append(("int", self.ev(it).value))  # type: ignore[attr-defined]
            else:
                out.append(("array", self.ev(it)))
        return out

    def call(self, e: ast.Call) -> Value:
        kw = {k.arg: self.ev(k.value) for k in e.keywords if k.arg}
        pos = [self.ev(a) for a in e.args]
        dotted = _dotted(e.func)
        if dotted == "abs":
            return self.op("jax.Array.__abs__", pos, kw)
        if dotted == "P":
            return SpecVal(tuple(None if isinstance(p, Const) and p.value is None else
                                 (p.value,) if isinstance(p, Const) else
                                 tuple(i.value for i in p.items) for p in pos),  # type: ignore[union-attr]
                           tuple(i.value for i in kw["unreduced"].items) if "unreduced" in kw else ())  # type: ignore[union-attr]
        if dotted is not None and dotted.split(".")[0] in _MODULES:
            head, _, tail = dotted.partition(".")
            name = f"{_MODULES[head]}.{tail}"
            if name.rsplit(".", 1)[-1] in _COLLECTIVES and name.startswith("jax.lax."):
                return self.collective(name, pos, kw)
            return self.op(name, pos, kw)
        assert isinstance(e.func, ast.Attribute)
        return self.op(f"jax.Array.{e.func.attr}", [self.ev(e.func.value)] + pos, kw)

    def collective(self, name: str, pos: List[Value], kw: Dict[str, Value]) -> Value:
        """A collective inside shard_map: local shapes by ``gather_like``; the varying axes
        stay the operand's (what semantic.py computes for these three)."""
        self.ops.add(name)
        x, axis = pos[0], pos[1]
        axes = (axis.value,) if isinstance(axis, Const) else tuple(i.value for i in axis.items)  # type: ignore[union-attr]
        raw_kw = {k: v.value for k, v in kw.items() if isinstance(v, Const)}
        raw_pos = [p.value if isinstance(p, Const) else p for p in pos]
        return transfer.gather_like(name.rsplit(".", 1)[-1], x, transfer.axes_size(axes, MESH_SIZES.get),  # type: ignore[arg-type]
                                    raw_kw, raw_pos, x.varying)  # type: ignore[union-attr]


def _dotted(e: ast.expr) -> Optional[str]:
    if isinstance(e, ast.Name):
        return e.id
    if isinstance(e, ast.Attribute):
        head = _dotted(e.value)
        return f"{head}.{e.attr}" if head is not None else None
    return None


def static_outcome(call: str, inputs: Sequence[str], mode: str) -> Tuple[str, Any, Set[str]]:
    """("type", printed result, ops) or ("conflict", fact, ops)."""
    ev = StaticEval(inputs, mode)
    try:
        res = ev.run(call)
    except transfer.Conflict as c:
        return "conflict", c.fact, ev.ops
    return "type", printed(res), ev.ops


# -- JAX ----------------------------------------------------------------------------------
_JAX_RUNNER = r'''
import json
import jax, jax.numpy as jnp
from jax import lax
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
import sharding_types as st

mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
NAMES = ("x", "y", "z", "w")


def _typeof(out):
    leaves = jax.tree.leaves(out)
    if isinstance(out, (tuple, list)):
        return [str(jax.typeof(v)) for v in leaves]
    return str(jax.typeof(out))


def _concrete(t):
    typ = st.parse(t)
    spec = P(*[a[0] if len(a) == 1 else (a if a else None) for a in (d.axes for d in typ.dims)])
    return jax.device_put(jnp.zeros(tuple(int(d.size) for d in typ.dims), typ.dtype),
                          NamedSharding(mesh, spec))


def _run(row):
    call, inputs, mode = row["call"], row["inputs"], row["mode"]
    rec = {}
    env = {"jnp": jnp, "lax": lax, "jax": jax, "P": P}
    if mode == "eager":
        with jax.set_mesh(mesh):
            args = [_concrete(t) for t in inputs]
            rec["out"] = _typeof(eval(call, dict(env, **dict(zip(NAMES, args)))))
        return rec["out"]
    if mode == "shard_map":
        typ = [st.parse(t) for t in inputs]
        specs = [P(*[a[0] if len(a) == 1 else (a if a else None) for a in (d.axes for d in t.dims)])
                 for t in typ]

        def body(*a):
            out = eval(call, dict(env, **dict(zip(NAMES, a))))
            rec["out"] = _typeof(out)
            return a[0]
        f = jax.shard_map(body, in_specs=tuple(specs), out_specs=specs[0])
        with jax.set_mesh(mesh):
            jax.eval_shape(f, *[st.abstract_array(t, mesh) for t in inputs])
        return rec["out"]

    def f(*a):
        out = eval(call, dict(env, **dict(zip(NAMES, a))))
        rec["out"] = _typeof(out)
        return out
    with jax.set_mesh(mesh):
        jax.eval_shape(f, *[st.abstract_array(t, mesh) for t in inputs])
    return rec["out"]


RESULT = []
for row in json.loads(ROWS_JSON):
    try:
        out = _run(row)
        RESULT.append({"status": "ok", "out": out})
    except Exception as e:
        RESULT.append({"status": "error", "type": type(e).__name__, "error": str(e)[:1500]})
RESULT = {"version": jax.__version__, "rows": RESULT}
'''


def jax_program(rows: Sequence[Dict[str, Any]]) -> str:
    """One program running every row under JAX; its RESULT lists each row's outcome."""
    return f"ROWS_JSON = {json.dumps(json.dumps(list(rows)))}\n" + _JAX_RUNNER
