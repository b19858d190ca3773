"""Objects in ``check``: what a call in view constructs, and what its attributes hold.

Calling a class runs its constructor: the ``__init__`` a dataclass is given (each field
from the arguments, else its declared default, ``field(default_factory=...)`` too) or
the first source ``__init__`` in the method resolution order (with what it calls on
``self``, ``super().__init__(...)`` included), then ``__post_init__`` and, for a Flax
Linen module, ``setup`` (which Flax runs before any method reads a submodule).
``construct`` runs them on a fresh instance with the call's arguments, recording nothing,
and returns the instance holding what they stored (``InstanceVal.made``); the
constructor's body is also queued for analysis with those arguments, so what it does
wrong for them is reported in it, with the call that passed them noted.

Instances change: a method may assign ``self.state`` again, and any code holding the
object may. So a read (``attribute``) gives:

- an attribute the code under analysis assigned on this instance since it last passed
  the instance to a call it did not follow (``InstanceVal.written``): what it assigned;
- an attribute the constructor stored, where no statement but the set-up methods'
  assigns it (in the class's module and the module reading it), or a frozen instance's
  field (a ``NamedTuple``, ``@dataclass(frozen=True)``, ``flax.struct``): that value;
- an attribute a single statement of those modules assigns (``config.mesh_shape =
  (2, 4)`` on a ``ConfigDict``), read from an instance that statement wrote: that value;
- a method: bound to the instance (a ``jax.jit``-decorated one stays jitted), a
  property: what it returns;
- a class attribute nothing assigns on instances: the class's value;

and anything else is unknown, as is every attribute of a class that defines
``__getattr__``, or whose module sets attributes by name (``setattr``).
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

import libcst as cst

from ..api import get_hook
from ..events import MeshCtx
from ..syntax import dotted
from ..values import (SPREAD, UNKNOWN, ClassVal, Const, FuncVal, InstanceVal, IteratorVal, JitVal,
                      PartialVal, Value)
from .objects import (_assigned_attributes, _lineage, _method, all_fields, count_of,
                      instance_attribute, lookup)

# what runs when a class is called, in order, after __init__ (Python, dataclasses, Flax Linen)
AFTER_INIT = ("__post_init__", "setup")
_SET_UP = ("__init__",) + AFTER_INIT
SELF_KEY = "<self>"  # a method's scope holds its first parameter's name under this key
_MAX_RUN_DEPTH = 6  # constructors within constructors (a trainer, its model, its layers)
# methods run for one analysed function (or the module's body): each run may run the
# methods it calls, so without a bound a class whose methods call each other in loops
# (an interpreter's exec_block -> exec_stmt -> exec_if -> exec_block) costs k**depth runs
_MAX_RUNS = 200


def construct(it: Any, cls: ClassVal, pos: tuple, kws: Dict[str, Value], ctx: MeshCtx) -> Value:
    """The instance ``cls(*pos, **kws)`` makes, its set-up methods run; the source methods
    among them are queued for analysis with these arguments."""
    if _method(cls, "__new__") is not None:
        return UNKNOWN  # it may return anything
    inst = InstanceVal(cls, made=True)
    init = _constructor(cls)
    if init is None:  # no source __init__ and no dataclass's: a library class's, unknown
        pass
    elif init[0] is None:  # the dataclass's own
        inst = InstanceVal(cls, _dataclass_fields(it, cls, pos, kws), made=True)
    else:
        inst = _run_set_up(it, init[0], init[1], inst, pos, kws, ctx)
    for name in AFTER_INIT:
        found = _method(cls, name)
        if found is not None:
            inst = _run_set_up(it, found[0], found[1], inst, (), {}, ctx)
    return InstanceVal(cls, inst.given, made=True)


def _run_set_up(it: Any, fdef: cst.FunctionDef, owner: ClassVal, inst: InstanceVal,
                pos: tuple, kws: Dict[str, Value], ctx: MeshCtx) -> InstanceVal:
    """``inst`` after the set-up method ``fdef`` ran on it (analysed for these arguments
    too); what the method stores is unknown where it could not be run."""
    fv = FuncVal(fdef, fdef.name.value, owner.env)
    it.note_call(fv, ctx, (inst,) + pos, dict(kws))
    _, after = run_method(it, fdef, owner, inst, pos, kws, ctx)
    if after is None:
        return InstanceVal(inst.cls, made=True)  # its stores unknown (none given: not settled)
    return after


def _constructor(cls: ClassVal) -> Optional[Tuple[Optional[cst.FunctionDef], ClassVal]]:
    """The ``__init__`` that runs: the first class in the lineage that writes one, or is
    a dataclass (``(None, cls)``: the generated one). None: a library class's."""
    for c in _lineage(cls):
        for s in c.node.body.body:  # type: ignore[attr-defined]  # a ClassDef
            if isinstance(s, cst.FunctionDef) and s.name.value == "__init__":
                return s, c
        if c.dataclass and c.fields:
            return None, c
    return (None, cls) if cls.dataclass else None


