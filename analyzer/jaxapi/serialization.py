"""JAX's array serialization (``jax.experimental.array_serialization.serialization``),
read for the arguments JAX renamed: ``async_deserialize(in_sharding=...)`` is
``in_type=`` since JAX 0.6.1 (an older checkpointing helper passes the old name, and JAX
raises TypeError when the coroutine is made). ``analyzer/rules/deprecated_api.py`` words
the finding."""

from __future__ import annotations

from ..api import ApiCall, ApiContext, models
from ..events import ApiUse
from ..values import UNKNOWN, Value
from .shard_map import keyword_name

# Not the pre-check's vocabulary: array serialization places nothing; what is checked
# there is the renamed keyword `in_sharding=`, which spells the vocabulary
MAKES_SHARDINGS = False

MODULE = "jax.experimental.array_serialization.serialization"
# keyword arguments JAX renamed -> their names today
RENAMED_KEYWORDS = {"in_sharding": "in_type"}


@models(f"{MODULE}.async_deserialize")
def async_deserialize(it: ApiContext, c: ApiCall) -> Value:
    for old in RENAMED_KEYWORDS:
        arg = c.args.kw.get(old)
        if arg is not None:  # as jit records its removed keywords
            it.record("api_uses", ApiUse(c.name, arg.node or c.node, "keyword", old,
                                         keyword_name(c.node, old)))
    return UNKNOWN
