"""Function transformations: ``grad``/``value_and_grad``, control flow
and wrappers that run a function where they are called (``scan``, ``cond``,
``checkpoint``, ...), axis-binding maps (``vmap``, ``pmap``), ``functools.partial``, and
decorators."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Dict, Tuple

import libcst as cst

from . import names as api
from .. import transfer as tr
from ..events import MeshCtx
from ..interp.state import Arg, CallArgs, Env, GradVal, ShardMapFactory
from ..values import (UNKNOWN, ArrayVal, Const, DictVal, FuncVal, JitVal, PartialVal,
                      QualName, TupleVal, Value, const_int, const_str)
from .control_flow import CONTROL_FLOW
from ..provenance import Origin, leaves, note
from ..api import ApiCall, ApiContext, callee_handler, calls, hook, models

# Not the pre-check's vocabulary: transforms run functions: what they carry comes from
# the vocabulary elsewhere
MAKES_SHARDINGS = False


# Run the function they are given where they are called, binding no axis names.
TRANSPARENT_WRAPPERS = ("jax.grad", "jax.value_and_grad", "jax.checkpoint", "jax.remat",
                        "jax.named_call", "jax.jacfwd", "jax.jacrev", "jax.hessian",
                        "jax.custom_vjp", "jax.custom_jvp", "jax.lax.scan", "jax.lax.fori_loop",
                        "jax.lax.while_loop", "jax.lax.cond", "jax.lax.switch", "jax.lax.map",
                        "jax.tree.map", "jax.tree_util.tree_map")
# Bind an axis name (``axis_name=``) inside the function they map.
BINDING_WRAPPERS = ("jax.vmap", "jax.pmap", "jax.experimental.maps.xmap")
# Decorators that return a function called exactly like the one they wrap.
TRANSPARENT_DECORATORS = ("staticmethod", "classmethod", "functools.wraps", "functools.cache",
                          "functools.lru_cache", "functools.cached_property", "property",
                          "typing.overload", "sharding_types.check_shardings",
                          "jax.named_scope", "contextlib.contextmanager",
                          # Linen marks the method and returns it (flax 0.12.8)
                          "flax.linen.compact", "flax.linen.module.compact",
                          "flax.linen.nowrap", "flax.linen.module.nowrap")
_TREE_MAPS = ("jax.tree.map", "jax.tree_util.tree_map")


@models("jax.grad", "jax.value_and_grad")
def grad(it: ApiContext, c: ApiCall) -> Value:
    if not c.args.pos:
        return wrapper(it, c)
    return GradVal(c.args.pos[0], c.name == "jax.value_and_grad", c.args.kw.get("argnums"),
                   c.args.kw.get("has_aux"))


@calls(GradVal)
def call_grad_value(it: ApiContext, callee: Value, c: ApiCall) -> Value:
    it.pass_functions(c.args.args, c.ctx)
    assert isinstance(callee, GradVal)
    return call_grad(it, callee, c)


def call_grad(it: ApiContext, g: GradVal, c: ApiCall) -> Value:
    """Calling ``grad(f)``: f runs on the arguments; each gradient has the type of its
    primal (JAX 0.10.2 gives cotangents their primal's sharding). ``argnums`` may be a
    tuple (a tuple of gradients); with ``has_aux`` f returns ``(output, aux)``, and grad
    gives ``(grads, aux)``, value_and_grad ``((output, aux), grads)``."""
    pos, kws, ctx = tuple(c.args.pos), c.args.kw_values(), c.ctx.traced()
    it.note_call(g.func, ctx, pos, c.args.known_keywords())
    argnums = 0 if g.argnums is None else _argnums(g.argnums.value)
    has_aux = g.has_aux.value if g.has_aux is not None else Const(False)
    aux = not (isinstance(has_aux, Const) and has_aux.value is False)
    if aux and not (isinstance(has_aux, Const) and has_aux.value is True):
        return UNKNOWN  # has_aux given, but not a constant
    nums = argnums if isinstance(argnums, tuple) else (argnums,)
    if argnums is None or any(n is None or not 0 <= n < len(pos) for n in nums):
        return UNKNOWN
    grads = (TupleVal(tuple(_grad_like(pos[n]) for n in nums)) if isinstance(argnums, tuple)
             else _grad_like(pos[argnums]))
    for _, leaf in leaves(grads):
        if isinstance(leaf, ArrayVal) and leaf.varying is not None:
            note(leaf, Origin("gradient", c.node, c.ctx.manual_axes - leaf.varying))
    if not g.with_value and not aux:
        return grads
    func: Value = g.func
    bound_pos: Tuple[Value, ...] = ()
    bound_kws: Dict[str, Value] = {}
    if isinstance(g.func, PartialVal):  # a bound method (self._loss), or functools.partial
        func, bound_pos, bound_kws = g.func.func, tuple(g.func.args), dict(g.func.kwargs)
    value = it.eval_return(func, bound_pos + pos, {**bound_kws, **kws}, ctx) \
        if isinstance(func, FuncVal) else UNKNOWN
    if not aux:
        return TupleVal((value, grads))
    out = value if isinstance(value, TupleVal) and len(value.items) == 2 else \
        TupleVal((UNKNOWN, UNKNOWN))
    return TupleVal((out, grads)) if g.with_value else TupleVal((grads, out.items[1]))


def _argnums(v: Value) -> Any:
    """``argnums=``: an int, a tuple of ints (None where not constant), or None."""
    if isinstance(v, TupleVal):
        return tuple(const_int(i) for i in v.items)
    return const_int(v)


def _grad_like(v: Value) -> Value:
    if isinstance(v, ArrayVal):
        if v.dtype is not None and not tr.is_inexact(v.dtype):
            return UNKNOWN  # integer primals have float0 tangents
        return replace(v, node=None, spec=None, weak=False if v.weak is not None else None)
    if isinstance(v, DictVal):
        return DictVal(tuple((k, _grad_like(x)) for k, x in v.items))
    if isinstance(v, TupleVal):
        return TupleVal(tuple(_grad_like(x) for x in v.items), v.is_list)
    return UNKNOWN


@models(*[n for n in TRANSPARENT_WRAPPERS
          if n not in ("jax.grad", "jax.value_and_grad") + _TREE_MAPS + CONTROL_FLOW])
def wrapper(it: ApiContext, c: ApiCall) -> Value:
    it.pass_functions(c.args.args, c.ctx, opaque=False)
    return UNKNOWN


@models(*BINDING_WRAPPERS)
def binding_wrapper(it: ApiContext, c: ApiCall) -> Value:
    kw = c.args.kw
    axis = const_str(kw["axis_name"].value) if "axis_name" in kw else None
    if axis is not None:
        it.pass_functions(c.args.args, c.ctx, frozenset([axis]), opaque=False)
    elif "axis_name" in kw or len(c.args.pos) > 1:
        it.pass_functions(c.args.args, c.ctx)  # an axis name we cannot read
    else:
        it.pass_functions(c.args.args, c.ctx, opaque=False)
    return UNKNOWN


@models(api.PARTIAL)
def partial(it: ApiContext, c: ApiCall) -> Value:
    if not c.args.pos:
        return UNKNOWN
    return PartialVal(c.args.pos[0], tuple(c.args.pos[1:]),
                      tuple((k, a.value) for k, a in c.args.kw.items()))


@models("jax.eval_shape")
def eval_shape(it: ApiContext, c: ApiCall) -> Value:
    """``jax.eval_shape(fun, *args, **kwargs)``: ``fun`` traced on the arguments (as
    ``jax.jit`` traces it, nothing lowered); what it gives (``ShapeDtypeStruct``s) is
    not followed. A library's callable (Linen's ``model.init``) runs as it runs when
    called."""
    if not c.args.pos or c.args.starred:
        it.pass_functions(c.args.args, c.ctx)
        return UNKNOWN
    f, body = c.args.pos[0], c.ctx.traced()
    handler = callee_handler(f)
    if handler is not None and not isinstance(f, (FuncVal, PartialVal, JitVal)):
        handler(it, f, ApiCall(c.name, c.node, CallArgs(c.args.args[1:]), c.env, body))
    else:
        it.note_call(f, body, tuple(c.args.pos[1:]), c.args.known_keywords())
    return UNKNOWN


@hook("decorate")
def decorate(it: ApiContext, dec: Value, fn: Value, node: cst.CSTNode, env: Env,
             ctx: MeshCtx) -> Value:
    """``@dec def fn``: what the name ``fn`` holds afterwards."""
    if isinstance(dec, QualName):
        name = it.profile.canonical(dec.name)
        if name in api.JITS:
            return JitVal(fn, node)
        if name in api.SHARD_MAPS or name in BINDING_WRAPPERS or name in api.DECORATOR_CALLS:
            return it.call_api(name, node, [Arg(None, "", fn, node)], env, ctx)
        if name in TRANSPARENT_DECORATORS or name in TRANSPARENT_WRAPPERS:
            return fn
        return _opaque(it, fn, ctx)
    if isinstance(dec, PartialVal) and isinstance(dec.func, QualName):
        name = it.profile.canonical(dec.func.name)
        if name in api.JITS or name in api.SHARD_MAPS or name in api.DECORATOR_CALLS:
            # @partial(jax.jit, in_shardings=...)
            written = {a.keyword.value: a.value for a in getattr(node, "args", ()) if a.keyword}
            args = [Arg(None, "", fn, node)] + [Arg(None, "", a, node) for a in dec.args]
            args += [Arg(k, "", v, written.get(k, node)) for k, v in dec.kwargs]
            return it.call_api(name, node, args, env, ctx)
        return fn if name in TRANSPARENT_DECORATORS else _opaque(it, fn, ctx)
    if isinstance(dec, ShardMapFactory):
        args = [Arg(None, "", fn, node)] + [Arg(k, "", v, node) for k, v in dec.kwargs]
        return it.call_api(dec.api, dec.node, args, env, ctx)
    return _opaque(it, fn, ctx)


def _opaque(it: ApiContext, fn: Value, ctx: MeshCtx) -> Value:
    """An unknown decorator: it may change the signature, call fn anywhere, bind axes."""
    it.pass_functions([Arg(None, "", fn, None)], ctx)
    return UNKNOWN
