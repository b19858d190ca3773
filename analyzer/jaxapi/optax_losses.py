"""optax's losses and norms, typed as optax computes them (optax 0.2.8,
``optax/losses/_classification.py`` and ``_regression.py``): each is a few ``jax.numpy``
ops, so each is typed by those ops' transfer rules, in the same order, and an op JAX
rejects is reported at the call with the loss's name.

- ``softmax_cross_entropy_with_integer_labels(logits, labels, axis=-1)``:
  ``logsumexp(logits, axis) - take_along_axis(logits, expand_dims(labels, axis),
  axis).take(0, axis)``. The gather picks one entry of the class dim, so on an Explicit
  mesh that dim must be unsharded (JAX 0.10.2 raises ShardingTypeError "Use
  `.at[...].get(out_sharding=)` ..."); the result has the labels' shape, each dim sharded
  as the logits' or the labels' dim is.
- ``softmax_cross_entropy(logits, labels, axis=-1)``: ``-(labels *
  log_softmax(logits, axis)).sum(axis)``, a reduction, so a sharded class dim is fine.
- ``squared_error(predictions, targets=None)``: ``(predictions - targets) ** 2``;
  ``l2_loss`` is half of it; ``sigmoid_binary_cross_entropy(logits, labels)`` and
  ``log_cosh``/``huber_loss`` are elementwise too.
- ``global_norm(tree)`` / ``optax.tree.norm(tree)``: a scalar (every leaf is reduced).
"""

from __future__ import annotations

from typing import List, Optional

from .. import ops
from ..api import ApiCall, ApiContext, models
from ..transfer.along_axis import take_along_axis
from ..values import UNKNOWN, ArrayVal, Const, Value, const_int
from .constructors import unmodelled
from .pytrees import holds_unknown, leaves_of
from .specs import out_sharding_fn

# Not the pre-check's vocabulary: optax's losses are jnp ops: a sharded operand comes
# from elsewhere
MAKES_SHARDINGS = False

_SCE_INT = ("optax.softmax_cross_entropy_with_integer_labels",
            "optax.losses.softmax_cross_entropy_with_integer_labels")
_SCE = ("optax.softmax_cross_entropy", "optax.losses.softmax_cross_entropy")
_SQUARED = ("optax.squared_error", "optax.losses.squared_error")
_L2 = ("optax.l2_loss", "optax.losses.l2_loss")
# elementwise in (logits/predictions, labels/targets): the result is their broadcast
_ELEMENTWISE = tuple(f"optax{m}.{n}" for m in ("", ".losses") for n in (
    "sigmoid_binary_cross_entropy", "log_cosh", "huber_loss"))
_NORMS = ("optax.global_norm", "optax.tree.norm", "optax.tree_utils.tree_norm")
_FLOATS = ("float32", "bfloat16", "float16", "float64")


def _op(it: ApiContext, c: ApiCall, name: str, pos: List[Value], kw: Optional[dict] = None,
        x: Optional[Value] = None) -> Value:
    """One jax.numpy op of the loss's body, typed by its transfer rule at the call."""
    return it.infer(c.node, ops.call_op, name, pos, kw or {}, c.node, it.sizes(c.ctx, x),
                    out_sharding_fn(c.ctx))


def _axis(c: ApiCall) -> Optional[int]:
    """``axis=`` (an int; the tuple form flattens the class dims first: not modelled)."""
    return const_int(c.args.get(2, "axis")) if c.args.given(2, "axis") else -1


@models(*_SCE_INT)
def softmax_cross_entropy_with_integer_labels(it: ApiContext, c: ApiCall) -> Value:
    unmodelled(it, c)
    logits, labels, axis = c.args.get(0, "logits"), c.args.get(1, "labels"), _axis(c)
    if (c.args.starred or "where" in c.args.kw or axis is None
            or not isinstance(logits, ArrayVal) or not isinstance(labels, ArrayVal)):
        return UNKNOWN
    index = _op(it, c, "jax.numpy.expand_dims", [labels, Const(axis)])
    if not isinstance(index, ArrayVal):
        return UNKNOWN
    picked = it.infer(c.node, take_along_axis, c.name, logits, index, axis)
    if not isinstance(picked, ArrayVal):
        return UNKNOWN
    label_logits = _op(it, c, "jax.numpy.squeeze", [picked, Const(axis)])
    normalizers = _op(it, c, "jax.nn.logsumexp", [logits], {"axis": Const(axis)}, logits)
    return _op(it, c, "jax.numpy.subtract", [normalizers, label_logits])


@models(*_SCE)
def softmax_cross_entropy(it: ApiContext, c: ApiCall) -> Value:
    unmodelled(it, c)
    logits, labels, axis = c.args.get(0, "logits"), c.args.get(1, "labels"), _axis(c)
    if c.args.starred or "where" in c.args.kw or axis is None:
        return UNKNOWN
    log_probs = _op(it, c, "jax.nn.log_softmax", [logits], {"axis": Const(axis)}, logits)
    product = _op(it, c, "jax.numpy.multiply", [labels, log_probs])
    return _op(it, c, "jax.numpy.negative",
               [_op(it, c, "jax.numpy.sum", [product], {"axis": Const(axis)}, product)])


@models(*_SQUARED, *_L2)
def squared_error(it: ApiContext, c: ApiCall) -> Value:
    unmodelled(it, c)
    predictions = c.args.get(0, "predictions")
    if c.args.starred:
        return UNKNOWN
    errors = predictions
    if c.args.given(1, "targets"):
        errors = _op(it, c, "jax.numpy.subtract", [predictions, c.args.get(1, "targets")])
    out = _op(it, c, "jax.numpy.square", [errors])
    return _op(it, c, "jax.numpy.multiply", [Const(0.5), out]) if c.name in _L2 else out


@models(*_ELEMENTWISE)
def elementwise_loss(it: ApiContext, c: ApiCall) -> Value:
    unmodelled(it, c)
    if c.args.starred or len(c.args.pos) != 2 or set(c.args.kw) - {"delta"}:
        return UNKNOWN
    out = _op(it, c, "jax.numpy.subtract", list(c.args.pos))
    return out if isinstance(out, ArrayVal) and out.dtype in _FLOATS else UNKNOWN


@models(*_NORMS)
def global_norm(it: ApiContext, c: ApiCall) -> Value:
    """The norm over every leaf: a scalar of their (one) float dtype, replicated."""
    unmodelled(it, c)
    if c.args.starred or len(c.args.pos) != 1 or c.args.kw:
        return UNKNOWN
    arrays = leaves_of(c.args.pos[0])
    if not arrays or holds_unknown(c.args.pos[0]):
        return UNKNOWN
    dtypes = {a.dtype if isinstance(a, ArrayVal) and a.varying == frozenset() else None
              for a in arrays}
    if len(dtypes) != 1 or not dtypes <= set(_FLOATS):
        return UNKNOWN
    return ArrayVal((), dtype=dtypes.pop(), dims=(), weak=False)
