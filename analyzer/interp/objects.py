"""Classes and their instances, for ``shardcheck specs`` (``Interpreter.assume_defaults``).

A config object is where real code keeps its meshes and specs (``config.data_sharding``,
``self.config.mesh_axes``). With no caller in view, the map reads such a field as the
default its class declares, and says so (the site's ``assumes``). ``check`` never does:
there an object's attribute stays unknown, as a value the caller may set differently.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Dict, Iterable, Iterator, List, Optional, Tuple

import libcst as cst

from ..syntax import dotted, none_test, root_name, target_names, walk
from ..values import UNKNOWN, ClassVal, Const, FuncVal, InstanceVal, PartialVal, QualName, Value
from .set_by_name import SET_BY_NAME, NamesSet, loop_names, names_set

_DATACLASS_DECORATORS = ("dataclass", "dataclasses.dataclass", "struct.dataclass",
                         "flax.struct.dataclass", "chex.dataclass")
_DATACLASS_BASES = ("Module", "PyTreeNode", "NamedTuple")
CLASS_KEY = "<class>"  # the name a class body's scope holds its ClassVal under


def make_class(stmt: cst.ClassDef, body_env: Any, bases: Tuple[Value, ...],
               module: Any = None, walk_methods: bool = True) -> ClassVal:
    """The ClassVal of ``stmt`` once its body ran in ``body_env``. ``walk_methods``: find
    the attributes its methods set (``set_elsewhere``, which the map reads); ``check``
    counts assignments itself, only when an instance's attribute is read
    (``interp/instances.py``)."""
    fields: List[Tuple[str, Any]] = []
    for s in stmt.body.body:
        if isinstance(s, cst.SimpleStatementLine):
            for small in s.body:
                if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) \
                        and _init_field(small):
                    fields.append((small.target.value, small.annotation.annotation))
    decorators = [dotted(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator)
                  for d in stmt.decorators]
    base_names = [dotted(b.value) or "" for b in stmt.bases]
    is_dc = any(d in _DATACLASS_DECORATORS for d in decorators if d) or any(
        n.rsplit(".", 1)[-1] in _DATACLASS_BASES for n in base_names) or any(
        isinstance(b, ClassVal) and b.dataclass for b in bases)
    frozen = any(_frozen_decorator(d.decorator) for d in stmt.decorators) or any(
        n.rsplit(".", 1)[-1] in _FROZEN_BASES for n in base_names) or any(
        isinstance(b, ClassVal) and b.frozen for b in bases)
    if walk_methods:
        set_elsewhere, opaque = _assigned_on_self(stmt)
    else:
        set_elsewhere, opaque = set(), any(
            isinstance(s, cst.FunctionDef) and s.name.value in ("__getattr__", "__getattribute__")
            for s in stmt.body.body)
    for b in bases:
        if isinstance(b, ClassVal):
            set_elsewhere |= b.set_elsewhere
            opaque = opaque or b.opaque
    return ClassVal(stmt, stmt.name.value, body_env, bases, tuple(fields), is_dc,
                    frozenset(set_elsewhere), opaque, frozen, module)


_FROZEN_BASES = ("PyTreeNode", "NamedTuple")


def named_tuple(cls: ClassVal) -> bool:
    """Whether ``cls`` is a ``typing.NamedTuple`` (or a class of the source derived
    from one): its instances are tuples of their fields, in order."""
    return any(isinstance(b, QualName) and b.name.rsplit(".", 1)[-1] == "NamedTuple"
               or isinstance(b, ClassVal) and named_tuple(b) for b in cls.bases)


def _frozen_decorator(d: cst.BaseExpression) -> bool:
    """``@dataclass(frozen=True)``, ``@flax.struct.dataclass`` (always frozen),
    ``@chex.dataclass(frozen=True)``."""
    if isinstance(d, cst.Call):
        name = dotted(d.func)
        if name in ("struct.dataclass", "flax.struct.dataclass"):
            return True
        return name in _DATACLASS_DECORATORS and any(
            a.keyword is not None and a.keyword.value == "frozen"
            and isinstance(a.value, cst.Name) and a.value.value == "True" for a in d.args)
    return dotted(d) in ("struct.dataclass", "flax.struct.dataclass")


def _init_field(stmt: cst.AnnAssign) -> bool:
    """Whether an annotated class attribute is a parameter of a dataclass's
    constructor: not a ``ClassVar``, nor ``field(init=False)``."""
    ann = stmt.annotation.annotation
    head = ann.value if isinstance(ann, cst.Subscript) else ann
    if (dotted(head) or "").rsplit(".", 1)[-1] == "ClassVar":
        return False
    v = stmt.value
    if isinstance(v, cst.Call) and (dotted(v.func) or "").rsplit(".", 1)[-1] == "field":
        return not any(a.keyword is not None and a.keyword.value == "init"
                       and isinstance(a.value, cst.Name) and a.value.value == "False"
                       for a in v.args)
    return True


def _assigned_on_self(stmt: cst.ClassDef) -> Tuple[set, bool]:
    """Attributes the class's methods set on their first parameter (``self.x = ...``,
    ``object.__setattr__(self, 'x', ...)``), and whether it defines ``__getattr__``."""
    out: set = set()
    opaque = False
    for s in stmt.body.body:
        if not isinstance(s, cst.FunctionDef):
            continue
        if s.name.value in ("__getattr__", "__getattribute__"):
            opaque = True
        params = s.params.params
        if not params:
            continue
        me = params[0].name.value
        loops = None
        for t in _assigned_attributes(s.body):
            if isinstance(t, cst.Attribute):
                if isinstance(t.value, cst.Name) and t.value.value == me:
                    out.add(t.attr.value)
            elif isinstance(t, cst.Call) and len(t.args) >= 2:
                loops = loop_names(stmt) if loops is None else loops
                sets = names_set(t, loops)
                if sets is None:
                    opaque = True
                else:
                    out |= sets.names
                    out |= {p + PREFIXED for p in sets.prefixes}
    return out, opaque


PREFIXED = "*"  # set_elsewhere holds ``layer_*`` for the names a setattr sets by a prefix


def set_elsewhere(cls: ClassVal, attr: str) -> bool:
    """Whether ``cls``'s methods set ``attr`` (``make_class``'s ``set_elsewhere``)."""
    return attr in cls.set_elsewhere or any(
        n.endswith(PREFIXED) and attr.startswith(n[:-1]) for n in cls.set_elsewhere)


def _assigned_attributes(root: cst.CSTNode) -> Iterator[cst.BaseExpression]:
    """Every attribute assigned under ``root`` (``=``, ``: T =``, ``+=``, tuple targets
    too), and every ``setattr`` call: a hand-written walk (libcst's visitor took a third
    of ``shardcheck specs``' time on a test of tunix's)."""
    def targets(t: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
        if isinstance(t, cst.Attribute):
            yield t
        elif isinstance(t, (cst.Tuple, cst.List)):
            for el in t.elements:
                yield from targets(el.value)

    for n in walk(root):
        kind = type(n)
        if kind is cst.AssignTarget or kind is cst.AnnAssign or kind is cst.AugAssign:
            yield from targets(n.target)  # type: ignore[attr-defined]  # each has a target
        elif kind is cst.Call and dotted(n.func) in SET_BY_NAME:  # type: ignore[attr-defined]
            yield n  # type: ignore[misc]  # a Call


def _lineage(cls: ClassVal) -> Iterator[ClassVal]:
    """The class, then its source bases depth first (Python's order for single and
    simple multiple inheritance)."""
    yield cls
    for b in cls.bases:
        if isinstance(b, ClassVal):
            yield from _lineage(b)


def lookup(cls: ClassVal, attr: str) -> Optional[Value]:
    """``attr`` as the class (or a base) binds it in its body; None when none does."""
    for c in _lineage(cls):
        v = c.env.vars.get(attr)
        if v is not None:
            return v
    return None


def annotation_of(cls: ClassVal, attr: str) -> Optional[Any]:
    for c in _lineage(cls):
        for name, ann in c.fields:
            if name == attr:
                return ann
    return None


def all_fields(cls: ClassVal) -> List[str]:
    """A dataclass's fields in its constructor's order (bases first)."""
    out: List[str] = []
    for b in cls.bases:
        if isinstance(b, ClassVal):
            out.extend(f for f in all_fields(b) if f not in out)
    out.extend(n for n, _ in cls.fields if n not in out)
    return out


def _method(cls: ClassVal, attr: str) -> Optional[Tuple[cst.FunctionDef, ClassVal]]:
    """The ``def attr`` of the class or the first base that has one."""
    for c in _lineage(cls):
        for s in c.node.body.body:  # type: ignore[attr-defined]  # a ClassDef
            if isinstance(s, cst.FunctionDef) and s.name.value == attr:
                return s, c
    return None


_DEFAULT_MAKERS = 4  # the static/class methods tried, at most


def default_instance(it: Any, cls: ClassVal, ctx: Any) -> Optional[InstanceVal]:
    """``shardcheck specs``: a config class whose fields are not all declared with a
    default, but which says how it is made by default: a static or class method with
    ``default`` in its name that takes no argument (``get_default_sharding()`` of
    tunix's and gemma's sharding configs) and returns an instance of the class. That
    instance, its fields read as assumed; None where there is no such method."""
    if cls.opaque or not cls.dataclass or all(lookup(cls, name) is not None
                                                for name, _ in cls.fields):
        return None
    tried = 0
    for s in cls.node.body.body:  # type: ignore[attr-defined]  # a ClassDef
        if not (isinstance(s, cst.FunctionDef) and "default" in s.name.value.lower()):
            continue
        kinds = {dotted(d.decorator) for d in s.decorators}
        params = list(s.params.posonly_params) + list(s.params.params)
        if "classmethod" in kinds:
            params = params[1:]
        elif "staticmethod" not in kinds:
            continue
        if any(p.default is None for p in params + list(s.params.kwonly_params)):
            continue
        tried += 1
        if tried > _DEFAULT_MAKERS:
            break
        fv = FuncVal(s, s.name.value, cls.env)
        made = it.eval_return(fv, (cls,) if "classmethod" in kinds else (), {}, ctx)
        if isinstance(made, InstanceVal) and made.cls is cls:
            return InstanceVal(cls, made.given, assumed=True, shown=f"{cls.name}.{s.name.value}()")
    return None


def instance_attribute(it: Any, inst: InstanceVal, attr: str, ctx: Any) -> Value:
    """``inst.attr``: what the constructor was given, else the class's declared value
    (recorded as an assumption where no call in view made the instance); a field with no
    default whose annotation names a source class is an instance of it, assumed."""
    cls = inst.cls
    for k, v in inst.given:
        if k == attr:
            if inst.assumed:  # a Python config's get_config() set it, or a default maker
                it.assumed.append(f"{inst.shown or cls.name}.{attr}")
            return v
    if not it.assume_defaults:  # check: a method's self, a mesh the set-up stores
        from .set_up import set_up_mesh
        return set_up_mesh(it, cls, attr)
    if cls.opaque:
        return UNKNOWN
    if set_elsewhere(cls, attr):
        stored = _stored_parameter(it, cls, attr, ctx)
        if stored is UNKNOWN:
            from .set_up import set_up_value
            stored = set_up_value(it, cls, attr)
        return stored
    method = _method(cls, attr)
    if method is not None:
        fdef, owner = method
        kinds = {dotted(d.decorator) for d in fdef.decorators}
        fv = FuncVal(fdef, attr, owner.env)
        if "property" in kinds or "functools.cached_property" in kinds \
                or "cached_property" in kinds:
            return it.eval_return(fv, (inst,), {}, ctx)
        if "staticmethod" in kinds:
            return fv
        if "classmethod" in kinds:
            return PartialVal(fv, (owner,), ())
        return PartialVal(fv, (inst,), ())
    found = lookup(cls, attr)
    if found is not None:
        if inst.assumed and not isinstance(found, (FuncVal, ClassVal)):
            it.assumed.append(f"{cls.name}.{attr}")
        return found
    ann = annotation_of(cls, attr)
    if ann is not None:
        target = it.ev(ann, cls.env, ctx)
        if isinstance(target, ClassVal):
            return InstanceVal(target, assumed=True)
    return UNKNOWN


# dataclass fields with a default (keyword-only: default=, default_factory=)
FIELD_FUNCTIONS = ("dataclasses.field", "flax.struct.field", "chex.field")


def field_default(it: Any, call: Any, ctx: Any, make: Any = None) -> Value:
    """``x: T = field(default=v)`` declares ``v``; ``field(default_factory=F)`` declares
    what ``F()`` makes: an instance of a source class holding its own defaults
    (``rules: ShardingRules = field(default_factory=ShardingRules)``), or a small
    function's return value. Anything else (``list``, no default) is unknown."""
    if "default" in call.kw:
        return call.kw["default"].value
    factory = call.kw.get("default_factory")
    if factory is None:
        return UNKNOWN
    f = factory.value
    if isinstance(f, ClassVal):  # make: check's constructor (interp/instances.py)
        return make(it, f, (), {}, ctx) if make is not None else construct(f, (), {})
    if isinstance(f, FuncVal):
        return it.eval_return(f, (), {}, ctx)
    return UNKNOWN


