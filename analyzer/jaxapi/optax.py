"""optax: gradient transformations and the structure of their state, the updates they
give, and Flax's ``TrainState`` that carries them.

What ``tx.init(params)`` returns decides what a tree of shardings for the optimizer
state must look like (``jax.jit(in_shardings=)``, ``jax.device_put``) and which ranks
its leaves have. The recipes below are optax 0.2.8's (``optax/_src/alias.py``: each
alias is ``chain(...)`` of transformations, so its state is a tuple with one state per
transformation; ``optax/transforms/_combining.py``: ``chain``'s ``init`` returns
``tuple(fn(params) for fn in init_fns)``). A moment (``mu``, ``nu``, ``trace``) is
``otu.tree_zeros_like(params)``: the params' tree, each leaf of its parameter's shape
and dtype; a ``count`` is ``jnp.zeros([], jnp.int32)``. ``scale_by_learning_rate``
keeps an ``EmptyState`` for a constant rate and a ``ScaleByScheduleState(count)`` for a
callable one (``optax/_src/alias.py``: ``_scale_by_learning_rate``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Dict, Optional, Tuple

from ..api import ApiCall, ApiContext, method_of, models
from ..values import (UNKNOWN, ArrayVal, Const, FuncVal, PartialVal, TupleVal, Value)
from .constructors import unmodelled
from .pytrees import PyTreeNodeVal, map_leaves, map_pairs, node_method

# Not the pre-check's vocabulary: optax's transformations copy the parameters'
# shardings; they make none
MAKES_SHARDINGS = False

# How a state field is made from the params: "count" (an int32 scalar), "like" (the
# params' tree of zeros), "lr" (the learning-rate transformation's whole state).
_Fields = Tuple[Tuple[str, str], ...]
_EMPTY = ("optax.EmptyState", ())
_ADAM = ("optax.ScaleByAdamState", (("count", "count"), ("mu", "like"), ("nu", "like")))
_LION = ("optax.ScaleByLionState", (("count", "count"), ("mu", "like")))
_RSS = ("optax.ScaleByRssState", (("sum_of_squares", "like"),))
_RMS = ("optax.ScaleByRmsState", (("nu", "like"),))
_BELIEF = ("optax.ScaleByBeliefState", (("count", "count"), ("mu", "like"), ("nu", "like")))
_TRACE = ("optax.TraceState", (("trace", "like"),))
_SCHEDULE = ("optax.ScaleByScheduleState", (("count", "count"),))
_LR = ("lr", ())  # EmptyState or ScaleByScheduleState, by the learning rate
_MOMENTUM = ("momentum", ())  # sgd: TraceState when momentum is not None, else EmptyState

# alias -> (its chain's states, the keywords that leave them as they are); checked
# against optax 0.2.8 by tests/analyzer/jaxapi/test_optax.py
_HYPER = ("learning_rate", "b1", "b2", "eps", "eps_root")
ALIASES: Dict[str, Tuple[Tuple[Tuple[str, _Fields], ...], Tuple[str, ...]]] = {
    "optax.adam": ((_ADAM, _LR), _HYPER),
    "optax.nadam": ((_ADAM, _LR), _HYPER),
    "optax.adamw": ((_ADAM, _EMPTY, _LR), _HYPER + ("weight_decay",)),
    "optax.lion": ((_LION, _EMPTY, _LR), ("learning_rate", "b1", "b2", "weight_decay")),
    "optax.adagrad": ((_RSS, _LR), ("learning_rate", "initial_accumulator_value", "eps")),
    "optax.rmsprop": ((_RMS, _LR, _EMPTY), ("learning_rate", "decay", "eps")),
    "optax.adabelief": ((_BELIEF, _LR), _HYPER),
    "optax.lamb": ((_ADAM, _EMPTY, _EMPTY, _LR), _HYPER + ("weight_decay",)),
    "optax.sgd": ((_MOMENTUM, _LR), ("learning_rate", "momentum", "nesterov")),
}
# single transformations -> (their state, their keywords)
SINGLE: Dict[str, Tuple[Tuple[str, _Fields], Tuple[str, ...]]] = {
    "optax.clip_by_global_norm": (_EMPTY, ("max_norm",)),
    "optax.clip": (_EMPTY, ("max_delta",)),
    "optax.scale": (_EMPTY, ("step_size",)),
    "optax.identity": (_EMPTY, ()),
    "optax.add_decayed_weights": (_EMPTY, ("weight_decay",)),
    "optax.scale_by_adam": (_ADAM, ("b1", "b2", "eps", "eps_root")),
    "optax.scale_by_schedule": (_SCHEDULE, ("step_size_fn",)),
    "optax.scale_by_learning_rate": (_LR, ("learning_rate", "flip_sign")),
    "optax.trace": (_TRACE, ("decay", "nesterov")),
}
SCHEDULES = tuple(f"optax.{n}" for n in (
    "constant_schedule", "linear_schedule", "polynomial_schedule", "cosine_decay_schedule",
    "warmup_cosine_decay_schedule", "exponential_decay", "warmup_exponential_decay_schedule",
    "piecewise_constant_schedule", "piecewise_interpolate_schedule", "join_schedules",
    "cosine_onecycle_schedule", "linear_onecycle_schedule", "sgdr_schedule"))


@dataclass(frozen=True, eq=False)
class ScheduleVal(Value):
    """An optax schedule: a callable learning rate."""


@dataclass(frozen=True, eq=False)
class TransformVal(Value):
    """An optax ``GradientTransformation`` whose ``init`` state is known in shape:
    ``parts`` is a tuple of recipes (a chain's), or one recipe (a single
    transformation); a recipe is a (state type, fields) pair, or a TransformVal
    (chained in), or None (a transformation not modelled: its state is unknown)."""

    parts: Tuple[object, ...]
    chained: bool  # init returns a tuple of the parts' states
    lr_callable: Optional[bool] = None  # the learning rate's recipe: None when unknown
    momentum: Optional[bool] = None  # sgd: whether momentum is not None


def _is_callable(v: Value) -> Optional[bool]:
    if isinstance(v, ScheduleVal) or isinstance(v, (FuncVal, PartialVal)):
        return True
    if isinstance(v, Const) and type(v.value) in (int, float):
        return False
    return None


@models(*SCHEDULES)
def schedule(it: ApiContext, c: ApiCall) -> Value:
    unmodelled(it, c)
    return ScheduleVal()


@models(*ALIASES)
def alias(it: ApiContext, c: ApiCall) -> Value:
    """``optax.adamw(1e-3)``: a chain whose state is a tuple of its parts' states."""
    unmodelled(it, c)
    parts, keywords = ALIASES[c.name]
    return _transform(c, parts, keywords, chained=True)


