"""The mypy plugin's hooks. Imported only by ``plugin()``, i.e. only under mypy.

The plugin class routes names to three callbacks:

- ``Sharded[X, "..."]`` (type analysis): parse the string with the shared model, report a
  malformed type or an axis the declared meshes lack, and return ``X`` carrying the
  sharding type. For mypy the value stays an ``X`` (so mypy's own checks are unchanged);
  the sharding type rides along as an extra attribute and, for ``reveal_type``, as the
  instance's last known value: ``Revealed type is "Literal['float32[8@x,16]']?"``.
- Every call (function and method hooks): each argument whose type carries a sharding
  type is compared with the parameter's by ``sharding_types.mismatch_reasons`` (every
  field, in the runtime layer's words), named dims unified across the call.
- Annotated assignments ``y: Sharded[...] = x`` compare with ``x``'s declared type.

When either side has no sharding type the plugin says nothing: unknown is fine.
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

from mypy.errorcodes import VALID_TYPE, ErrorCode
from mypy.nodes import AssignmentStmt, CallExpr, Context, Decorator, FuncDef, NameExpr, Var
from mypy.plugin import AnalyzeTypeContext, FunctionContext, MethodContext, Plugin
from mypy.types import (AnyType, CallableType, TypeOfAny, ExtraAttrs, Instance, LiteralType, ProperType, Type,
                        UnboundType, get_proper_type)

from sharding_types import Dim, ShardingSyntaxError, ShardingType, format_type, mismatch_reasons, parse

SHARDING = ErrorCode("sharding", "Sharding types disagree (shardcheck)", "General")
KEY = "__shardcheck_type__"
ANY_SIZE = "_"  # the grammar's dim name that matches any size and binds nothing
SHARDED_NAMES = ("sharding_types.Sharded", "sharding_types._runtime.Sharded")
# Under TYPE_CHECKING, sharding_types exports ``Sharded`` as ``typing.Annotated``: mypy
# resolves the name to Annotated, and the spelling tells the two apart.
JIT_NAMES = ("jax.jit", "jax._src.api.jit", "jax.experimental.pjit.pjit", "jax._src.pjit.pjit")
ANNOTATED_NAMES = ("typing.Annotated", "typing_extensions.Annotated")


def sharding_of(t: Optional[Type]) -> Optional[str]:
    """The sharding type string a mypy type carries, if any."""
    if t is None:
        return None
    p = get_proper_type(t)
    if isinstance(p, Instance) and p.extra_attrs is not None:
        lit = get_proper_type(p.extra_attrs.attrs.get(KEY))
        if isinstance(lit, LiteralType) and isinstance(lit.value, str):
            return lit.value
    return None


def _unknowable_sizes_match(expected: ShardingType, actual: ShardingType) -> ShardingType:
    """``expected`` with each dim whose actual size mypy cannot know matching any size.

    A named dim on the actual side (the caller's own ``B``) stands for a size that only
    the running program knows, so it can neither contradict a size nor bind a name.
    """
    if expected.rank != actual.rank or not actual.is_symbolic:
        return expected
    dims = tuple(Dim(name=ANY_SIZE, axes=e.axes) if a.name is not None else e
                 for e, a in zip(expected.dims, actual.dims))
    return replace(expected, dims=dims)


def _declared_axes(config_file: Optional[str]) -> Optional[Set[str]]:
    """Axis names of the meshes declared in [tool.shardcheck] (None: none declared)."""
    try:
        from shardcheck.check import config as cfgmod
        start = os.path.dirname(config_file) if config_file else os.getcwd()
        cfg = cfgmod.load(None, start=start or ".")
    except Exception:
        return None
    names: Set[str] = set()
    for mesh in cfg.meshes:
        names.update(a for a, _ in mesh.axes)
    return names or None


class ShardcheckPlugin(Plugin):
    def __init__(self, options) -> None:
        super().__init__(options)
        self.axes = _declared_axes(getattr(options, "config_file", None))
        self.pending: Dict[int, Tuple[str, Context]] = {}  # call id -> declared type

    def report_config_data(self, ctx: Any) -> Any:
        """What the plugin read from ``[tool.shardcheck]`` (the declared meshes' axes):
        mypy keeps a module's cached result only while this is what it was, so a change
        of the meshes re-checks the modules that use ``Sharded``."""
        return sorted(self.axes) if self.axes is not None else None

    # -- routing -----------------------------------------------------------------------------
    def get_type_analyze_hook(self, fullname: str) -> Optional[Callable[[AnalyzeTypeContext], Type]]:
        if fullname in SHARDED_NAMES:
            return self.analyze
        if fullname in ANNOTATED_NAMES:
            return self.analyze_annotated
        return None

    def get_function_hook(self, fullname: str) -> Optional[Callable[[FunctionContext], Type]]:
        return self.check_call

    def get_method_hook(self, fullname: str) -> Optional[Callable[[MethodContext], Type]]:
        return self.check_call

    # -- Sharded[...] ----------------------------------------------------------------------------
    def analyze_annotated(self, ctx: AnalyzeTypeContext) -> Type:
        """``Sharded`` spelled through the Annotated alias; any other Annotated as mypy does."""
        if ctx.type.name.rsplit(".", 1)[-1] == "Sharded":
            return self.analyze(ctx)
        if len(ctx.type.args) < 2:
            ctx.api.fail("Annotated[...] must have exactly one type argument and at least one "
                         "annotation", ctx.context, code=VALID_TYPE)
            return AnyType(TypeOfAny.from_error)
        return ctx.api.analyze_type(ctx.type.args[0])

    def analyze(self, ctx: AnalyzeTypeContext) -> Type:
        args = ctx.type.args
        if len(args) == 2:
            base = ctx.api.analyze_type(args[0])
            text_arg = args[1]
        elif len(args) == 1:
            base = ctx.api.named_type("jax.Array", [])
            text_arg = args[0]
        else:
            ctx.api.fail('Sharded takes [ArrayType, "sharding type"]', ctx.context, code=SHARDING)
            return ctx.api.analyze_type(args[0]) if args else ctx.api.named_type("builtins.object", [])
        text = text_arg.original_str_expr if isinstance(text_arg, UnboundType) else None
        if text is None:
            lit = get_proper_type(text_arg) if not isinstance(text_arg, UnboundType) else None
            text = getattr(lit, "literal_value", None) if lit is not None else None
        if not isinstance(text, str):
            ctx.api.fail("Sharded needs its sharding type as a string literal, e.g. "
                         '"float32[B@data,D]"', ctx.context, code=SHARDING)
            return base
        try:
            st = parse(text)
        except ShardingSyntaxError as e:
            first = str(e).splitlines()[0]
            ctx.api.fail(f'Invalid sharding type "{text}": {first}', ctx.context, code=SHARDING)
            return base
        if self.axes is not None:
            wanted = set(st.sharded_axes) | set(st.varying) | set(st.unreduced) | set(st.reduced)
            for ax in sorted(wanted - self.axes):
                ctx.api.fail(f'Sharding type "{text}" names axis "{ax}", which no mesh in '
                             f"[tool.shardcheck] has (axes: {', '.join(sorted(self.axes))})",
                             ctx.context, code=SHARDING)
        proper = get_proper_type(base)
        if not isinstance(proper, Instance):
            return base
        str_type = ctx.api.named_type("builtins.str", [])
        lit = LiteralType(format_type(st), fallback=str_type)  # canonical spelling
        extra = proper.extra_attrs.copy() if proper.extra_attrs else ExtraAttrs({}, set(), None)
        extra.attrs[KEY] = lit
        out = proper.copy_modified(last_known_value=lit)
        out.extra_attrs = extra
        self._check_annotated_assignment(ctx, format_type(st))
        return out

    def _check_annotated_assignment(self, ctx: AnalyzeTypeContext, declared: str) -> None:
        """``y: Sharded[...] = rhs``: a name with a declared sharding type is compared now;
        a call is compared when it is type-checked (see check_call)."""
        sem = getattr(ctx.api, "api", None)
        stmt = getattr(sem, "statement", None)
        if sem is None or not isinstance(stmt, AssignmentStmt) or stmt.type is None or \
                getattr(stmt, "unanalyzed_type", None) is None:
            return
        rhs = stmt.rvalue
        if isinstance(rhs, CallExpr):
            self.pending[id(rhs)] = (declared, rhs)
        elif isinstance(rhs, NameExpr) and isinstance(rhs.node, Var):
            got = sharding_of(rhs.node.type)
            if got is not None:
                self._report(declared, got, rhs, sem.fail,
                             f'"{rhs.name}" assigned to a variable declared')

    # -- calls -----------------------------------------------------------------------------------
    def check_call(self, ctx) -> Type:
        call = ctx.context
        pending = self.pending.pop(id(call), None)
        if pending is not None:
            got = sharding_of(ctx.default_return_type)
            if got is not None:
                self._report(pending[0], got, call, ctx.api.fail,
                             "the call's result assigned to a variable declared")
        callee = self._callee(ctx)
        if callee is None:
            return ctx.default_return_type
        arg_types, args = ctx.arg_types, ctx.args
        original = self._jitted(ctx.context)
        if original is not None:  # jax.jit's wrapper takes (*args, **kwargs): remap
            callee = original
            arg_types, args = _remap(ctx, original)
        bindings: Dict[str, int] = {}
        bound_by: Dict[str, str] = {}
        for i, formal in enumerate(callee.arg_types):
            want = sharding_of(formal)
            if want is None or i >= len(arg_types):
                continue
            name = callee.arg_names[i] if i < len(callee.arg_names) else None
            for actual_t, actual in zip(arg_types[i], args[i]):
                got = sharding_of(actual_t)
                if got is not None:
                    arg = f'argument "{name}"' if name else f"argument {i + 1}"
                    self._report(want, got, actual, ctx.api.fail,
                                 f"{arg} of {_callee_name(callee)} declared",
                                 bindings, bound_by, binder=arg)
        return ctx.default_return_type

    def _callee(self, ctx) -> Optional[CallableType]:
        call = ctx.context
        if not isinstance(call, CallExpr):
            return None
        try:
            t: Optional[ProperType] = get_proper_type(ctx.api.lookup_type(call.callee))
        except Exception:
            return None
        if isinstance(t, Instance):  # a jax.jit-wrapped function: its __call__
            from mypy.subtypes import find_member
            member = find_member("__call__", t, t, is_operator=True)
            t = get_proper_type(member) if member is not None else None
        return t if isinstance(t, CallableType) else None

    @staticmethod
    def _jitted(call: Context) -> Optional[CallableType]:
        """The undecorated signature behind ``@jax.jit def f`` or ``jax.jit(f)(...)``: jax.jit
        returns a wrapper typed ``(*args: Any, **kwargs: Any)``, which would hide it."""
        if not isinstance(call, CallExpr):
            return None
        callee = call.callee
        node = getattr(callee, "node", None)
        func: Optional[FuncDef] = None
        if isinstance(node, Decorator) and any(
                getattr(d, "fullname", "") in JIT_NAMES or
                isinstance(d, CallExpr) and getattr(d.callee, "fullname", "") in JIT_NAMES
                for d in node.original_decorators):
            func = node.func
        elif isinstance(callee, CallExpr) and getattr(callee.callee, "fullname", "") in JIT_NAMES \
                and callee.args:
            wrapped = getattr(callee.args[0], "node", None)
            func = wrapped if isinstance(wrapped, FuncDef) else None
        t = get_proper_type(func.type) if func is not None and func.type is not None else None
        return t if isinstance(t, CallableType) else None

    @staticmethod
    def _report(want: str, got: str, where: Context, fail, what: str,
                bindings: Optional[Dict[str, int]] = None,
                bound_by: Optional[Dict[str, str]] = None, binder: str = "") -> None:
        """Report how ``got`` contradicts ``want``, in sharding_types' words. Named dims of
        ``want`` bind in ``bindings``; ``bound_by`` records ``binder`` for new ones."""
        bindings = {} if bindings is None else bindings
        bound_by = {} if bound_by is None else bound_by
        actual = parse(got)
        before = set(bindings)
        reasons = mismatch_reasons(_unknowable_sizes_match(parse(want), actual), actual,
                                   bindings, bound_by=bound_by)
        for name in set(bindings) - before:
            bound_by[name] = binder
        if reasons:
            fail(f'Sharding mismatch: {what} "{want}", got "{got}" ({"; ".join(reasons)})',
                 where, code=SHARDING)


def _remap(ctx, sig: CallableType) -> Tuple[List[List[Type]], List[list]]:
    """The call's actual arguments mapped onto ``sig``'s formals."""
    from mypy.argmap import map_actuals_to_formals
    kinds = [k for ks in ctx.arg_kinds for k in ks]
    names = [n for ns in ctx.arg_names for n in ns]
    types = [t for ts in ctx.arg_types for t in ts]
    exprs = [e for es in ctx.args for e in es]
    mapping = map_actuals_to_formals(kinds, names, sig.arg_kinds, sig.arg_names,
                                     lambda i: types[i])
    return ([[types[j] for j in m] for m in mapping], [[exprs[j] for j in m] for m in mapping])


def _callee_name(c: CallableType) -> str:
    return f'"{c.name.split(" of ")[0]}"' if c.name else "the callee"
