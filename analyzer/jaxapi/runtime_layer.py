"""shardcheck's own runtime layer, read statically: ``Sharded[...]`` annotations on
parameters (checked at each call, and giving the parameter its declared type) and
``sharding_types.assert_sharding``."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Dict, List, Optional

import libcst as cst

from .. import annotations as ann
from ..events import MeshCtx
from ..facts import AnnotationConflict
from ..interp.state import Arg, Env
from ..values import UNKNOWN, ArrayVal, FuncVal, JitVal, QualName, Unknown, Value, const_str
from ..api import ApiCall, ApiContext, hook, models

# The pre-check's vocabulary (the runtime layer's annotations and assertions): the
# names this family models make sharding values, so a file spelling one is analysed
# (analyzer/registry_manifest.py).
MAKES_SHARDINGS = True



def declared_type(it: ApiContext, expr: cst.BaseExpression, env: Env, ctx: MeshCtx) -> Any:
    """The sharding type a runtime-layer annotation declares, or None."""
    def resolve(n: cst.CSTNode) -> Optional[str]:
        v = it.ev(n, env, ctx)
        return it.profile.canonical(v.name) if isinstance(v, QualName) else None
    return ann.parse_or_none(ann.annotation_text(expr, resolve))


@hook("parameter")
def parameter(it: ApiContext, annotation: cst.BaseExpression, v: Value,
              bindings: Dict[str, int], env: Env, ctx: MeshCtx) -> Value:
    """A parameter annotated ``Sharded[jax.Array, "float32[B@data,D]"]`` holds that type;
    one annotated ``Float[Array, "b 512"]`` (jaxtyping) that no call gives a value, an
    array of that rank whose sharding is unknown."""
    if not isinstance(v, (ArrayVal, Unknown)):
        return v
    t = declared_type(it, annotation, env, ctx)
    if t is None:
        if isinstance(v, Unknown):  # no call in view: a jaxtyping shape, if it has one
            from .jaxtyping import jaxtyping_array
            typed = jaxtyping_array(it, annotation, env, ctx)
            return typed if typed is not None else v
        return v
    return ann.from_annotation(t, bindings, v if isinstance(v, ArrayVal) else None)


@hook("arguments")
def arguments(it: ApiContext, fv: Value, args: List[Arg], ctx: MeshCtx) -> None:
    """Arguments whose inferred type contradicts the parameter's declared type."""
    if isinstance(fv, JitVal):
        fv = fv.func
    if not isinstance(fv, FuncVal) or not isinstance(fv.node, cst.FunctionDef) or not it.recording():
        return
    params = fv.node.params
    positional = list(params.posonly_params) + list(params.params)
    bindings: Dict[str, int] = {}
    scope = fv.scope if isinstance(fv.scope, Env) else it.module_scope()
    for p, a in zip(positional, [a for a in args if a.keyword is None and not a.star]):
        if p.annotation is None or not isinstance(a.value, ArrayVal):
            continue
        t = declared_type(it, p.annotation.annotation, scope, ctx)
        if t is None:
            continue
        reasons = ann.mismatches(t, a.value, bindings)
        if reasons:
            it.prove(AnnotationConflict(t, a.value, tuple(reasons), p.name.value, fv.name),
                     a.node or fv.node)


@models("sharding_types.assert_sharding", "sharding_types.typeof")
def assert_sharding(it: ApiContext, c: ApiCall) -> Value:
    """``assert_sharding(x, "...")``: compare, then x has the asserted type."""
    if c.name != "sharding_types.assert_sharding" or len(c.args.pos) < 2:
        return UNKNOWN
    x = c.args.pos[0]
    t = ann.parse_or_none(const_str(c.args.pos[1]))
    if t is None or not isinstance(x, ArrayVal):
        return x
    reasons = ann.mismatches(t, x, {})
    if reasons:
        it.prove(AnnotationConflict(t, x, tuple(reasons)), c.node)
        return replace(x, node=c.node)
    return ann.from_annotation(t, {}, x, c.node)