def _stored_parameter(it: Any, cls: ClassVal, attr: str, ctx: Any) -> Value:
    """``self.config`` that ``__init__`` stores from its parameter of the same name
    (``self.config = config``), read with no caller in view: its declared default, else
    an instance of the class the parameter is annotated with, assumed; for a config
    parameter not annotated with a source class (none, ``Any``) or with one whose fields
    are dynamic (it defines ``__getattr__``: a loader's ``HyperParameters``), the run's
    YAML config where the project has one.
    Else unknown (a method may set the attribute to anything)."""
    init = _method(cls, "__init__")
    if init is None:
        return UNKNOWN
    fdef, owner = init
    for p in list(fdef.params.params) + list(fdef.params.kwonly_params):
        if p.name.value == attr and _stores(fdef, attr):
            return _parameter_value(it, owner, p, ctx, fdef)
    if it.assume_defaults:
        literal = it.memo(("stored literal", cls.node, attr),  # once per attribute
                          lambda: _stored_literal(it, (cls, owner), fdef, attr))
        if literal is not None:
            from .state import Env
            env = Env(parent=owner.env)  # the parameters a chain starts from, as assumed
            for p in list(fdef.params.params)[1:] + list(fdef.params.kwonly_params):
                if p.name.value == root_name(literal):
                    env.vars[p.name.value] = _parameter_value(it, owner, p, ctx, fdef)
            return it.ev(literal, env, ctx)
    return UNKNOWN


