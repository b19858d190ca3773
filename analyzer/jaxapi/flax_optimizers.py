"""Flax NNX's optimizers: ``nnx.Optimizer(model, tx, wrt=nnx.Param)`` and
``nnx.ModelAndOptimizer(model, tx)``.

Each makes ``tx``'s state for the model's parameters: a moment (adam's ``mu`` and
``nu``, momentum's ``trace``) is a Variable that copies its parameter's metadata. A
parameter made with sharding names and no ``mesh=`` metadata
(``nnx.with_partitioning(init, (None, "model"))``) then has its moments sharded on the
mesh the context sets, as it was itself: where no mesh is set, Flax raises, though the
model was made inside ``jax.set_mesh`` (flax 0.12.8 on JAX 0.10.2 and flax 0.12.12 on
JAX 0.12.0.1, 8 CPU devices: ``ValueError: An auto mesh context or metadata is required
if creating a variable with annotation out_sharding=P(None, 'model')``; the legacy
``with mesh:`` sets no mesh that Flax reads). A transformation that keeps no such state
(``optax.sgd`` without momentum) makes no Variable, and ``tx.init(nnx.state(model))``
makes plain arrays: neither raises.
"""

from __future__ import annotations

from dataclasses import replace
from typing import List, Optional, Set

from ..api import ApiCall, ApiContext, models
from ..events import NeedsMesh
from ..values import UNKNOWN, DictVal, InstanceVal, QualName, TupleVal, Value
from .constructors import unmodelled
from .flax_nnx import (NO_MESH_RAISES, NnxLayer, NnxVariable, legacy_mesh_note,
                       names_without_mesh)
from .optax import makes_moments

# Not the pre-check's vocabulary: NNX's optimizers copy what the parameters were made
# with (`with_partitioning`, which spells the vocabulary where written)
MAKES_SHARDINGS = False

OPTIMIZERS = ("flax.nnx.Optimizer", "flax.nnx.training.optimizer.Optimizer",
              "flax.nnx.ModelAndOptimizer", "flax.nnx.training.optimizer.ModelAndOptimizer")
_PARAMS = ("flax.nnx.Param", "flax.nnx.variablelib.Param")


@models(*OPTIMIZERS)
def optimizer(it: ApiContext, c: ApiCall) -> Value:
    unmodelled(it, c)
    ctx = c.ctx
    if c.args.starred or not (ctx.known and ctx.eager) or (ctx.mesh is not None and ctx.abstract):
        return UNKNOWN  # a mesh Flax reads may be set
    wrt = c.args.kw.get("wrt")
    if wrt is not None and not (isinstance(wrt.value, QualName) and wrt.value.name in _PARAMS):
        return UNKNOWN  # a filter that may leave the sharded parameters out
    if not makes_moments(c.args.get(1, "tx")):
        return UNKNOWN
    names = _unmeshed(it, c.args.get(0, "model"))
    if names is not None:
        it.record("needs_mesh", NeedsMesh(
            c.node, f"`{c.short}` makes the optimizer's moments of a parameter made with the "
            f"sharding names {tuple(names)} and no `mesh=` metadata{legacy_mesh_note(ctx)}",
            replace(ctx, mesh=None), NO_MESH_RAISES))
    return UNKNOWN


def _unmeshed(it: ApiContext, model: Value) -> Optional[tuple]:
    """The sharding names of the first parameter of ``model`` (a module the source made,
    walked through its attributes, layers and containers) made with no ``mesh=``."""
    todo: List[Value] = [model]
    seen: Set[int] = set()
    while todo:
        v = todo.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        if isinstance(v, NnxVariable):
            v = v.value
        names = names_without_mesh(it, v)
        if names is not None:
            return names
        if isinstance(v, InstanceVal) and v.made:
            todo.extend(x for _, x in reversed(v.given))
        elif isinstance(v, NnxLayer):
            todo.extend(x for _, x in reversed(v.params))
        elif isinstance(v, TupleVal):
            todo.extend(reversed(v.items))
        elif isinstance(v, DictVal):
            todo.extend(x for _, x in reversed(v.items))
    return None