def _dataclass_fields(it: Any, cls: ClassVal, pos: tuple, kws: Dict[str, Value]) -> tuple:
    """A dataclass's fields for these arguments: each passed one, else its default."""
    names = all_fields(cls)
    given: Dict[str, Value] = {}
    spread = any(p is SPREAD for p in pos)
    for name, v in zip(names, pos):
        given[name] = UNKNOWN if spread else v
    for name in names:
        if name in kws:
            given[name] = kws[name]
        elif name not in given:
            default = lookup(cls, name)
            given[name] = UNKNOWN if spread or default is None else default
    return tuple(given.items())


def is_generator(it: Any, fdef: cst.FunctionDef) -> bool:
    """Whether ``fdef``'s body yields (not a function or lambda defined in it)."""
    from ..syntax import has_yield
    return bool(it.memo(("generator", fdef), lambda: has_yield(fdef.body)))


def iterated(it: Any, inst: InstanceVal, ctx: MeshCtx) -> Value:
    """The item ``for x in inst`` binds: what the class's source ``__iter__`` yields,
    joined (``IteratorVal``'s item where it returns an iterator); unknown otherwise."""
    found = _method(inst.cls, "__iter__")
    if found is None:
        return UNKNOWN
    fdef, owner = found
    generator = is_generator(it, fdef)
    result, _ = run_method(it, fdef, owner, inst, (), {}, ctx, yields=generator)
    if isinstance(result, IteratorVal):
        return result.item
    return UNKNOWN