def _parameter_value(it: Any, owner: ClassVal, p: cst.Param, ctx: Any,
                     init: cst.FunctionDef) -> Value:
    """What ``__init__``'s parameter ``p`` holds with no caller in view: its declared
    default (not None), assumed; a None default the body fills in (``if p is None: p =
    v``, see ``fills_none``): that ``v``, assumed; else an instance of the source class it
    is annotated with; else, for a config parameter (see ``CONFIG_NAMES``), the run's YAML
    config."""
    attr = p.name.value
    default = it.ev(p.default, owner.env, ctx) if p.default is not None else UNKNOWN
    if default is not UNKNOWN and not (isinstance(default, Const) and default.value is None):
        it.assumed.append(f"{owner.name}.__init__.{attr}")  # its declared default
        return default
    filled = cached_fills_none(it, init, attr) \
        if it.assume_defaults and default is not UNKNOWN else None
    if filled is not None:
        from .state import Env
        v = it.ev(filled, Env(parent=owner.env), ctx)
        if v is not UNKNOWN:
            it.assumed.append(f"{owner.name}.__init__.{attr}")
            return v
    ann = p.annotation.annotation if p.annotation is not None else None
    target = it.ev(ann, owner.env, ctx) if ann is not None else UNKNOWN
    if isinstance(target, ClassVal) and not (target.opaque and attr in CONFIG_NAMES):
        return InstanceVal(target, assumed=True)
    if attr in CONFIG_NAMES:  # none, Any, or a class whose fields are dynamic (__getattr__)
        return yaml_config_instance(it.logical_config) or UNKNOWN
    return UNKNOWN


