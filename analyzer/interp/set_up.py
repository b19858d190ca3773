"""``self.x`` that a set-up method stores, read in another method.

Python runs ``__init__`` (and a dataclass's ``__post_init__``) before any method of the
instance, unittest runs ``setUp`` before each test method, and Flax Linen runs ``setup``
before a method reads a submodule: what such a method stores on ``self`` is there when
the others run (``self.mesh = jax.make_mesh(...)`` in ``setUp``, read by every test).
The body runs once per class, with no events recorded and no caller's arguments (its
parameters are what ``shardcheck specs`` assumes of a parameter no call in view passes),
and only an attribute that nothing else in the class assigns is read from it.

``check`` reads one thing this way: a mesh (``self.mesh = jax.make_mesh(...)``), in a
method no call in view runs, where ``.mesh`` is assigned nowhere else in the module (so
no subclass, method or caller stores another) and the class's bases are all library
classes (``unittest.TestCase``, ``nn.Module``), none of the project's, whose code could.
Every other attribute of ``self`` stays unknown there, as the classes' instances do.
"""

from __future__ import annotations

from typing import Any, Dict, FrozenSet, Tuple

import libcst as cst

from ..events import UNKNOWN_CTX
from ..syntax import compound_blocks, dotted
from ..values import UNKNOWN, ClassVal, InstanceVal, MeshVal, QualName, Value
from .objects import _lineage, _method, add_set_by_name, assignments_of, count_of
from .set_by_name import SET_BY_NAME, loop_names, names_set

# run before the other methods: by Python, dataclasses, unittest, Flax Linen (in order)
SET_UP_METHODS = ("__init__", "__post_init__", "setUp", "setup")


def set_up_value(it: Any, cls: ClassVal, attr: str) -> Value:
    """``self.<attr>`` as a set-up method of ``cls`` stores it, where that is the one
    assignment of ``.<attr>`` in the class and its source bases; else unknown."""
    if assignments_of(it, _lineage(cls), attr) != 1:
        return UNKNOWN
    return _stored_by_set_up(it, cls, attr)


def _stored_by_set_up(it: Any, cls: ClassVal, attr: str) -> Value:
    """What the first set-up method of ``cls`` that stores ``self.<attr>`` leaves there
    (run once per class); else unknown."""
    for name in SET_UP_METHODS:
        found = _method(cls, name)
        if found is not None:
            stored = _stores(it, cls, *found)
            if attr in stored:
                return stored[attr]
    return UNKNOWN


def check_self(it: Any, fdef: cst.CSTNode, env: Any) -> Value:
    """``check``: the first parameter of a method no call in view runs, as an instance
    of its class (whose attributes ``set_up_mesh`` reads); else unknown. Only a class
    whose bases are all library classes: a base of the project could store another."""
    entry = it.class_bodies.get(id(env.parent)) if env.parent is not None else None
    if entry is None or not isinstance(fdef, cst.FunctionDef) or any(
            dotted(d.decorator) in ("staticmethod", "classmethod") for d in fdef.decorators):
        return UNKNOWN
    stmt, body, bases = entry
    if not all(isinstance(b, QualName) or dotted(a.value) == "object"
               for a, b in zip(stmt.bases, bases)):
        return UNKNOWN
    # only its methods are read (set_up_mesh): none of make_class's walks of their bodies
    cls = it.memo(("check class", stmt), lambda: ClassVal(stmt, stmt.name.value, body))
    return InstanceVal(cls)


def set_up_mesh(it: Any, cls: ClassVal, attr: str) -> Value:
    """``check``: ``self.<attr>`` where a set-up method stores a mesh there and no other
    statement of the module assigns an attribute of that name; else unknown."""
    v = _stored_by_set_up(it, cls, attr)
    if not isinstance(v, MeshVal):
        return UNKNOWN
    counts = it.memo(("attribute assignments",), lambda: _assignments(it.module))
    return v if counts is not None and count_of(counts, attr) == 1 else UNKNOWN


def _assignments(module: cst.Module) -> Any:
    """Each attribute name's count of assignments in ``module`` (``=``, ``: T =``, ``+=``,
    tuple targets, ``for`` and ``with ... as`` targets, and a ``setattr`` whose names the
    source tells, ``set_by_name``); None where a statement sets attributes by a name it
    does not tell (``setattr(obj, name, v)``, ``x.__dict__[k] = v``). A hand-written walk of
    the statements: a libcst visitor over every node cost seconds on a large file."""
    counts: Dict[str, int] = {}
    by_name = [False]
    found: list = []

    def loops() -> Dict[int, FrozenSet[str]]:
        if not found:
            found.append(loop_names(module))
        return found[0]

    def target(t: cst.BaseExpression) -> None:
        if isinstance(t, cst.Attribute):
            counts[t.attr.value] = counts.get(t.attr.value, 0) + 1
        elif isinstance(t, (cst.Tuple, cst.List)):
            for el in t.elements:
                target(el.value)
        elif isinstance(t, cst.StarredElement):
            target(t.value)
        elif isinstance(t, cst.Subscript) and isinstance(t.value, cst.Attribute) \
                and t.value.attr.value == "__dict__":
            by_name[0] = True

    todo: list = list(module.body)
    while todo:
        s = todo.pop()
        if isinstance(s, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for small in s.body:
                if isinstance(small, cst.Assign):
                    for t in small.targets:
                        target(t.target)
                elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
                    target(small.target)
                elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) \
                        and dotted(small.value.func) in SET_BY_NAME:
                    sets = names_set(small.value, loops())
                    by_name[0] = by_name[0] or sets is None
                    add_set_by_name(counts, sets)
        elif isinstance(s, cst.IndentedBlock):
            todo.extend(s.body)
        elif isinstance(s, cst.BaseCompoundStatement):
            if isinstance(s, cst.For):
                target(s.target)
            elif isinstance(s, cst.With):
                for item in s.items:
                    if item.asname is not None:
                        target(item.asname.name)
            todo.extend(compound_blocks(s))
    return None if by_name[0] else counts


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
