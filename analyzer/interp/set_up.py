"""``self.x`` that a set-up method stores, read in another method.

Python runs ``__init__`` (and a dataclass's ``__post_init__``) before any method of the
instance, unittest runs ``setUp`` before each test method, and Flax Linen runs ``setup``
before a method reads a submodule: what such a method stores on ``self`` is there when
the others run (``self.mesh = jax.make_mesh(...)`` in ``setUp``, read by every test).
The body runs once per class, with no events recorded and no caller's arguments (its
parameters are what ``shardcheck specs`` assumes of a parameter no call in view passes),
and only an attribute that nothing else in the class assigns is read from it. The map
only: ``check`` models no class instances.
"""

from __future__ import annotations

from typing import Any, Dict, Tuple

import libcst as cst

from ..events import UNKNOWN_CTX
from ..values import UNKNOWN, ClassVal, InstanceVal, Value
from .objects import _Assignments, _lineage, _method

# run before the other methods: by Python, dataclasses, unittest, Flax Linen (in order)
SET_UP_METHODS = ("__init__", "__post_init__", "setUp", "setup")


def set_up_value(it: Any, cls: ClassVal, attr: str) -> Value:
    """``self.<attr>`` as a set-up method of ``cls`` stores it, where that is the one
    assignment of ``.<attr>`` in the class and its source bases; else unknown."""
    if not it.memo(("assigned once", cls.node, attr), lambda: _assigned_once(cls, attr)):
        return UNKNOWN
    for name in SET_UP_METHODS:
        found = _method(cls, name)
        if found is not None:
            stored = _stores(it, cls, *found)
            if attr in stored:
                return stored[attr]
    return UNKNOWN


def _assigned_once(cls: ClassVal, attr: str) -> bool:
    counter = _Assignments(attr)
    for c in dict.fromkeys(_lineage(cls)):
        c.node.visit(counter)
    return counter.count == 1


def _stores(it: Any, cls: ClassVal, fdef: cst.FunctionDef, owner: ClassVal) -> Dict[str, Value]:
    """What ``fdef`` leaves on ``self`` when it runs on a new instance of ``cls``."""
    key = ("set-up stores", fdef, cls.node)
    if key in it.ret_cache:
        return it.ret_cache[key]
    it.ret_cache[key] = {}  # a read of self.y while it runs: unknown, not a loop
    params = list(fdef.params.params)
    if not params:
        return {}
    from .state import Env
    unknown = {p.name.value: UNKNOWN for p in params[1:] + list(fdef.params.kwonly_params)}
    saved: Tuple[Any, ...] = (it.cur, it.returns, it.caller, it.ended)
    it.cur, it.returns = None, []
    it.helper_depth += 1
    env = Env(parent=owner.env)
    try:
        it.bind_params(fdef, env, UNKNOWN_CTX, (InstanceVal(cls),), unknown)
        it.exec_block(fdef.body, env, UNKNOWN_CTX)
        final = env.vars.get(params[0].name.value)
        stored = dict(final.given) if isinstance(final, InstanceVal) and final.cls is cls else {}
    except RecursionError:
        stored = {}
    finally:
        it.helper_depth -= 1
        it.cur, it.returns, it.caller, it.ended = saved
    it.ret_cache[key] = stored
    return stored