def run_method(it: Any, fdef: cst.FunctionDef, owner: ClassVal, inst: InstanceVal, pos: tuple,
               kws: Dict[str, Value], ctx: MeshCtx,
               yields: bool = False) -> Tuple[Value, Optional[InstanceVal]]:
    """What the method returns and what its ``self`` holds at its end, run on ``inst``
    with these arguments and nothing recorded (once per instance and arguments in an
    analysis); ``(UNKNOWN, None)`` where it could not be run (too deep, recursive).
    ``yields``: it is a generator, whose call returns an ``IteratorVal`` of what it
    yields."""
    key = ("method run", fdef, id(inst), tuple(id(a) for a in pos),
           tuple(sorted((k, id(v)) for k, v in kws.items())), yields)
    got = it.ret_cache.get(key)
    if got is not None:
        return got[0], got[1]
    params = list(fdef.params.posonly_params) + list(fdef.params.params)
    running = it.methods_running
    if not params or it.helper_depth >= _MAX_RUN_DEPTH or fdef in running \
            or it.method_runs >= _MAX_RUNS:
        return UNKNOWN, None  # too deep, recursive (on any instance), or over the budget
    it.method_runs += 1
    running.add(fdef)
    # a call of it while it runs: unknown, not a loop (the arguments are kept alive, so
    # their ids are not reused by a later key)
    it.ret_cache[key] = (UNKNOWN, None, (inst, pos, kws))
    from .state import Env
    saved = (it.cur, it.returns, it.caller, it.ended, it.site_sink, it.yields)
    returns: list = []
    it.cur, it.returns, it.site_sink = None, returns, None
    it.yields = [] if yields else None
    it.helper_depth += 1
    env = Env(parent=owner.env)
    result: Value = UNKNOWN
    after: Optional[InstanceVal] = None
    try:
        it.bind_params(fdef, env, ctx, (inst,) + tuple(pos), dict(kws))
        it.exec_block(fdef.body, env, ctx)
        final = env.vars.get(params[0].name.value)
        if isinstance(final, InstanceVal) and final.cls is inst.cls:
            after = final
        rets = [v for _, v in returns] if not yields else list(it.yields or ())
        if rets:
            from ..values import join
            result = rets[0]
            for r in rets[1:]:
                result = join(result, r)
        else:
            result = Const(None) if not yields else UNKNOWN
        if yields:
            result = IteratorVal(result)
    except RecursionError:
        result, after = UNKNOWN, None
    finally:
        it.helper_depth -= 1
        running.discard(fdef)
        it.cur, it.returns, it.caller, it.ended, it.site_sink, it.yields = saved
    it.ret_cache[key] = (result, after, (inst, pos, kws))
    return result, after


def stores_on_self(it: Any, fdef: cst.FunctionDef) -> bool:
    """Whether ``fdef`` assigns an attribute of its first parameter (or any by name)."""
    def compute() -> bool:
        params = list(fdef.params.posonly_params) + list(fdef.params.params)
        if not params:
            return False
        me = params[0].name.value
        for t in _assigned_attributes(fdef.body):
            if not isinstance(t, cst.Attribute):
                return True  # setattr(...)
            if isinstance(t.value, cst.Name) and t.value.value == me:
                return True
        return False
    return bool(it.memo(("stores on self", fdef), compute))


def read_attribute(it: Any, inst: InstanceVal, attr: str, ctx: MeshCtx) -> Value:
    """``inst.attr``: in ``check``, of an instance a call in view made or an attribute the
    code wrote (``attribute``); else as ``shardcheck specs`` assumes it, or a mesh a
    method's ``self`` has from its class's set-up (``objects.instance_attribute``)."""
    if not it.assume_defaults and (inst.made or attr in inst.written):
        return attribute(it, inst, attr, ctx)
    return instance_attribute(it, inst, attr, ctx)


def attribute(it: Any, inst: InstanceVal, attr: str, ctx: MeshCtx) -> Value:
    """``inst.attr`` in ``check`` (see the module's docstring); ``inst`` was made by a
    call in view, or was given attributes by the code under analysis."""
    given = None
    for k, v in inst.given:
        if k == attr:
            given = v
    cls = inst.cls
    if given is not None:
        if attr in inst.written or (inst.made and _settled(it, inst, attr)):
            return given
        return UNKNOWN
    if cls.opaque or not inst.made:
        return UNKNOWN
    bound = _bound_method(it, inst, attr, ctx)
    if bound is not None:
        return bound
    found = lookup(cls, attr)
    if found is not None and _assignments(it, cls, attr) == 0:
        return found
    if found is None and _assignments(it, cls, attr) == 0:
        inherited = get_hook("inherited")(it, inst, attr,
                                          lambda name: _bound_method(it, inst, name, ctx))
        if inherited is not None:  # given by a library base class
            return inherited
    return UNKNOWN