def _stored_literal(it: Any, classes: Tuple[ClassVal, ClassVal], init: cst.FunctionDef,
                    name: str) -> Optional[cst.BaseExpression]:
    """The literal ``__init__`` stores as ``self.<name>`` in its own body (not under a
    branch: ``self.axes = ("batch", "embed")``), or an attribute chain from one of its
    parameters that it never rebinds (``self.shd_config = config.shd_config``), where no
    other assignment of that attribute is written anywhere in the class (nor in the base
    that defines ``__init__``)."""
    stored = list(_stored_on_self(init, name))
    found = stored[-1] if stored else None
    if found is None:
        return None
    if not _is_literal(found):  # else a chain from a parameter __init__ never rebinds
        root = root_name(found)
        params = [p.name.value for p in list(init.params.params)[1:] + list(init.params.kwonly_params)]
        if not isinstance(found, cst.Attribute) or root not in params \
                or (_rebinds(init, root) and fills_none(init, root) is None):
            return None
    return found if assignments_of(it, classes, name) == 1 else None


def _rebinds(fdef: cst.FunctionDef, name: str) -> bool:
    """Whether ``fdef``'s body assigns the bare name ``name`` anywhere."""
    finder = _NameAssignments(name)
    fdef.body.visit(finder)
    return finder.found


