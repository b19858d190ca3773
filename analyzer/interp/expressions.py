"""Python expressions: names, constants, containers, comprehensions, operators,
attributes and subscripts. Arrays, meshes and other JAX values get their meaning from
``analyzer.jaxapi`` (attribute handlers and the operator hooks)."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple, Union

import libcst as cst

from .. import transfer as tr
from ..events import MeshCtx
from ..api import as_sequence, attribute_handler, get_hook, index_handler
from ..values import (UNKNOWN, ArrayVal, Const, DictVal, FuncVal, ProjectModule, QualName,
                      ShardingVal, SpecChoice, SpecVal, TupleVal, Value, const_int, const_str, join,
                      merge_item)
from ..syntax import dotted, none_test, string_value
from ..values import ClassVal, InstanceVal, IteratorVal, PartialVal
from .base import InterpreterBase
from .objects import lookup as class_lookup
from .objects import named_tuple
from .instances import iterated, read_attribute, super_attribute
from .state import Env, SuperVal

_MAX_UNROLL = 16  # comprehensions/loops over at most this many known items are unrolled
_MAX_REPEAT = 64  # (a, b) * n is built only for small n


_BUILTIN_BOOL = QualName("builtins.bool")


class ExpressionsMixin(InterpreterBase):
    """The expression half of the interpreter (mixed into ``Interpreter``)."""

    def ev(self, e: Optional[cst.CSTNode], env: Env, ctx: MeshCtx) -> Value:
        """The abstract value of expression ``e``. Dispatched on the node's exact type
        (libcst's node classes have no subclasses): ``isinstance`` against them goes
        through ``ABCMeta`` in Python, and a chain of them was a tenth of a check."""
        if e is None:
            return UNKNOWN
        t = type(e)
        if t is cst.Name:
            if e.value in ("None", "True", "False"):  # type: ignore[attr-defined]  # a Name
                return Const({"None": None, "True": True, "False": False}[e.value])  # type: ignore[attr-defined]
            v = env.lookup(e.value)  # type: ignore[attr-defined]  # a Name
            if v is UNKNOWN and e.value == "bool" and not env.binds("bool"):  # type: ignore[attr-defined]
                return _BUILTIN_BOOL  # the builtin type (a dtype: jnp.ones(n, bool))
            return v
        if t is cst.Attribute:
            return self.attribute(e, env, ctx)  # type: ignore[arg-type]  # an Attribute
        if t is cst.Call:
            return self.call(e, env, ctx)  # type: ignore[arg-type]  # a Call
        kind = _KINDS.get(t)
        if kind is None:
            return UNKNOWN
        return kind(self, e, env, ctx)

    def _unary(self, e: cst.UnaryOperation, env: Env, ctx: MeshCtx) -> Value:
        v = self.ev(e.expression, env, ctx)
        if isinstance(e.operator, cst.Not):
            t = truth(v)
            return UNKNOWN if t is None else Const(not t)
        if isinstance(e.operator, cst.Minus) and isinstance(v, Const) and isinstance(v.value, (int, float)):
            return Const(-v.value)
        if isinstance(v, ArrayVal):
            return get_hook("unary")(self, e.operator, v, e)
        return UNKNOWN

    def _lambda(self, e: cst.Lambda, env: Env, ctx: MeshCtx) -> Value:
        fv = FuncVal(e, "<lambda>", env)
        self.register(fv)
        return fv

    def _if_exp(self, e: cst.IfExp, env: Env, ctx: MeshCtx) -> Value:
        test = truth(self.ev(e.test, env, ctx))
        if test is not None and self.assume_defaults:
            # shardcheck specs: the branch Python runs (``check`` still checks both: a
            # branch dead under today's constants is code a user may switch on; the
            # value is the branch Python runs, as an ``if`` statement's)
            return self.ev(e.body if test else e.orelse, env, ctx)
        if self.assume_defaults:
            present = self._spec_when_present(e, env, ctx)
            if present is not None:
                return present
        # both read (each has its sites), as an ``if`` statement's branches are: what
        # judges values proves nothing in the one Python does not run for these values
        # (``x if mesh is not None else None``, mesh None)
        self.dead_branches += test is False
        try:
            body = self.ev(e.body, env, ctx)
        finally:
            self.dead_branches -= test is False
        self.dead_branches += test is True
        try:
            orelse = self.ev(e.orelse, env, ctx)
        finally:
            self.dead_branches -= test is True
        if test is not None:  # the value Python's
            return body if test else orelse
        return join(body, orelse)

    def _named(self, e: cst.NamedExpr, env: Env, ctx: MeshCtx) -> Value:
        v = self.ev(e.value, env, ctx)
        self.assign(e.target, v, env, ctx)
        return v

    def _waited(self, e: Union[cst.Await, cst.Yield], env: Env, ctx: MeshCtx) -> Value:
        inner = getattr(e, "expression", None) or getattr(e, "value", None)
        if isinstance(inner, cst.From):  # yield from: each item of what it delegates to
            v = self.loop_item(self.ev(inner.item, env, ctx), ctx)
        elif isinstance(inner, cst.BaseExpression):
            v = self.ev(inner, env, ctx)
        else:
            v = Const(None)
        if isinstance(e, cst.Yield) and self.yields is not None:
            self.yields.append(v)  # the generator being run yields it
        return UNKNOWN

    def _formatted(self, e: cst.FormattedString, env: Env, ctx: MeshCtx) -> Value:
        """An f-string whose parts are all known: a str or int constant in each ``{}``
        with no conversion or format spec (``f"layer{i}"``), plain text otherwise."""
        out: Optional[List[str]] = [] if "r" not in e.prefix.lower() else None
        for part in e.parts:
            if isinstance(part, cst.FormattedStringExpression):
                v = self.ev(part.expression, env, ctx)
                if out is not None and part.conversion is None and part.format_spec is None \
                        and isinstance(v, Const) and type(v.value) in (str, int):
                    out.append(str(v.value))
                else:
                    out = None
            elif out is not None and isinstance(part, cst.FormattedStringText) \
                    and "\\" not in part.value:
                out.append(part.value.replace("{{", "{").replace("}}", "}"))
            else:
                out = None
        return Const("".join(out)) if out is not None else UNKNOWN

    def literal(self, e: cst.CSTNode, env: Env, ctx: MeshCtx) -> Value:
        try:
            if isinstance(e, cst.Integer):
                return Const(int(e.value.replace("_", ""), 0))
            if isinstance(e, cst.Float):
                return Const(float(e.value.replace("_", "")))
            if isinstance(e, cst.SimpleString):
                s = string_value(e)
                return Const(s) if isinstance(s, str) else UNKNOWN
        except Exception:  # a literal Python itself would reject, or one too large
            return UNKNOWN
        if isinstance(e, cst.ConcatenatedString):
            left, right = const_str(self.ev(e.left, env, ctx)), const_str(self.ev(e.right, env, ctx))
            return Const(left + right) if left is not None and right is not None else UNKNOWN
        if isinstance(e, cst.Ellipsis):
            return Const(Ellipsis)
        return UNKNOWN

    def _spec_when_present(self, e: cst.IfExp, env: Env, ctx: MeshCtx) -> Optional[Value]:
        """``shardcheck specs``: ``None if x is None else spec`` (or ``spec if x is not
        None else None``) is ``spec``, assuming ``x`` is there: the spec of a value that
        exists only sometimes (a quantized array's scale), which shards nothing when it is
        None. None for any other conditional expression."""
        tested = none_test(e.test)
        if tested is None:
            return None
        subject = dotted(tested[0])
        absent, present = (e.body, e.orelse) if tested[1] else (e.orelse, e.body)
        if not subject or not (isinstance(absent, cst.Name) and absent.value == "None"):
            return None
        v = self.ev(present, env, ctx)
        if not isinstance(v, (SpecVal, ShardingVal)):  # as both branches joined
            return join(Const(None), v) if absent is e.body else join(v, Const(None))
        self.assumed.append(f"`{subject}` is not None")
        return v

    def container(self, e: cst.CSTNode, env: Env, ctx: MeshCtx) -> Value:
        """Tuples, lists and sets (as tuples) and dicts with constant keys."""
        if isinstance(e, cst.Dict):
            pairs: List[Tuple[Any, Value]] = []
            known = True
            for el in e.elements:
                v = self.ev(el.value, env, ctx)
                if isinstance(el, cst.StarredDictElement) and isinstance(v, DictVal):
                    for k0, x in v.items:  # `{**base, "w": spec}`
                        merge_item(pairs, k0, x)
                    continue
                k = self.ev(el.key, env, ctx) if isinstance(el, cst.DictElement) else UNKNOWN
                if isinstance(k, Const):
                    merge_item(pairs, k.value, v)
                else:
                    known = False  # a computed key or a ** splice of an unknown mapping
            return DictVal(tuple(pairs)) if known else UNKNOWN
        items: List[Value] = []
        known = True
        for el in e.elements:  # type: ignore[attr-defined]  # Tuple, List and Set all have them
            v = self.ev(el.value, env, ctx)
            if isinstance(el, cst.StarredElement):
                if isinstance(v, TupleVal):
                    items.extend(v.items)
                else:
                    known = False  # splicing something of unknown length
                continue
            items.append(v)
        return TupleVal(tuple(items), is_list=isinstance(e, cst.List)) if known else UNKNOWN

    def comprehension(self, e: Any, env: Env, ctx: MeshCtx) -> Value:
        """A list comprehension or generator over few known items is unrolled; any other
        comprehension is walked once with unknown loop variables."""
        if isinstance(e, (cst.ListComp, cst.GeneratorExp, cst.DictComp)) \
                and e.for_in.inner_for_in is None and not e.for_in.ifs and not e.for_in.asynchronous:
            items = self.iter_items(self.ev(e.for_in.iter, env, ctx))
            rng = e.for_in.iter
            if (items is None and isinstance(rng, cst.Call) and isinstance(rng.func, cst.Name)
                    and rng.func.value == "range" and env.lookup("range") is UNKNOWN
                    and len(rng.args) == 1):
                n = const_int(self.ev(rng.args[0].value, env, ctx))
                items = [Const(i) for i in range(n)] if n is not None and 0 <= n <= _MAX_UNROLL else None
            if items is not None:
                return self._unrolled(e, items, env, ctx)
        cenv = Env(parent=env)
        f = e.for_in
        while f is not None:
            self.ev(f.iter, cenv, ctx)
            self.assign(f.target, UNKNOWN, cenv, ctx)
            f = f.inner_for_in
        if isinstance(e, cst.DictComp):
            self.ev(e.key, cenv, ctx)
            self.ev(e.value, cenv, ctx)
        else:
            self.ev(e.elt, cenv, ctx)
        return UNKNOWN

    def _unrolled(self, e: Any, items: List[Value], env: Env, ctx: MeshCtx) -> Value:
        """The comprehension ``e`` evaluated once per known item."""
        out: List[Value] = []
        pairs: List[Tuple[Any, Value]] = []
        for item in items:
            cenv = Env(parent=env)
            self.assign(e.for_in.target, item, cenv, ctx, record=False)
            if isinstance(e, cst.DictComp):
                key = self.ev(e.key, cenv, ctx)
                value = self.ev(e.value, cenv, ctx)
                if not isinstance(key, Const):
                    return UNKNOWN
                pairs.append((key.value, value))
            else:
                out.append(self.ev(e.elt, cenv, ctx))
        if isinstance(e, cst.DictComp):
            return DictVal(tuple(pairs))
        return TupleVal(tuple(out), is_list=isinstance(e, cst.ListComp))

    def comparison(self, e: cst.Comparison, env: Env, ctx: MeshCtx) -> Value:
        if len(e.comparisons) == 1 and not isinstance(
                e.comparisons[0].operator, (cst.In, cst.NotIn, cst.Is, cst.IsNot)):
            left = self.ev(e.left, env, ctx)
            right = self.ev(e.comparisons[0].comparator, env, ctx)
            if isinstance(left, ArrayVal) or isinstance(right, ArrayVal):
                return get_hook("compare")(self, left, right, e)
            if isinstance(left, Const) and isinstance(right, Const):
                return _compare(e.comparisons[0].operator, left.value, right.value)
            return UNKNOWN
        left = self.ev(e.left, env, ctx)
        rights = [self.ev(target.comparator, env, ctx) for target in e.comparisons]
        if len(rights) == 1 and isinstance(e.comparisons[0].operator, (cst.Is, cst.IsNot)):
            none = _is_none(left, rights[0])
            if none is not None:
                return Const(none if isinstance(e.comparisons[0].operator, cst.Is) else not none)
        return UNKNOWN

    def attribute(self, e: cst.Attribute, env: Env, ctx: MeshCtx) -> Value:
        base = self.ev(e.value, env, ctx)
        attr = e.attr.value
        if isinstance(base, QualName):
            name = self.profile.canonical(f"{base.name}.{attr}")
            get_hook("reference")(self, name, e, "reference")
            return QualName(name)
        if isinstance(base, ProjectModule):
            full = f"{base.name}.{attr}"
            if self.project.has_module(full):
                return ProjectModule(full)
            return self.project.imported(base.name, attr)
        if isinstance(base, InstanceVal):
            return read_attribute(self, base, attr, ctx)
        if isinstance(base, SuperVal):
            return super_attribute(base, attr)
        if isinstance(base, ClassVal):
            found = class_lookup(base, attr)
            if isinstance(found, FuncVal) and isinstance(found.node, cst.FunctionDef) and any(
                    dotted(d.decorator) == "classmethod" for d in found.node.decorators):
                return PartialVal(found, (base,), ())  # Cls.method(): cls is bound
            return found if found is not None else UNKNOWN
        if attr in ("value", "name") and isinstance(e.value, cst.Attribute):
            member = _enum_member(self.ev(e.value.value, env, ctx), e.value.attr.value)
            if attr == "name" and member:
                return Const(e.value.attr.value)  # `ParallelAxis.X.name`: "X", its own name
            if attr == "value" and member and isinstance(base, Const):
                return base  # `ResourceAxis.DATA.value`: the member's value, as declared
        handler = attribute_handler(base)
        return handler(self, base, attr, e, ctx) if handler is not None else UNKNOWN

    def subscript(self, e: cst.Subscript, env: Env, ctx: MeshCtx) -> Value:
        base = as_sequence(self.ev(e.value, env, ctx))  # spec[0], spec[:-1]: a tuple
        if isinstance(base, ArrayVal):
            return get_hook("index")(self, base, e, env, ctx)
        indexed = index_handler(base)
        if indexed is not None:
            library = indexed(self, base, e, env, ctx)
            if library is not None:
                return library
        if len(e.slice) != 1 or not isinstance(e.slice[0].slice, cst.Index):
            for s in e.slice:
                if isinstance(s.slice, cst.Index):
                    self.ev(s.slice.value, env, ctx)
                elif isinstance(s.slice, cst.Slice):
                    for part in (s.slice.lower, s.slice.upper, s.slice.step):
                        self.ev(part, env, ctx)
            if len(e.slice) == 1 and isinstance(base, TupleVal) and isinstance(e.slice[0].slice, cst.Slice):
                sl = e.slice[0].slice
                bounds = [self.ev(x, env, ctx) if x is not None else Const(None)
                          for x in (sl.lower, sl.upper, sl.step)]
                if all(isinstance(x, Const) and (x.value is None or const_int(x) is not None)
                       for x in bounds):
                    lo, hi, st = (x.value for x in bounds)  # type: ignore[attr-defined]  # all Const, checked above
                    return TupleVal(base.items[slice(lo, hi, st)])
            return UNKNOWN
        idx = self.ev(e.slice[0].slice.value, env, ctx)
        i = const_int(idx)
        if isinstance(base, TupleVal) and i is not None:
            return base.items[i] if -len(base.items) <= i < len(base.items) else UNKNOWN
        if isinstance(base, DictVal) and isinstance(idx, Const):
            return base.get(idx.value)
        return _spec_choice(base, idx, e)

    def binop(self, op: str, a: Value, b: Value, node: cst.CSTNode,
              ctx: MeshCtx) -> Value:
        if isinstance(a, Const) and isinstance(b, Const):
            return _fold(op, a.value, b.value)
        if isinstance(b, TupleVal) and op == "Multiply" and const_int(a) is not None:
            a, b = b, a  # 3 * (spec,)
        n = const_int(b)
        if isinstance(a, TupleVal) and op == "Multiply" and n is not None and 0 <= n < _MAX_REPEAT:
            return TupleVal(a.items * n, a.is_list)
        library = get_hook("value_binop")(op, a, b, node)  # `P(...) + (None,)`
        if library is not None:
            return library
        if isinstance(a, TupleVal) and isinstance(b, TupleVal) and op == "Add":
            return TupleVal(a.items + b.items, a.is_list)
        if isinstance(a, ArrayVal) or isinstance(b, ArrayVal):
            return get_hook("binop")(self, op, a, b, node, ctx)
        return UNKNOWN

    def loop_item(self, v: Value, ctx: MeshCtx) -> Value:
        """What each item of an iteration over ``v`` is, where every item is one value:
        a generator's call's, or an object's whose class writes ``__iter__``."""
        if isinstance(v, IteratorVal):
            return v.item
        if isinstance(v, InstanceVal) and v.made:
            return iterated(self, v, ctx)
        return UNKNOWN

    def iter_items(self, v: Value) -> Optional[List[Value]]:
        """The items a loop over ``v`` sees, when few and known."""
        v = as_sequence(v)  # a PartitionSpec iterates over its entries
        if isinstance(v, TupleVal) and len(v.items) <= _MAX_UNROLL:
            return list(v.items)
        if isinstance(v, DictVal) and 0 < len(v.items) <= _MAX_UNROLL:
            return [Const(k) for k, _ in v.items]  # an empty dict may be filled later
        if isinstance(v, InstanceVal) and v.made and named_tuple(v.cls):
            held = dict(v.given)  # a NamedTuple iterates over its fields, in order
            items = [held.get(name) for name, _ in v.cls.fields]
            return [x for x in items if x is not None] \
                if None not in items and len(items) <= _MAX_UNROLL else None
        if isinstance(v, ArrayVal) and v.shape and v.shape[0] is not None \
                and 0 < v.shape[0] <= _MAX_UNROLL and not v.numpy:
            out: List[Value] = []
            for i in range(v.shape[0]):
                try:
                    out.append(tr.indexing.index(v, [("int", i)]))
                except tr.Conflict:
                    return None
            return out
        return None


# ``ev``'s handlers of the other expression kinds, by exact node type (each calls the
# interpreter's method by name, so an override in a subclass is what runs)
_KINDS: Dict[type, Callable[[Any, Any, Env, MeshCtx], Value]] = {
    **dict.fromkeys((cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString,
                     cst.Ellipsis), lambda it, e, env, ctx: it.literal(e, env, ctx)),
    **dict.fromkeys((cst.Tuple, cst.List, cst.Set, cst.Dict),
                    lambda it, e, env, ctx: it.container(e, env, ctx)),
    cst.BinaryOperation: lambda it, e, env, ctx: it.binop(
        type(e.operator).__name__, it.ev(e.left, env, ctx), it.ev(e.right, env, ctx), e, ctx),
    cst.UnaryOperation: lambda it, e, env, ctx: it._unary(e, env, ctx),
    cst.Subscript: lambda it, e, env, ctx: it.subscript(e, env, ctx),
    cst.Lambda: lambda it, e, env, ctx: it._lambda(e, env, ctx),
    cst.IfExp: lambda it, e, env, ctx: it._if_exp(e, env, ctx),
    cst.NamedExpr: lambda it, e, env, ctx: it._named(e, env, ctx),
    **dict.fromkeys((cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp),
                    lambda it, e, env, ctx: it.comprehension(e, env, ctx)),
    cst.Comparison: lambda it, e, env, ctx: it.comparison(e, env, ctx),
    cst.BooleanOperation: lambda it, e, env, ctx: _boolean(
        isinstance(e.operator, cst.And), it.ev(e.left, env, ctx), it.ev(e.right, env, ctx)),
    **dict.fromkeys((cst.Await, cst.Yield), lambda it, e, env, ctx: it._waited(e, env, ctx)),
    cst.FormattedString: lambda it, e, env, ctx: it._formatted(e, env, ctx),
}


def _spec_choice(table: Value, key: Value, node: cst.CSTNode) -> Value:
    """A table of specs subscripted by a key nobody knows: any entry may be used."""
    entries = ([v for _, v in table.items] if isinstance(table, DictVal) else
               list(table.items) if isinstance(table, TupleVal) and const_int(key) is None
               else [])
    if len(entries) >= 2 and all(isinstance(v, SpecVal) for v in entries):
        return SpecChoice(tuple(entries), node)  # type: ignore[arg-type]  # all SpecVal
    return UNKNOWN


_COMPARE = {cst.Equal: lambda x, y: x == y, cst.NotEqual: lambda x, y: x != y,
            cst.LessThan: lambda x, y: x < y, cst.LessThanEqual: lambda x, y: x <= y,
            cst.GreaterThan: lambda x, y: x > y, cst.GreaterThanEqual: lambda x, y: x >= y}


def _compare(op: cst.BaseCompOp, x: Any, y: Any) -> Value:
    """A comparison of constants (numbers, strings, None, bools), folded."""
    fn = _COMPARE.get(type(op))
    plain = (int, float, str, bool, type(None))
    if fn is None or not isinstance(x, plain) or not isinstance(y, plain):
        return UNKNOWN
    try:
        return Const(bool(fn(x, y)))
    except TypeError:  # 1 < "a": Python raises; nothing is known
        return UNKNOWN


def _fold(op: str, x: Any, y: Any) -> Value:
    """Constant folding of the operators shapes and sizes are computed with."""
    try:
        if isinstance(x, (int, float)) and isinstance(y, (int, float)) and not isinstance(x, bool):
            if op == "Add":
                return Const(x + y)
            if op == "Subtract":
                return Const(x - y)
            if op == "Multiply":
                return Const(x * y)
            if op == "FloorDivide" and y:
                return Const(x // y)
            if op == "Divide" and y:
                return Const(x / y)
            if op == "Modulo" and y:
                return Const(x % y)
            if op == "Power" and isinstance(y, int) and 0 <= y < _MAX_REPEAT:
                return Const(x ** y)
        if isinstance(x, str) and isinstance(y, str) and op == "Add":
            return Const(x + y)
    except (ArithmeticError, ValueError):
        return UNKNOWN
    return UNKNOWN


# Values that are never None (what ``x is None`` tests of them is known)
_NOT_NONE = (ArrayVal, DictVal, TupleVal, SpecVal, FuncVal, ClassVal, InstanceVal, PartialVal)


_ENUMS = ("enum.Enum", "enum.StrEnum", "enum.IntEnum")


def _enum_member(cls: Value, name: str) -> bool:
    """Whether ``cls.name`` is a member of a source enum: a name its body binds to a value
    (not a method or a nested class), as Python's ``Enum`` makes a member of it."""
    if not _is_enum(cls) or name.startswith("_"):
        return False
    found = class_lookup(cls, name)  # type: ignore[arg-type]  # a ClassVal: _is_enum holds
    return found is not None and not isinstance(found, (FuncVal, ClassVal))


def _is_enum(v: Value) -> bool:
    """A source class deriving from ``enum.Enum`` (or ``StrEnum``, ``IntEnum``), directly
    or through source classes."""
    return isinstance(v, ClassVal) and any(
        (isinstance(b, QualName) and b.name in _ENUMS) or _is_enum(b) for b in v.bases)


def _is_none(left: Value, right: Value) -> Optional[bool]:
    """Whether ``left is right`` holds where one side is ``None``; None when unknown."""
    if isinstance(left, Const) and left.value is None:
        left, right = right, left
    if not (isinstance(right, Const) and right.value is None):
        return None
    if isinstance(left, Const):
        return left.value is None
    return False if isinstance(left, _NOT_NONE) else None


def _boolean(is_and: bool, left: Value, right: Value) -> Value:
    """``left and right`` / ``left or right`` as Python gives it: the operand Python
    returns where ``left``'s truth is known, else either."""
    t = truth(left)
    if t is None:
        return join(left, right)
    return right if t == is_and else left


def condition_truth(it: Any, test: cst.BaseExpression, env: Any, ctx: Any) -> Optional[bool]:
    """Whether the test of an ``if`` holds, where its value says: ``a and b`` is false
    where either operand is (Python returns the first false one), ``a or b`` true where
    either is, ``not a`` the opposite of ``a``; else ``truth`` of the value."""
    if isinstance(test, cst.BooleanOperation):
        left = condition_truth(it, test.left, env, ctx)
        right = condition_truth(it, test.right, env, ctx)
        if isinstance(test.operator, cst.And):
            return False if False in (left, right) else True if left and right else None
        return True if True in (left, right) else False if left is right is False else None
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = condition_truth(it, test.expression, env, ctx)
        return None if inner is None else not inner
    return truth(it.ev(test, env, ctx))


def truth(v: Value) -> Optional[bool]:
    """What ``bool(v)`` is, where the value says: a constant, a tuple or dict the source
    wrote out, a function or class, an instance of a source class that defines no
    ``__bool__``/``__len__`` (nor inherits from a class not in view); else None."""
    if isinstance(v, Const):
        return bool(v.value) if not isinstance(v.value, type(Ellipsis)) else True
    if isinstance(v, (TupleVal, DictVal)):
        return bool(v.items)
    if isinstance(v, (FuncVal, ClassVal)):
        return True
    if isinstance(v, InstanceVal):
        return True if _plain_truth(v.cls) else None
    return None


def _plain_truth(cls: ClassVal) -> bool:
    """Whether instances of ``cls`` are true as every ``object`` is."""
    for s in cls.node.body.body:  # type: ignore[attr-defined]  # a ClassDef
        if isinstance(s, cst.FunctionDef) and s.name.value in ("__bool__", "__len__"):
            return False
    return not cls.opaque and all(isinstance(b, ClassVal) and _plain_truth(b) for b in cls.bases)