def _bound_method(it: Any, inst: InstanceVal, attr: str, ctx: MeshCtx) -> Optional[Value]:
    """``inst.attr`` where the class (or a source base) defines a method ``attr``; None
    where none does."""
    found = _method(inst.cls, attr)
    if found is None:
        return None
    fdef, owner = found
    kinds = {dotted(d.decorator) for d in fdef.decorators}
    fv = FuncVal(fdef, attr, owner.env)
    if kinds & {"property", "functools.cached_property", "cached_property"}:
        value, _ = run_method(it, fdef, owner, inst, (), {}, ctx)
        return value
    if "staticmethod" in kinds:
        return fv
    if "classmethod" in kinds:
        return PartialVal(fv, (owner,), ())
    declared = owner.env.vars.get(attr)
    if isinstance(declared, (FuncVal, JitVal)) and (
            declared.node is fdef if isinstance(declared, FuncVal) else True):
        return PartialVal(declared, (inst,), ())
    return UNKNOWN  # a decorator the analyzer does not know replaced it


def _settled(it: Any, inst: InstanceVal, attr: str) -> bool:
    """Whether what the construction stored as ``attr`` is what the instance holds
    whenever it is read: the instance is frozen, or only set-up methods assign it, or a
    single statement does and it stored this value (not a dataclass field's argument)."""
    cls = inst.cls
    if cls.frozen:
        return True
    total = _assignments(it, cls, attr)
    if total is None:
        return False
    set_up = _set_up_assignments(it, cls).get(attr, 0)
    if total == set_up:
        return True
    return total == 1 and set_up == 0 and attr not in all_fields(cls)


def _assignments(it: Any, cls: ClassVal, attr: str) -> Optional[int]:
    """How many statements assign ``.attr`` in the class's module and in the module
    being analysed (None: one of them sets attributes by name)."""
    from .set_up import _assignments as module_assignments
    total = 0
    modules = [it.module] if cls.module is None or cls.module is it.module \
        else [it.module, cls.module]
    for m in modules:
        counts = it.memo(("attribute assignments", id(m)), lambda m=m: module_assignments(m))
        if counts is None:
            return None
        total += count_of(counts, attr)
    return total


def _set_up_assignments(it: Any, cls: ClassVal) -> Dict[str, int]:
    """Each attribute's count of assignments on ``self`` in the set-up methods of the
    class and its source bases."""
    def compute() -> Dict[str, int]:
        counts: Dict[str, int] = {}
        for c in dict.fromkeys(_lineage(cls)):
            for s in c.node.body.body:  # type: ignore[attr-defined]  # a ClassDef
                if not (isinstance(s, cst.FunctionDef) and s.name.value in _SET_UP):
                    continue
                params = list(s.params.posonly_params) + list(s.params.params)
                if not params:
                    continue
                me = params[0].name.value
                for t in _assigned_attributes(s.body):
                    if isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) \
                            and t.value.value == me:
                        counts[t.attr.value] = counts.get(t.attr.value, 0) + 1
        return counts
    counts: Dict[str, int] = it.memo(("set-up assignments", cls.node), compute)
    return counts


def forget_writes(inst: InstanceVal) -> InstanceVal:
    """The instance once a call the analysis did not follow was given it: what the code
    wrote on it may have been replaced there."""
    if not inst.written:
        return inst
    return InstanceVal(inst.cls, inst.given, inst.assumed, inst.made)



def super_attribute(sup: Any, attr: str) -> Value:
    """``super().attr``: the method of the first class after ``sup.owner`` in the
    instance's lineage that defines one, bound to the instance; unknown where none in
    view does (a library base's)."""
    lineage = list(dict.fromkeys(_lineage(sup.inst.cls)))
    if sup.owner not in lineage:
        return UNKNOWN
    for c in lineage[lineage.index(sup.owner) + 1:]:
        for s in c.node.body.body:  # type: ignore[attr-defined]  # a ClassDef
            if isinstance(s, cst.FunctionDef) and s.name.value == attr:
                return PartialVal(FuncVal(s, attr, c.env), (sup.inst,), ())
    return UNKNOWN
