"""NNX filter tables that shard a module's state by its variables, for ``shardcheck specs``.

Flax NNX spells a layout as an ordered table of filters and shardings (or specs); each
variable of the module takes the entry of the first filter that matches it::

    state_sharding = nnx.StateSharding({
        nnx.All(nnx.PathContains("up"), nnx.PathContains("kernel")): sharding(None, "model"),
        nnx.PathContains("up"): sharding("model"),
        ...: sharding(),
    })

    @nnx.jit(in_shardings=(state_sharding,))
    def place(model): ...

``nnx.prefix(model, {filter: sharding, ...})`` is the functional spelling. Either is a
``RuleTreeVal`` whose rules are the filters, written as in the source, so the site is one
leaf per entry, in table order: ``jit in_shardings[0][matching nnx.PathContains("up")]``.
Which variables each filter matches is not known statically; what each entry gives is.
Only a table written inline is read: a dict literal, or for ``StateSharding`` a list of
pairs (``prefix`` takes a mapping or a callable, and raises on a list). A callable
``filter_map``, or a ``State`` given to ``StateSharding``, stays unknown.
Flax's ``StateSharding`` and ``prefix`` as of flax 0.12 (``flax.nnx.transforms.compilation``,
``flax.nnx.extract``).
"""

from __future__ import annotations

from typing import List, Optional, Tuple

import libcst as cst

from ..values import UNKNOWN, RuleTreeVal, Value
from ..api import ApiCall, ApiContext, models

# Not the pre-check's vocabulary: NNX filter tables (`StateSharding`, `prefix`) only
# arrange the shardings or specs written in them, which spell the vocabulary
# themselves (or come from a module that does)
MAKES_SHARDINGS = False



@models("flax.nnx.StateSharding", "flax.nnx.transforms.compilation.StateSharding")
def state_sharding(it: ApiContext, c: ApiCall) -> Value:
    return filter_tree(it, c, c.args.node(0, "filter_sharding"), pairs=True)


@models("flax.nnx.prefix", "flax.nnx.extract.prefix")
def prefix(it: ApiContext, c: ApiCall) -> Value:
    return filter_tree(it, c, c.args.node(1, "filter_map"), pairs=False)  # a Mapping only


def filter_tree(it: ApiContext, c: ApiCall, table: Optional[cst.CSTNode],
                pairs: bool) -> Value:
    """The tree an inline filter table written as ``table`` gives, else unknown; ``pairs``:
    a list of (filter, value) pairs is accepted too. Only ``shardcheck specs`` reads it
    (``check`` has no rule over such trees)."""
    entries = _pairs(table, pairs) if it.assume_defaults else None
    if not entries:
        return UNKNOWN
    return RuleTreeVal(tuple((_source(k), it.ev(v, c.env, c.ctx)) for k, v in entries),
                       filters=True)


def _pairs(table: Optional[cst.CSTNode],
           pairs: bool) -> Optional[List[Tuple[cst.BaseExpression, cst.BaseExpression]]]:
    """(filter, value) nodes of a dict literal or a list/tuple of 2-tuples; None for
    anything else (a ``**`` splice, a starred element, a name)."""
    out: List[Tuple[cst.BaseExpression, cst.BaseExpression]] = []
    if isinstance(table, cst.Dict):
        for el in table.elements:
            if not isinstance(el, cst.DictElement):
                return None
            out.append((el.key, el.value))
        return out
    if pairs and isinstance(table, (cst.List, cst.Tuple)):
        for item in table.elements:
            pair = item.value
            if isinstance(item, cst.StarredElement) or not isinstance(pair, cst.Tuple) \
                    or len(pair.elements) != 2 \
                    or any(isinstance(e, cst.StarredElement) for e in pair.elements):
                return None
            out.append((pair.elements[0].value, pair.elements[1].value))
        return out
    return None


def _source(node: cst.CSTNode) -> str:
    return " ".join(cst.Module([]).code_for_node(node).split())