def cached_fills_none(it: Any, fdef: cst.FunctionDef, name: str) -> Optional[cst.BaseExpression]:
    """``fills_none``, with the body walked once per (function, parameter) in a run: it
    is asked at every read of the parameter (or of ``self.<name>`` stored from it)."""
    return it.memo(("fills none", fdef, name), lambda: fills_none(fdef, name))


def fills_none(fdef: cst.FunctionDef, name: str) -> Optional[cst.BaseExpression]:
    """What the body puts in parameter ``name`` when a call leaves it None, written at
    the body's top level: ``if name is None: name = v`` (or ``if not name:``),
    ``name = name or v``, ``name = v if name is None else name``. None when the body
    does not fill it so, or assigns the name anywhere else too."""
    filled: Optional[cst.BaseExpression] = None
    for s in fdef.body.body:
        if isinstance(s, cst.If) and s.orelse is None and _tests_none(s.test, name) \
                and len(s.body.body) == 1:
            filled = _assigned(s.body.body[0], name)
        elif isinstance(s, cst.SimpleStatementLine):
            v = _assigned(s, name)
            if isinstance(v, cst.BooleanOperation) and isinstance(v.operator, cst.Or) \
                    and _is_name(v.left, name):
                filled = v.right
            elif isinstance(v, cst.IfExp) and _tests_none(v.test, name) and _is_name(v.orelse, name):
                filled = v.body
        if filled is not None:
            break
    if filled is None:
        return None
    finder = _NameAssignments(name)
    fdef.body.visit(finder)
    return filled if finder.count == 1 else None