@models(*SINGLE)
def single(it: ApiContext, c: ApiCall) -> Value:
    unmodelled(it, c)
    part, keywords = SINGLE[c.name]
    return _transform(c, (part,), keywords, chained=False)


def _transform(c: ApiCall, parts: tuple, keywords: Tuple[str, ...], chained: bool) -> Value:
    args = c.args
    if args.starred or len(args.pos) > len(keywords) or not set(args.kw) <= set(keywords):
        return UNKNOWN  # a keyword that may change the state (mask=, mu_dtype=, ...)
    lr = args.get(keywords.index("learning_rate"), "learning_rate") \
        if "learning_rate" in keywords else None
    momentum = None
    if "momentum" in keywords:
        i = keywords.index("momentum")
        m = args.get(i, "momentum")
        if not args.given(i, "momentum"):
            momentum = False
        elif isinstance(m, Const):
            momentum = m.value is not None
    return TransformVal(tuple(parts), chained,
                        _is_callable(lr) if lr is not None and lr is not UNKNOWN else None,
                        momentum)


@models("optax.chain")
def chain(it: ApiContext, c: ApiCall) -> Value:
    """``optax.chain(*txs)``: its state is the tuple of theirs, in order."""
    unmodelled(it, c)
    if c.args.starred or c.args.kw or not c.args.pos:
        return UNKNOWN
    return TransformVal(tuple(p if isinstance(p, TransformVal) else None for p in c.args.pos), True)


def makes_moments(tx: Value) -> Optional[bool]:
    """Whether ``tx.init(params)`` holds a tree like the params (a moment, a trace, a
    sum of squares): True, False, or None where the analysis does not know ``tx``."""
    if not isinstance(tx, TransformVal):
        return None
    known = True
    for part in tx.parts:
        if isinstance(part, TransformVal):
            got = makes_moments(part)
        else:
            recipe = _recipe(tx, part)
            got = None if recipe is None else any(how == "like" for _, how in recipe[1])
        if got:
            return True
        known = known and got is not None
    return False if known else None


def init_state(tx: Value, params: Value) -> Value:
    """What ``tx.init(params)`` returns."""
    if not isinstance(tx, TransformVal):
        return UNKNOWN
    states = [_part_state(tx, p, params) for p in tx.parts]
    if tx.chained:
        return TupleVal(tuple(states))
    return states[0]


def _part_state(tx: TransformVal, part: object, params: Value) -> Value:
    if isinstance(part, TransformVal):
        return init_state(part, params)
    recipe = _recipe(tx, part)
    if recipe is None:
        return UNKNOWN
    kind, fields = recipe
    return PyTreeNodeVal(kind, tuple((name, _field(how, params)) for name, how in fields))


def _recipe(tx: TransformVal, part: object) -> Optional[Tuple[str, _Fields]]:
    """The (state type, fields) recipe of one of ``tx``'s parts, the learning rate's and
    sgd's momentum's resolved by what ``tx`` was given; None where not known."""
    if not isinstance(part, tuple):
        return None
    kind, fields = part
    if kind == "lr":
        if tx.lr_callable is None:
            return None
        return _SCHEDULE if tx.lr_callable else _EMPTY
    if kind == "momentum":
        if tx.momentum is None:
            return None
        return _TRACE if tx.momentum else _EMPTY
    return kind, fields


