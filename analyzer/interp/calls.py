"""Calls: Python functions are followed (small helpers evaluated for their return
value, every function analyzed under the contexts it is called in); JAX APIs and JAX
values (jitted functions, shard_maps, grads) get their meaning from ``analyzer.jaxapi``."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Dict, List, Optional, Tuple

import libcst as cst

from ..events import UNKNOWN_CTX, CallFact, MeshCtx
from ..provenance import built_by_helper
from ..api import ApiCall, as_sequence, callee_handler, get_hook, handler_for, method_handler
from ..syntax import dotted, subtree
from ..values import (SPREAD, UNKNOWN, ArrayVal, ClassVal, Const, DictVal, FuncVal, InstanceVal, JitVal,
                      IteratorVal, MeshVal, PartialVal, QualName, ShardMapVal, TupleVal,
                      MUTATING_METHODS, Value, const_int, join, merge_item)
from .base import InterpreterBase
from .rule_trees import RULE_MATCHERS, rule_tree, rules_parameter
from .objects import (CLASS_KEY, CONFIG_DICTS, CONFIG_NAMES, FIELD_FUNCTIONS, cached_fills_none,
                      construct, field_default, python_config_instance,
                      yaml_config_instance)
from .objects import _method as class_method
from .objects import all_fields, default_instance
from .objects import lookup as class_lookup
from .instances import SELF_KEY, forget_writes, read_attribute, run_method, stores_on_self
from .instances import construct as construct_instance
from .set_up import check_self
from .state import Arg, CallArgs, Env, GradVal, SuperVal

_MAX_HELPER_DEPTH = 3
_MAX_HELPER_STATEMENTS = 40
_CALLABLE = (FuncVal, JitVal, PartialVal, ShardMapVal)


class CallsMixin(InterpreterBase):
    """The call half of the interpreter (mixed into ``Interpreter``)."""

    def call(self, e: cst.Call, env: Env, ctx: MeshCtx) -> Value:
        func = e.func
        if isinstance(func, cst.Attribute):  # a method, or a function of a module
            base = self.ev(func.value, env, ctx)
            meth = func.attr.value
            args = self.eval_args(e, env, ctx)
            if meth in MUTATING_METHODS and isinstance(func.value, cst.Name) and \
                    isinstance(base, (TupleVal, DictVal)) and func.value.value in env.vars:
                # ``axes.append("data")``: the list with the item added; any other change
                # leaves the entries held for it no longer all it holds (the call itself
                # still sees them). On a path that may not run (a branch, a loop not
                # unrolled) the join with the list before is unknown.
                env.vars[func.value.value] = self._grown(base, meth, args)
            if meth == "param" and len(args) >= 2:  # a Linen module's parameter
                made = get_hook("module_param")(self, e, base, args, ctx)
                if made is not None:
                    return made
            if isinstance(base, QualName):
                name = self.profile.canonical(f"{base.name}.{meth}")
                get_hook("reference")(self, name, func, "call")
                return self.call_value(QualName(name), e, args, env, ctx)
            if isinstance(base, DictVal) and meth in ("items", "keys", "values") and not e.args:
                return _dict_view(base, meth)
            if isinstance(base, DictVal) and meth == "get":
                return _dict_get(base, args)
            handler = method_handler(base)
            if handler is not None:
                out = handler(self, base, ApiCall(meth, e, CallArgs(args), env, ctx))
                if out is not None:
                    return out
            callee = UNKNOWN if isinstance(base, MeshVal) else self.attribute(func, env, ctx)
            out = self.call_value(callee, e, args, env, ctx)
            if not self.assume_defaults:
                self._after_call(e, callee, args, env, ctx)
            return out
        callee = self.ev(func, env, ctx)
        if callee is UNKNOWN and isinstance(func, cst.Name) and func.value == "super" \
                and not e.args and not self.assume_defaults:
            return self._super(env)
        if callee is UNKNOWN and isinstance(func, cst.Name) and func.value in _BUILTINS:
            args = self.eval_args(e, env, ctx)  # the builtin, not shadowed
            if func.value == "getattr":
                return self._getattr(args, ctx)
            if func.value == "dict":
                return _dict(args)
            if func.value == "sorted":
                return self._sorted(CallArgs(args), ctx)
            if func.value in _ITERATORS:
                return _iterator(func.value, CallArgs(args), self.iter_items)
            return _sequence(func.value, CallArgs(args))
        if not self.assume_defaults and not isinstance(callee, QualName):
            args = self.eval_args(e, env, ctx)
            out = self.call_value(callee, e, args, env, ctx)
            self._after_call(e, callee, args, env, ctx)
            return out
        return self.call_value(callee, e, self.eval_args(e, env, ctx), env, ctx)

    def _grown(self, base: Value, meth: str, args: List[Arg]) -> Value:
        """A local list after ``append(x)`` or ``extend(items)`` of items the analysis
        knows one by one; unknown after any other change."""
        if not (isinstance(base, TupleVal) and base.is_list and len(args) == 1
                and args[0].keyword is None and not args[0].star):
            return UNKNOWN
        if meth == "append":
            return TupleVal(base.items + (args[0].value,), True)
        added = self.iter_items(args[0].value) if meth == "extend" else None
        return TupleVal(base.items + tuple(added), True) if added is not None else UNKNOWN

    def _sorted(self, call: CallArgs, ctx: MeshCtx) -> Value:
        """``sorted(xs, key=f, reverse=b)`` of items the analysis knows one by one, whose
        keys (the items, or what ``f`` returns for each) are all constants of one kind:
        the list Python makes (a stable sort, as Python's); anything else is unknown."""
        if call.starred or len(call.pos) != 1 or set(call.kw) - {"key", "reverse"}:
            return UNKNOWN
        items = self.iter_items(call.pos[0])
        if items is None:
            return UNKNOWN
        reverse = call.kw["reverse"].value if "reverse" in call.kw else Const(False)
        key = call.kw["key"].value if "key" in call.kw else None
        if not (isinstance(reverse, Const) and isinstance(reverse.value, bool)):
            return UNKNOWN
        keys: List[Value] = list(items)
        if key is not None and not (isinstance(key, Const) and key.value is None):
            if not isinstance(key, FuncVal):
                return UNKNOWN
            keys = [self.eval_return(key, (x,), {}, ctx) for x in items]
        raw: List[Any] = [k.value if isinstance(k, Const) else None for k in keys]
        kinds = {type(v) for v in raw}
        if not items or not (kinds <= {int} or kinds <= {float, int} or kinds == {str}):
            return UNKNOWN if items else TupleVal((), True)
        order = sorted(range(len(items)), key=lambda i: raw[i], reverse=reverse.value)
        return TupleVal(tuple(items[i] for i in order), True)

    def _getattr(self, args: List[Arg], ctx: MeshCtx) -> Value:
        """``getattr(obj, "name"[, default])`` with a constant name: ``obj.name`` of an
        object or class of the source (``getattr(rules, axis)`` over a rule dataclass's
        fields); anything else, or a value not known (which a default might stand for),
        is unknown."""
        call = CallArgs(args)
        if call.starred or call.kw or len(call.pos) not in (2, 3):
            return UNKNOWN
        base, name = call.pos[0], call.pos[1]
        if not (isinstance(name, Const) and isinstance(name.value, str)):
            return UNKNOWN
        if isinstance(base, InstanceVal):
            return read_attribute(self, base, name.value, ctx)
        if isinstance(base, ClassVal):
            found = class_lookup(base, name.value)
            return UNKNOWN if found is None or isinstance(found, FuncVal) else found
        return UNKNOWN

    def eval_args(self, e: cst.Call, env: Env, ctx: MeshCtx) -> List[Arg]:
        out = []
        for a in e.args:
            kw = a.keyword.value if a.keyword is not None else None
            out.append(Arg(kw, a.star, self.ev(a.value, env, ctx), a.value))
        return out

    def call_api(self, name: str, e: cst.CSTNode, args: List[Arg], env: Env,
                 ctx: MeshCtx) -> Value:
        """A call of the importable function ``name`` (canonical), as jaxapi models it."""
        call = ApiCall(name, e, CallArgs(args), env, ctx)
        handler = handler_for(name)
        if handler is None:
            handler = handler_for("")  # the fallback: what any unmodelled call may do
        assert handler is not None, "jaxapi registers a fallback handler"
        return handler(self, call)

    def call_value(self, callee: Value, e: cst.Call, args: List[Arg], env: Env,
                   ctx: MeshCtx) -> Value:
        """What calling ``callee`` at ``e`` gives; the function it calls (directly, or as
        ``jit``, ``shard_map`` and ``partial`` call it) records ``e`` as a call site."""
        outer, self.calling = self.calling, e
        try:
            return self._call_value(callee, e, args, env, ctx)
        finally:
            self.calling = outer

    def _call_value(self, callee: Value, e: cst.Call, args: List[Arg], env: Env,
                    ctx: MeshCtx) -> Value:
        if self.logical_config is not None and self.logical_config.wrappers:
            # a helper the config declares a wrapper of a library API
            wrapped = get_hook("wrapped_call")(self, callee, e, args, env, ctx)
            if wrapped is not None:
                return wrapped
        replaced = self._replace(callee, args, ctx)
        if replaced is not None:
            return replaced
        if isinstance(callee, QualName):
            if callee.name in FIELD_FUNCTIONS:  # a dataclass field's declared default
                return field_default(self, CallArgs(args), ctx,
                                     None if self.assume_defaults else construct_instance)
            if self.assume_defaults and callee.name.rsplit(".", 1)[-1] in RULE_MATCHERS:
                table = CallArgs(args).get(0, "rules")  # a library's copy of the idiom
                if isinstance(table, TupleVal):
                    return rule_tree(table)
            return self.call_api(self.profile.canonical(callee.name), e, args, env, ctx)
        call = CallArgs(args)
        pos = tuple(call.pos) + ((SPREAD,) if call.starred else ())
        kws = call.kw_values()
        if isinstance(callee, FuncVal):
            self.pass_functions(args, ctx)
            get_hook("arguments")(self, callee, args, ctx)
            self.note_call(callee, ctx, pos, call.known_keywords())
            if self.assume_defaults:  # shardcheck specs: a regex rule table applied to a tree
                k = rules_parameter(callee.node, self.rule_params)
                if k is not None and k < len(pos):
                    return rule_tree(pos[k])
            return built_by_helper(self.sites_via(callee, e, pos, kws, ctx), e, callee.node)
        if isinstance(callee, PartialVal):
            if isinstance(callee.func, QualName):
                merged = [Arg(None, "", a, e) for a in callee.args] + list(args)
                merged += [Arg(k, "", v, e) for k, v in callee.kwargs]
                return self.call_api(self.profile.canonical(callee.func.name), e, merged, env, ctx)
            self.note_call(callee, ctx, pos, call.known_keywords())
            inner = callee.func.func if isinstance(callee.func, JitVal) else callee.func
            if isinstance(inner, FuncVal):
                kws2 = dict(callee.kwargs)
                kws2.update(kws)
                return self.sites_via(inner, e, callee.args + pos, kws2, ctx)
            return UNKNOWN
        if isinstance(callee, ClassVal) and not self.assume_defaults:
            self.pass_functions(args, ctx)
            if call.starred:  # its arguments unknown: what its set-up stores is unknown
                return InstanceVal(callee, made=True)
            return construct_instance(self, callee, pos, kws, ctx)
        if isinstance(callee, InstanceVal) and not self.assume_defaults:  # obj(x): __call__
            bound = read_attribute(self, callee, "__call__", ctx) \
                if class_method(callee.cls, "__call__") is not None else UNKNOWN
            if isinstance(bound, PartialVal):
                return self._call_value(bound, e, args, env, ctx)
            self.pass_functions(args, ctx)
            return UNKNOWN
        if isinstance(callee, ClassVal):  # shardcheck specs: a config object made here
            self.pass_functions(args, ctx)
            made = construct(callee, pos, kws) if not call.starred else InstanceVal(callee)
            if self.assume_defaults and not call.starred:
                self.constructor_sites(callee, made, e, pos, kws, ctx)
            return made
        handler = callee_handler(callee)
        if handler is not None:
            return handler(self, callee, ApiCall("", e, call, env, ctx))
        self.pass_functions(args, ctx)
        return UNKNOWN

    def _super(self, env: Env) -> Value:
        """``super()`` in a method: its class's bases' methods, bound to its ``self``."""
        me = env.lookup(SELF_KEY)
        scope: Optional[Env] = env
        while scope is not None and CLASS_KEY not in scope.vars:
            scope = scope.parent
        if not isinstance(me, Const) or scope is None:
            return UNKNOWN
        inst = env.lookup(me.value)
        owner = scope.vars[CLASS_KEY]
        if not isinstance(inst, InstanceVal) or not isinstance(owner, ClassVal):
            return UNKNOWN
        return SuperVal(owner, inst)

    def _after_call(self, e: cst.Call, callee: Value, args: List[Arg], env: Env,
                    ctx: MeshCtx) -> None:
        """``check``: an instance the code holds by name, after a call it was given to.
        A method that assigns attributes of its ``self`` (``self.setup_mesh()``,
        ``super().__init__(config)``, ``Base.__init__(self, config)``) is run, and the
        name rebound to the instance it leaves; given to any other call, what the code
        wrote on the instance may have been replaced there (``InstanceVal.written``)."""
        fn, inst, receiver, rest = None, None, None, args
        if isinstance(callee, PartialVal) and isinstance(callee.func, FuncVal) \
                and callee.args and isinstance(callee.args[0], InstanceVal):
            fn, inst = callee.func, callee.args[0]
            receiver = self._receiver_name(e, env)
        elif isinstance(callee, FuncVal) and args and not args[0].keyword and not args[0].star \
                and isinstance(args[0].value, InstanceVal) and isinstance(args[0].node, cst.Name):
            fn, inst, receiver, rest = callee, args[0].value, args[0].node.value, args[1:]
        if fn is not None and inst is not None and receiver is not None \
                and isinstance(fn.node, cst.FunctionDef) and stores_on_self(self, fn.node):
            owner = fn.scope.vars.get(CLASS_KEY) if isinstance(fn.scope, Env) else None
            after = None
            call = CallArgs(list(rest))
            if isinstance(owner, ClassVal) and not call.starred:
                _, after = run_method(self, fn.node, owner, inst, tuple(call.pos),
                                      call.kw_values(), ctx)
            env.rebind(receiver, after if after is not None
                       else InstanceVal(inst.cls, made=inst.made))  # its stores unknown
        elif receiver is not None and isinstance(inst, InstanceVal):
            env.rebind(receiver, forget_writes(inst))
        for a in rest:
            if isinstance(a.node, cst.Name) and isinstance(a.value, InstanceVal) and a.value.written:
                env.rebind(a.node.value, forget_writes(a.value))

    @staticmethod
    def _receiver_name(e: cst.Call, env: Env) -> Optional[str]:
        """The name a method call's object is held by: ``obj`` in ``obj.m()``, a method's
        ``self`` in ``super().m()``; None for any other expression."""
        func = e.func
        if not isinstance(func, cst.Attribute):
            return None
        if isinstance(func.value, cst.Name):
            return func.value.value
        if isinstance(func.value, cst.Call) and dotted(func.value.func) == "super":
            me = env.lookup(SELF_KEY)
            return me.value if isinstance(me, Const) and isinstance(me.value, str) else None
        return None

    def _replace(self, callee: Value, args: List[Arg], ctx: MeshCtx) -> Optional[Value]:
        """``dataclasses.replace(obj, **changes)`` (and ``obj.replace(...)`` of a
        ``flax.struct`` dataclass): a new instance, its constructor run on the fields
        ``obj`` holds with the changes; None for any other call."""
        if self.assume_defaults:
            return None
        if isinstance(callee, PartialVal) and callee.func == QualName("dataclasses.replace"):
            args = [Arg(None, "", a, None) for a in callee.args] + list(args)
        elif callee != QualName("dataclasses.replace"):
            return None
        call = CallArgs(args)
        if call.starred or len(call.pos) != 1 or not isinstance(call.pos[0], InstanceVal):
            return None
        obj = call.pos[0]
        if not obj.cls.dataclass:
            return UNKNOWN
        fields = {f: read_attribute(self, obj, f, ctx) for f in all_fields(obj.cls)}
        fields.update(call.kw_values())
        return construct_instance(self, obj.cls, (), fields, ctx)

    def pass_functions(self, args: List[Arg], ctx: MeshCtx,
                       bound: Optional[frozenset] = None, opaque: bool = True) -> None:
        """A function passed to a call may run in this context.

        ``opaque``: the callee is not a JAX transformation the analyzer knows, so it may
        bind axis names itself (pallas_call, core_map, a user's mapper): the function's
        bound axes become unknown. ``bound``: axis names the callee binds (vmap's).
        """
        for a in args:
            v = a.value
            if isinstance(v, GradVal):
                v = v.func
            if not isinstance(v, _CALLABLE):
                continue
            if opaque:
                # it may set a mesh (a test's with_explicit_mesh) or bind axes (pallas_call)
                c = UNKNOWN_CTX
            elif bound is not None:
                c = MeshCtx(ctx.known, ctx.mesh,
                            None if ctx.bound_axes is None else ctx.bound_axes | bound,
                            ctx.manual_axes, ctx.shard_map)
            else:
                c = ctx.traced()  # scan, cond, checkpoint, ... trace the function
            if isinstance(v, ShardMapVal):
                get_hook("passed")(self, v, a.node, ctx)
            else:
                self.note_call(v, c, ())

    def constructor_sites(self, cls: ClassVal, made: Value, e: cst.Call, args: tuple,
                          kwargs: dict, ctx: MeshCtx) -> None:
        """``Block(..., sharding=...)`` (the map only): the sites the class's ``__init__``
        reaches for these arguments (an NNX module's parameters, declared with the
        sharding its caller passes) are listed at the call, via the class. A class that
        writes no ``__init__`` (a dataclass, a Linen module) has none to run."""
        init = class_method(cls, "__init__")
        if init is None:
            return
        fdef, owner = init
        self.sites_via(FuncVal(fdef, cls.name, owner.env), e, (made,) + args, kwargs, ctx)

    def sites_via(self, fv: FuncVal, e: cst.Call, args: tuple, kwargs: dict,
                  ctx: MeshCtx) -> Value:
        """``eval_return`` of a call written in the body being recorded; the sharding
        sites the helper reaches for these arguments are recorded at the call, ``via`` the
        helper (``shardcheck specs``: what a helper's parameter was at each call), and so
        are the facts it proves (``build`` keeps those its own analysis does not prove)."""
        if self.cur is None or self.site_sink is not None:
            return self.eval_return(fv, args, kwargs, ctx)
        self.site_sink, self.site_facts, self.site_spec_uses = [], [], []
        try:
            return self.eval_return(fv, args, kwargs, ctx)
        finally:
            sink, self.site_sink = self.site_sink, None
            for s in sink:
                self.record("sites", replace(s, node=e, via=fv.name, origin=s.origin or s.node))
            for f in self.site_facts:  # what these arguments make the helper prove
                self.record("call_facts", CallFact(f.fact, f.node, e))
            self._spec_uses_of_call(fv, e)
            self.site_facts, self.site_spec_uses = [], []

    def _spec_uses_of_call(self, fv: FuncVal, e: cst.Call) -> None:
        """The specs a helper applied for one call: one the helper builds is attributed to
        the call (noting where the helper builds it), one the call passes keeps its own
        node; each spec once, as rules report a spec once."""
        if not self.site_spec_uses:
            return
        inside = _descendants(fv.node, self.helper_nodes)
        moved: Dict[int, Any] = {}
        for u in self.site_spec_uses:
            origin = u.spec.node
            if origin is None:
                continue
            spec = u.spec
            if id(origin) in inside:
                if id(spec) not in moved:
                    moved[id(spec)] = replace(spec, node=e, built_at=spec.built_at or origin)
                spec = moved[id(spec)]
            self.record("call_spec_uses", (replace(u, spec=spec, node=e), origin))

    def eval_return(self, fv: FuncVal, args: tuple, kwargs: dict,
                    ctx: MeshCtx, record: bool = False) -> Value:
        """The value a small helper returns for these arguments (no events recorded,
        unless ``record``: the helper then runs as if written at the call, e.g. the
        function ``jax.tree.map`` applies to each leaf)."""
        node = fv.node
        if self.helper_depth >= _MAX_HELPER_DEPTH:
            return UNKNOWN
        if isinstance(node, cst.FunctionDef):
            body = node.body.body
            if len(body) > _MAX_HELPER_STATEMENTS or any(type(s) in _LOOPS for s in body):
                return UNKNOWN
        key = (node, tuple(id(a) for a in args), tuple(sorted(kwargs)))
        if not args and not kwargs and key in self.ret_cache and not record:
            return self.ret_cache[key]
        saved = (self.cur, self.returns, self.caller, self.yields)
        returns: list = []
        self.cur, self.returns = (self.cur if record else None), returns
        # a generator function's call gives an iterator of what its body yields: one
        # whose run yielded is one (a yield never reached reads as a plain function's)
        self.yields = [] if isinstance(node, cst.FunctionDef) else None
        self.helper_depth += 1
        try:
            env = Env(parent=fv.scope if isinstance(fv.scope, Env) else self.env)
            self.bind_params(node, env, ctx, args, kwargs)
            if isinstance(node, cst.Lambda):
                result = self.ev(node.body, env, ctx)
            elif isinstance(node, cst.FunctionDef):
                self.exec_block(node.body, env, ctx)
                yielded = self.yields or []
                rets = [v for _, v in returns] if not yielded else list(yielded)
                result = rets[0] if rets else Const(None)
                for r in rets[1:]:
                    result = join(result, r)
                if yielded:
                    result = IteratorVal(result)
        except RecursionError:
            result = UNKNOWN
        finally:
            self.helper_depth -= 1
            self.cur, self.returns, self.caller, self.yields = saved
        if not args and not kwargs:
            self.ret_cache[key] = result
        return result

    def bind_params(self, node: cst.CSTNode, env: Env, ctx: MeshCtx,
                    args: Optional[tuple] = None, kwargs: Optional[dict] = None) -> None:
        """Bind a function's parameters in ``env``: the call's arguments where known,
        defaults (when some call is known), declared sharding types, else UNKNOWN."""
        params = node.params  # type: ignore[attr-defined]  # FunctionDef and Lambda
        positional = list(params.posonly_params) + list(params.params)
        bindings: Dict[str, int] = {}
        for i, p in enumerate(positional):
            v: Value = UNKNOWN
            if args is not None and i < len(args):
                v = args[i]
                if isinstance(v, Arg):
                    v = v.value
            elif kwargs and p.name.value in kwargs:
                v = kwargs[p.name.value]
            elif p.default is not None and args is not None:
                v = self.ev(p.default, env, ctx)
            if self.assume_defaults and v is UNKNOWN and args is None:
                v = self._assumed_default(node, p, env, ctx)
            if self.assume_defaults and (v is UNKNOWN or _none_config(p, v)):
                v = self._assumed_instance(node, i, p, env, ctx)
            elif i == 0 and args is None and v is UNKNOWN and not self.assume_defaults:
                v = check_self(self, node, env)
            if p.annotation is not None:
                v = get_hook("parameter")(self, p.annotation.annotation, v, bindings, env, ctx)
            env.vars[p.name.value] = v
        for p in params.kwonly_params:
            v = UNKNOWN
            if kwargs and p.name.value in kwargs:
                v = kwargs[p.name.value]
            elif p.default is not None and args is not None:
                v = self.ev(p.default, env, ctx)
            elif self.assume_defaults and args is None:
                v = self._assumed_default(node, p, env, ctx)
            if self.assume_defaults and v is UNKNOWN:  # annotated with a source class
                v = self._assumed_instance(node, -1, p, env, ctx)
            env.vars[p.name.value] = v
        for p in (params.star_arg, params.star_kwarg):
            if isinstance(p, cst.Param):
                env.vars[p.name.value] = UNKNOWN
        if positional and env.parent is not None and CLASS_KEY in env.parent.vars:
            env.vars[SELF_KEY] = Const(positional[0].name.value)  # a method: super()'s self
        if isinstance(params.star_arg, cst.Param) and args is not None:
            rest = [a.value if isinstance(a, Arg) else a for a in args[len(positional):]]
            if not any(r is SPREAD for r in rest):  # f(*xs): its length is unknown
                env.vars[params.star_arg.name.value] = TupleVal(tuple(rest))

    def _assumed_default(self, node: cst.CSTNode, p: cst.Param, env: Env,
                         ctx: MeshCtx) -> Value:
        """``shardcheck specs``, with no call in view: a parameter's declared default other
        than None (``spec=P("data")``, ``shd_config=ShardingConfig.default()``), recorded
        as assumed (``f.spec``). None stays a caller's to replace (unknown here), unless
        the body itself fills it in (``if spec is None: spec = ...``, ``fills_none``)."""
        if p.default is None:
            return UNKNOWN
        v = self.ev(p.default, env.parent or env, ctx)
        if v is UNKNOWN or (isinstance(v, Const) and v.value is None and not (
                isinstance(node, cst.FunctionDef)
                and cached_fills_none(self, node, p.name.value) is not None)):
            return UNKNOWN
        name = node.name.value if isinstance(node, cst.FunctionDef) else "lambda"
        self.assumed.append(f"{name}.{p.name.value}")
        return v

    def _assumed_instance(self, node: cst.CSTNode, i: int, p: cst.Param, env: Env,
                          ctx: MeshCtx) -> Value:
        """``shardcheck specs``: a method's ``self``, or a parameter annotated with a source
        class, as an instance no call in view made (its fields read as their defaults)."""
        if i == 0 and isinstance(node, cst.FunctionDef) and env.parent is not None:
            cls = env.parent.vars.get(CLASS_KEY)
            if isinstance(cls, ClassVal) and not any(
                    dotted(d.decorator) in ("staticmethod", "classmethod")
                    for d in node.decorators):
                return InstanceVal(cls, assumed=True)
        if p.annotation is not None:
            ann = _optional_of(p.annotation.annotation)
            if isinstance(ann, (cst.Name, cst.Attribute)):
                cls = self.ev(ann, env, ctx)
                if isinstance(cls, ClassVal) and not (cls.opaque and p.name.value in CONFIG_NAMES):
                    return default_instance(self, cls, ctx) or InstanceVal(cls, assumed=True)
                if isinstance(cls, QualName) and cls.name in CONFIG_DICTS:
                    return self._python_config() or UNKNOWN
        if p.name.value in CONFIG_NAMES:  # `def train(config, ...)`: the run's YAML config
            return yaml_config_instance(self.logical_config) or UNKNOWN
        return UNKNOWN

    def _python_config(self) -> Optional[InstanceVal]:
        """The ml_collections config of this module's script directory, as its
        ``get_config()`` makes it (None when there is none)."""
        if self.python_config is None:
            return None
        return python_config_instance(*self.python_config)


def _optional_of(ann: cst.BaseExpression) -> cst.BaseExpression:
    """``A`` of an annotation ``A | None``, ``None | A`` or ``Optional[A]``; else ``ann``."""
    if isinstance(ann, cst.BinaryOperation) and isinstance(ann.operator, cst.BitOr):
        for a, b in ((ann.left, ann.right), (ann.right, ann.left)):
            if isinstance(b, cst.Name) and b.value == "None":
                return a
    if isinstance(ann, cst.Subscript) and dotted(ann.value) in ("Optional", "typing.Optional") \
            and len(ann.slice) == 1 and isinstance(ann.slice[0].slice, cst.Index):
        return ann.slice[0].slice.value
    return ann


def _none_config(p: cst.Param, v: Value) -> bool:
    """A ``config`` parameter a call binds to None: a module's placeholder
    (``run(pyconfig.config)``, where ``config = None`` until the loader runs), since a
    config read by attribute is never None when the code runs."""
    return p.name.value in CONFIG_NAMES and isinstance(v, Const) and v.value is None


_ITERATORS = ("enumerate", "zip", "range", "len", "reversed")
_BUILTINS = ("getattr", "tuple", "list", "dict", "sorted") + _ITERATORS
_MAX_RANGE = 64  # range(n) with more items is not written out (unknown)
# a helper with one of these is not evaluated for its value (exact types: isinstance goes
# through ABCMeta); a ``for`` loop is, as a body runs it: once per item over a few known
# items (``for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:]))`` filling a
# params dict), else to the join of its iterations
_LOOPS = frozenset({cst.While, cst.Try})


def _sequence(kind: str, call: CallArgs) -> Value:
    """``tuple(xs)``/``list(xs)`` of a sequence the source wrote out (or a spec: its
    entries); anything else is unknown."""
    if call.starred or call.kw or len(call.pos) != 1:
        return UNKNOWN
    v = as_sequence(call.pos[0])
    return TupleVal(v.items, kind == "list") if isinstance(v, TupleVal) else UNKNOWN


def _iterator(kind: str, call: CallArgs, items_of: Any) -> Value:
    """``enumerate(xs)``, ``zip(xs, ys)``, ``reversed(xs)``, ``range(...)`` and ``len(xs)``
    of sequences the analysis knows item by item, as the tuples they yield (a loop over
    one runs per item, up to its bound); anything else is unknown."""
    if call.starred or (call.kw and not (kind == "enumerate" and set(call.kw) == {"start"})):
        return UNKNOWN
    if kind == "range":
        bounds = [const_int(p) for p in call.pos]
        if not 1 <= len(bounds) <= 3 or any(b is None for b in bounds) \
                or (len(bounds) == 3 and bounds[2] == 0):
            return UNKNOWN  # range(a, b, 0) raises ValueError when it runs
        r = range(*bounds)  # type: ignore[arg-type]  # None excluded above
        return TupleVal(tuple(Const(i) for i in r)) if len(r) <= _MAX_RANGE else UNKNOWN
    if kind == "len" and len(call.pos) == 1:
        x = call.pos[0]
        if isinstance(x, (TupleVal, DictVal)):
            return Const(len(x.items))
        if isinstance(x, ArrayVal) and x.shape and x.shape[0] is not None:
            return Const(x.shape[0])
        return UNKNOWN
    if kind == "enumerate" and len(call.pos) == 1 and isinstance(call.pos[0], IteratorVal):
        # over a generator's items, each one value: (a count not followed, the item)
        return IteratorVal(TupleVal((UNKNOWN, call.pos[0].item)))
    seqs = [items_of(p) for p in call.pos]
    if not seqs or any(q is None for q in seqs):
        return UNKNOWN
    if kind == "len":
        return Const(len(seqs[0])) if len(seqs) == 1 else UNKNOWN
    if kind == "reversed":
        return TupleVal(tuple(reversed(seqs[0]))) if len(seqs) == 1 else UNKNOWN
    if kind == "enumerate":
        start = const_int(call.kw["start"].value) if "start" in call.kw else 0
        if len(seqs) != 1 or start is None:
            return UNKNOWN
        return TupleVal(tuple(TupleVal((Const(start + i), x)) for i, x in enumerate(seqs[0])))
    return TupleVal(tuple(TupleVal(tuple(group)) for group in zip(*seqs)))


def _dict(args: List[Arg]) -> Value:
    """``dict(k=v, ...)``, ``dict(mapping, k=v)``, ``dict(**mapping)`` and ``dict(pairs)``
    where the mapping (or the pairs, with constant keys) is written out in the source;
    anything else is unknown."""
    pairs: List[Tuple[object, Value]] = []
    for i, a in enumerate(args):
        v = a.value
        if a.keyword is not None:
            merge_item(pairs, a.keyword, v)
        elif a.star == "**" or (not a.star and i == 0):
            if isinstance(v, TupleVal) and not a.star:
                for item in v.items:
                    if not (isinstance(item, TupleVal) and len(item.items) == 2
                            and isinstance(item.items[0], Const)):
                        return UNKNOWN
                    merge_item(pairs, item.items[0].value, item.items[1])
            elif isinstance(v, DictVal):
                for k, x in v.items:
                    merge_item(pairs, k, x)
            else:
                return UNKNOWN
        else:
            return UNKNOWN
    return DictVal(tuple(pairs))


def _descendants(node: cst.CSTNode, cache: Dict[cst.CSTNode, frozenset]) -> frozenset:
    """The ids of the nodes inside ``node`` (a helper's definition), once per helper."""
    got = cache.get(node)
    if got is None:
        got = cache[node] = frozenset(id(n) for n in subtree(node))
    return got


def _dict_get(d: DictVal, args: List[Arg]) -> Value:
    """``d.get(key)`` / ``d.get(key, default)`` of a key the dict the source wrote holds: its
    value, as ``d[key]`` reads it; a key it lacks is unknown (code elsewhere may add it)."""
    if not 1 <= len(args) <= 2 or any(a.keyword is not None or a.star for a in args):
        return UNKNOWN
    key = args[0].value
    if not isinstance(key, Const) or not any(k == key.value for k, _ in d.items):
        return UNKNOWN
    return d.get(key.value)


def _dict_view(d: DictVal, meth: str) -> Value:
    """``d.items()``/``keys()``/``values()`` of a dict the source wrote out, as tuples (an
    empty one may be filled later by ``d[k] = v``, which the interpreter does not follow)."""
    if not d.items:
        return UNKNOWN
    if meth == "keys":
        return TupleVal(tuple(Const(k) for k, _ in d.items))
    if meth == "values":
        return TupleVal(tuple(v for _, v in d.items))
    return TupleVal(tuple(TupleVal((Const(k), v)) for k, v in d.items))