def _tests_none(test: cst.BaseExpression, name: str) -> bool:
    """``name is None`` or ``not name``."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return _is_name(test.expression, name)
    tested = none_test(test)
    return tested is not None and tested[1] and _is_name(tested[0], name)


def _is_name(e: cst.CSTNode, name: str) -> bool:
    return isinstance(e, cst.Name) and e.value == name


def _assigned(s: cst.CSTNode, name: str) -> Optional[cst.BaseExpression]:
    """``v`` where ``s`` is ``name = v``, alone on its line (or after ``if ...:``)."""
    small = s.body[0] if isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1 else s
    if isinstance(small, cst.Assign) and len(small.targets) == 1 \
            and _is_name(small.targets[0].target, name):
        return small.value
    if isinstance(small, cst.AnnAssign) and small.value is not None and _is_name(small.target, name):
        return small.value
    return None


class _NameAssignments(cst.CSTVisitor):
    def __init__(self, name: str) -> None:
        self.name = name
        self.count = 0

    @property
    def found(self) -> bool:
        return self.count > 0

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self.count += sum(isinstance(n, cst.Name) and n.value == self.name
                          for n in target_names(node.target))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.count += isinstance(node.target, cst.Name) and node.target.value == self.name

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self.count += isinstance(node.target, cst.Name) and node.target.value == self.name

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self.count += isinstance(node.target, cst.Name) and node.target.value == self.name

    def visit_For(self, node: cst.For) -> None:
        self.count += sum(n.value == self.name for n in target_names(node.target))


def _is_literal(e: cst.CSTNode) -> bool:
    """Strings, numbers, None/True/False, and tuples and lists of them."""
    if isinstance(e, (cst.SimpleString, cst.Integer, cst.Float)):
        return True
    if isinstance(e, cst.Name):
        return e.value in ("None", "True", "False")
    if isinstance(e, (cst.Tuple, cst.List)):
        return all(isinstance(el, cst.Element) and _is_literal(el.value) for el in e.elements)
    return False


_BY_NAME = ""  # the key of attribute_assignments' count of attributes set by name


def attribute_assignments(node: cst.CSTNode) -> Dict[str, int]:
    """How many times each ``<anything>.<name>`` is assigned under ``node`` (``=``, ``: T
    =``, ``+=``, tuple targets too); under ``""``, 2 for each ``setattr`` (set by name:
    not one literal). One walk counts every name: a class's count is read for many."""
    counts: Dict[str, int] = {}
    loops = None
    for t in _assigned_attributes(node):
        if isinstance(t, cst.Attribute):
            counts[t.attr.value] = counts.get(t.attr.value, 0) + 1
            continue
        loops = loop_names(node) if loops is None else loops
        add_set_by_name(counts, names_set(t, loops))  # type: ignore[arg-type]  # a Call
    return counts


def add_set_by_name(counts: Dict[str, int], sets: Optional[NamesSet]) -> None:
    """Count one ``setattr`` in ``counts``: once for each name it can set, under
    ``*prefix`` for the names it sets by a prefix, 2 under ``""`` when it can set any."""
    if sets is None:
        counts[_BY_NAME] = counts.get(_BY_NAME, 0) + 2
        return
    for n in sets.names:
        counts[n] = counts.get(n, 0) + 1
    for p in sets.prefixes:
        counts[PREFIXED + p] = counts.get(PREFIXED + p, 0) + 1


def count_of(counts: Dict[str, int], name: str) -> int:
    """``name``'s assignments in ``add_set_by_name``'s ``counts``, those by a prefix too
    (not those of any name, under ``""``)."""
    return counts.get(name, 0) + sum(v for k, v in counts.items()
                                     if k[:1] == PREFIXED and name.startswith(k[1:]))


def assignments_of(it: Any, classes: Iterable[ClassVal], name: str) -> int:
    """How many times ``.<name>`` is assigned (or any attribute set by name, counted 2)
    in ``classes``, each class counted once (``attribute_assignments``, once per class
    in this analysis)."""
    total = 0
    for c in dict.fromkeys(classes):
        counts = it.memo(("attribute assignments", c.node), partial(attribute_assignments, c.node))
        total += count_of(counts, name) + counts.get(_BY_NAME, 0)
    return total


def _stores(fdef: cst.FunctionDef, name: str) -> bool:
    """``self.<name> = <name>`` is a statement of ``fdef``'s body."""
    return any(isinstance(v, cst.Name) and v.value == name for v in _stored_on_self(fdef, name))


def _stored_on_self(fdef: cst.FunctionDef, name: str) -> Iterator[cst.BaseExpression]:
    """The values ``fdef``'s own body (not under a branch) assigns as ``self.<name> = v``,
    in order."""
    me = fdef.params.params[0].name.value if fdef.params.params else None
    for s in fdef.body.body:
        if not isinstance(s, cst.SimpleStatementLine):
            continue
        for small in s.body:
            if isinstance(small, cst.Assign) and len(small.targets) == 1 \
                    and dotted(small.targets[0].target) == f"{me}.{name}":
                yield small.value