def _field(how: str, params: Value) -> Value:
    if how == "count":
        return ArrayVal((), dtype="int32", dims=())
    return map_leaves(params, _zeros_like)


def _zeros_like(leaf: Value) -> Value:
    """A moment's leaf, ``jnp.zeros_like`` of its parameter: its shape, dtype and type's
    sharding (JAX 0.10.2, optax 0.2.8 on an Explicit mesh: the moments of a
    ``float32[16,64@model]`` parameter are ``float32[16,64@model]``, for ``adamw``,
    ``sgd`` with momentum, ``lion`` and ``chain``)."""
    if isinstance(leaf, ArrayVal) and not leaf.numpy:
        return ArrayVal(leaf.shape, leaf.mesh, dtype=leaf.dtype, dims=leaf.dims,
                        weak=leaf.weak)
    return UNKNOWN


def _updated(leaf: Value) -> Value:
    """A leaf after an update: the same shape, dtype and type's sharding (an update is
    elementwise in the gradients and the state; each keeps its type, as checked with
    ``_zeros_like``'s optimizers). A host array's update is a device array of unknown
    sharding."""
    if isinstance(leaf, ArrayVal):
        weak = False if leaf.weak is not None else None
        if leaf.numpy:
            return replace(leaf, node=None, spec=None, mesh=None, dims=None, numpy=False,
                           weak=weak)
        return replace(leaf, node=None, spec=None, weak=weak)
    return UNKNOWN


def _applied(param: Value, update: Value) -> Value:
    """``(p + u).astype(p.dtype)``: p's type where u's sharding is p's; else p's shape
    and dtype."""
    p = _updated(param)
    if isinstance(p, ArrayVal) and not (isinstance(update, ArrayVal) and update.dims == p.dims
                                        and update.varying == p.varying):
        return replace(p, mesh=None, dims=None)
    return p


@method_of(TransformVal)
def transform_method(it: ApiContext, tx: Value, c: ApiCall) -> Optional[Value]:
    """``tx.init(params)``: the state; ``tx.update(grads, state, params)``: the updates
    (the gradients' tree) and the new state (the state's tree)."""
    if c.name == "init":
        return init_state(tx, c.args.get(0, "params")) if not c.args.starred else UNKNOWN
    if c.name == "update":
        if c.args.starred:
            return UNKNOWN
        grads, state = c.args.get(0, "updates"), c.args.get(1, "state")
        return TupleVal((map_leaves(grads, _updated), map_leaves(state, _updated)))
    return None


@models("optax.apply_updates")
def apply_updates(it: ApiContext, c: ApiCall) -> Value:
    """``optax.apply_updates(params, updates)``: the params' tree, each leaf
    ``(p + u).astype(p.dtype)``."""
    if c.args.starred:
        return UNKNOWN
    params, updates = c.args.get(0, "params"), c.args.get(1, "updates")
    return map_pairs(params, updates, _applied)


# -- flax.training.train_state.TrainState ---------------------------------------------------------
TRAIN_STATE = "flax.training.train_state.TrainState"


@models(f"{TRAIN_STATE}.create")
def train_state_create(it: ApiContext, c: ApiCall) -> Value:
    """``TrainState.create(apply_fn=, params=, tx=)``: ``cls(step=0, apply_fn, params,
    tx, opt_state=tx.init(params))`` (flax/training/train_state.py). A struct dataclass:
    ``step``, ``params`` and ``opt_state`` are its children, ``apply_fn`` and ``tx``
    static; ``step`` is the Python int 0."""
    unmodelled(it, c)
    if c.args.pos or c.args.starred or set(c.args.kw) != {"apply_fn", "params", "tx"}:
        return UNKNOWN
    params, tx = c.args.get(0, "params"), c.args.get(0, "tx")
    return PyTreeNodeVal(TRAIN_STATE, (("step", Const(0)), ("params", params),
                                       ("opt_state", init_state(tx, params))),
                         (("apply_fn", c.args.get(0, "apply_fn")), ("tx", tx)))


@node_method(TRAIN_STATE, "apply_gradients")
def apply_gradients(it: ApiContext, state: PyTreeNodeVal, c: ApiCall) -> Optional[Value]:
    """``state.apply_gradients(grads=g)``: ``replace(step=step + 1, params=new_params,
    opt_state=new_opt_state)``."""
    if c.args.pos or c.args.starred or set(c.args.kw) != {"grads"}:
        return UNKNOWN
    changes: Dict[str, Value] = {
        "step": UNKNOWN,
        "params": map_leaves(state.field("params") or UNKNOWN, _updated),
        "opt_state": map_leaves(state.field("opt_state") or UNKNOWN, _updated)}
    return state.replaced(changes)