def construct(cls: ClassVal, pos: tuple, kws: dict) -> Value:
    """``Cls(...)``: an instance holding a dataclass's arguments by field."""
    if not cls.dataclass:
        return InstanceVal(cls)
    names = all_fields(cls)
    given = list(zip(names, pos)) + [(k, v) for k, v in kws.items()]
    return InstanceVal(cls, tuple(given))


def with_attribute(inst: InstanceVal, attr: str, v: Value) -> InstanceVal:
    """The instance after ``inst.attr = v``."""
    return InstanceVal(inst.cls, tuple((k, x) for k, x in inst.given if k != attr) + ((attr, v),),
                       inst.assumed, inst.made, inst.written | {attr})


CONFIG_DICTS = ("ml_collections.ConfigDict", "ml_collections.FrozenConfigDict",
                "ml_collections.config_dict.ConfigDict",
                "ml_collections.config_dict.FrozenConfigDict",
                "ml_collections.config_dict.config_dict.ConfigDict",
                "ml_collections.config_dict.config_dict.FrozenConfigDict")


_configs: dict = {}  # (path, shown) -> (its fields, its instance): one class for every read


def python_config_instance(config_path: str, shown: str) -> Optional[InstanceVal]:
    """An ml_collections config as its script's ``get_config()`` makes it: the fields it
    sets to literals (``analyzer/pyconfig.py``), each read recorded as an assumption."""
    from ..pyconfig import literal_fields
    fields = literal_fields(config_path)
    if not fields:
        return None
    got = _configs.get((config_path, shown))
    if got is None or got[0] is not fields:  # first read, or the file changed
        got = _configs[(config_path, shown)] = (fields, _config_instance(fields, shown))
    return got[1]


# Names under which code passes its run's config object around (``config.data_sharding``,
# ``self.config.mesh_axes``, ``cfg.emb_dim``)
CONFIG_NAMES = ("config", "cfg", "conf", "_config", "_cfg")


def yaml_config_instance(logical: Any) -> Optional[InstanceVal]:
    """The run's config object as the project's YAML config file makes it (MaxText-style:
    ``P(*config.data_sharding)`` with ``data_sharding: [['data', 'fsdp']]`` in
    ``configs/base.yml``): the file the logical axis rules come from, its top-level
    literal keys as fields, each read recorded as an assumption. None without one."""
    if logical is None or not logical.fields or logical.source is None:
        return None
    key = (logical.source, logical.fields)
    got = _configs.get(key)
    if got is None:
        got = _configs[key] = (logical.fields, _instance(dict(logical.fields),
                                                         f"{logical.source}:config"))
    return got[1]


def _config_instance(fields: dict, shown: str) -> InstanceVal:
    from ..pyconfig import owner
    return _instance(fields, owner(shown))


def library_class(name: str, frozen: bool = False, shown: Optional[str] = None) -> ClassVal:
    """A class no source defines (ml_collections' ConfigDict, argparse's Namespace): its
    instances hold what is stored on them. ``shown``: how messages name it."""
    from .state import Env
    node = cst.ClassDef(name=cst.Name(name), body=cst.IndentedBlock(
        body=[cst.SimpleStatementLine(body=[cst.Pass()])]))
    return ClassVal(node, shown or name, Env(), frozen=frozen)


def _instance(fields: dict, name: str) -> InstanceVal:
    return InstanceVal(library_class("ConfigDict", shown=name),
                       tuple((k, _literal(v)) for k, v in fields.items()), assumed=True)


def _literal(v: Any) -> Value:
    from ..values import Const, DictVal, TupleVal
    if isinstance(v, (list, tuple)):
        return TupleVal(tuple(_literal(x) for x in v), is_list=isinstance(v, list))
    if isinstance(v, dict):
        return DictVal(tuple((k, _literal(x)) for k, x in v.items()))
    if isinstance(v, (str, int, float, bool, type(None))):
        return Const(v)
    return UNKNOWN
