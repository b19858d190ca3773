"""Where the interpreter finds what a JAX API means.

Each API family lives in its own module of this package and registers its handlers by
canonical name (``@models("jax.make_mesh")``), by name prefix, or by the type of value
being called, read or indexed. Adding an API is one handler in one module.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import (TYPE_CHECKING, Any, Callable, ContextManager, Dict, List, Optional,
                    Protocol, Tuple, Type)

import libcst as cst

from .events import MeshCtx
from .values import UNKNOWN, Const, TupleVal, Value

if TYPE_CHECKING:
    from .compat import JaxProfile
    from .interp.state import Arg, CallArgs, Env, FuncInfo
    from .values import FuncVal, MeshVal


class ApiContext(Protocol):
    """What a handler may use of the interpreter: the one interface between Python's
    semantics (``interp/``) and what the APIs mean (``jaxapi/``). The interpreter is one;
    a handler never reaches into it past this."""

    # -- the module and the analysis's options (fixed before it starts) -------------------
    @property
    def module(self) -> cst.Module: ...
    @property
    def profile(self) -> "JaxProfile": ...
    @property
    def scale_mesh(self) -> Optional["MeshVal"]: ...  # check/confirm --mesh
    @property
    def config_meshes(self) -> Dict[Tuple[str, ...], "MeshVal"]: ...
    @property
    def logical_config(self) -> Any: ...  # logical_config.LogicalConfig, or None
    @property
    def assume_defaults(self) -> bool: ...  # shardcheck specs
    @property
    def explain_sites(self) -> bool: ...

    # -- evaluating and calling ---------------------------------------------------------
    def ev(self, e: Optional[cst.CSTNode], env: "Env", ctx: MeshCtx) -> Value: ...
    def call_api(self, name: str, e: cst.CSTNode, args: List["Arg"], env: "Env",
                 ctx: MeshCtx) -> Value: ...
    def eval_return(self, fv: "FuncVal", args: tuple, kwargs: dict, ctx: MeshCtx,
                    record: bool = False) -> Value: ...
    def pass_functions(self, args: List["Arg"], ctx: MeshCtx,
                       bound: Optional[frozenset] = None, opaque: bool = True) -> None: ...
    def note_call(self, fv: Value, ctx: MeshCtx, args: tuple = (),
                  kwargs: Optional[dict] = None) -> None: ...
    def infer(self, at: cst.CSTNode, fn: Callable[..., Any], *args: Any,
              fallback: Value = UNKNOWN, **kwargs: Any) -> Value: ...
    def memo(self, key: Any, compute: Callable[[], Any]) -> Any: ...

    # -- what the analysis records --------------------------------------------------------
    def record(self, kind: str, event: Any) -> None: ...
    def recorded(self, kind: str) -> Optional[List[Any]]: ...
    def prove(self, fact: Any, node: cst.CSTNode) -> None: ...
    def conflict_at(self, node: cst.CSTNode) -> bool: ...
    def recording(self) -> bool: ...  # a body is analysed (not a helper run for its value)
    def unrecorded(self) -> ContextManager[None]: ...  # evaluate without recording
    def assume(self, what: str) -> None: ...  # shardcheck specs: a default read ("Cls.field")

    # -- where the analysis is ---------------------------------------------------------------
    def context_mesh(self, ctx: MeshCtx) -> Optional["MeshVal"]: ...
    def sizes(self, ctx: MeshCtx, x: Optional[Value] = None) -> Callable[[str], Optional[int]]: ...
    def set_module_mesh(self, mesh: "MeshVal") -> None: ...  # jax.set_mesh at module level
    def current_function(self) -> Optional["FuncInfo"]: ...  # None: the module's body
    def function_info(self, node: Any) -> Optional["FuncInfo"]: ...
    def module_scope(self) -> "Env": ...

@dataclass(frozen=True, eq=False)
class ApiCall:
    """One call of a JAX API as a handler sees it."""

    name: str  # canonical qualified name
    node: cst.CSTNode
    args: CallArgs
    env: Env
    ctx: MeshCtx

    @property
    def short(self) -> str:
        return self.name.rsplit(".", 1)[-1]


# Handlers take the interpreter first, as an ApiContext
Handler = Callable[[ApiContext, ApiCall], Value]
CalleeHandler = Callable[[ApiContext, Value, ApiCall], Value]
MethodHandler = Callable[[ApiContext, Value, ApiCall], Optional[Value]]
AttributeHandler = Callable[[ApiContext, Value, str, cst.CSTNode, MeshCtx], Value]
IndexHandler = Callable[[ApiContext, Value, cst.Subscript, "Env", MeshCtx], Optional[Value]]

_BY_NAME: Dict[str, Handler] = {}
_BY_PREFIX: List[Tuple[str, Handler]] = []
_BY_CALLEE: Dict[type, CalleeHandler] = {}
_ATTRIBUTES: Dict[type, AttributeHandler] = {}
_METHODS: Dict[type, MethodHandler] = {}
_INDEXES: Dict[type, IndexHandler] = {}


def models(*names: str) -> Callable[[Handler], Handler]:
    """Register ``fn`` as the meaning of calls to each canonical name in ``names``."""
    def register(fn: Handler) -> Handler:
        for n in names:
            if n in _BY_NAME:
                raise ValueError(f"{n} is modelled twice ({_BY_NAME[n].__module__}, {fn.__module__})")
            _BY_NAME[n] = fn
        return fn
    return register


def models_prefix(*prefixes: str) -> Callable[[Handler], Handler]:
    """Register ``fn`` for every name under ``prefixes`` that no exact handler claims."""
    def register(fn: Handler) -> Handler:
        _BY_PREFIX.extend((p, fn) for p in prefixes)
        return fn
    return register


def calls(*types: Type[Value]) -> Callable[[CalleeHandler], CalleeHandler]:
    """Register ``fn`` for calling a value of one of ``types`` (a jitted function, ...)."""
    def register(fn: CalleeHandler) -> CalleeHandler:
        for t in types:
            _BY_CALLEE[t] = fn
        return fn
    return register


def attribute_of(*types: Type[Value]) -> Callable[[AttributeHandler], AttributeHandler]:
    """Register ``fn`` for ``value.attr`` on values of ``types`` (``mesh.shape``, ``x.T``)."""
    def register(fn: AttributeHandler) -> AttributeHandler:
        for t in types:
            _ATTRIBUTES[t] = fn
        return fn
    return register


def index_of(*types: Type[Value]) -> Callable[[IndexHandler], IndexHandler]:
    """Register ``fn`` for ``value[...]`` on values of ``types`` (``x.at[i]``, an NNX
    ``param[...]``); it returns None where it does not model the subscript."""
    def register(fn: IndexHandler) -> IndexHandler:
        for t in types:
            _INDEXES[t] = fn
        return fn
    return register


def method_of(*types: Type[Value]) -> Callable[[MethodHandler], MethodHandler]:
    """Register ``fn`` for ``value.meth(...)`` on values of ``types`` (``x.sum()``); it
    returns None for a method it does not model (the call is then followed as Python's)."""
    def register(fn: MethodHandler) -> MethodHandler:
        for t in types:
            _METHODS[t] = fn
        return fn
    return register


_HOOKS: Dict[str, Callable[..., Any]] = {}
HOOK_NAMES = (
    "decorate",     # (it, decorator, fn, node, env, ctx) -> the decorated value
    "enter",        # (it, value, node, ctx) -> the MeshCtx inside ``with value:``, or None
    "statement",    # (it, value, ctx) -> the MeshCtx after the expression statement, or None
    "reference",    # (it, canonical name, node, how) -> None: a JAX name is used
    "binop",        # (it, op, a, b, node, ctx) -> the value of an operator on arrays
    "compare",      # (it, a, b, node) -> the value of a comparison of arrays
    "unary",        # (it, op node, value, node) -> the value of -x, +x, ~x on an array
    "index",        # (it, array, subscript node, env, ctx) -> x[...]
    "arguments",    # (it, callee, args, ctx) -> None: check a call's arguments
    "parameter",    # (it, annotation, value, bindings, env, ctx) -> a parameter's value
    "passed",       # (it, shard_map value, node, ctx) -> None: passed to a function
    "module_param",  # (it, call node, receiver, args, ctx) -> the value of Linen's
    #                  self.param(name, init, ...), or None
    "sequence",     # (value) -> a TupleVal, or None: a library value Python sees as a tuple
    #                 (a PartitionSpec: its entries), for indexing, unpacking and loops
    "value_binop",  # (op, a, b, node) -> a value, or None: an operator on such a value
    #                 (`P(...) + (None,)`)
    "wrapped_call",  # (it, callee, call node, args, env, ctx) -> a value, or None: a call of
    #                  a helper the config declares a wrapper of a library API
    "inherited",    # (it, instance, attr, bound) -> a value, or None: an attribute a library
    #                 base class gives a source class's instance (Linen's ``model.init``);
    #                 ``bound(name)``: the instance's source method ``name``, bound, or None
)


def hook(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the one function that gives JAX's meaning to a piece of Python syntax."""
    if name not in HOOK_NAMES:
        raise ValueError(f"unknown hook {name!r}")

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        _HOOKS[name] = fn
        return fn
    return register


def get_hook(name: str) -> Callable[..., Any]:
    return _HOOKS[name]


def as_sequence(v: Value) -> Value:
    """``v`` as Python sees it where it wants a sequence (indexing, unpacking, a loop,
    ``tuple(v)``): a library value that is one (a PartitionSpec) as the tuple it is
    (the "sequence" hook); anything else as it is."""
    if isinstance(v, (TupleVal, Const)) or v is UNKNOWN:
        return v
    seq = _HOOKS["sequence"](v)
    return seq if seq is not None else v


# Observers see a call after its handler has given it meaning (the sharding-site map
# records each sharding site as the interpreter evaluates it), without changing it.
Observer = Callable[[Any, ApiCall, Value], None]
_OBSERVERS: Dict[str, List[Observer]] = {}
_OBSERVED: Dict[str, Handler] = {}


def observes(*names: str) -> Callable[[Observer], Observer]:
    """Register ``fn(it, call, result)`` to run after every call of each name in ``names``
    (modelled or not; an unmodelled call's result is the fallback's)."""
    def register(fn: Observer) -> Observer:
        for n in names:
            _OBSERVERS.setdefault(n, []).append(fn)
            _OBSERVED.pop(n, None)
        return fn
    return register


def _observed(name: str, fn: Handler) -> Handler:
    wrapped = _OBSERVED.get(name)
    if wrapped is None:
        observers = _OBSERVERS[name]

        def wrapped(it: Any, c: ApiCall) -> Value:
            out = fn(it, c)
            for observe in observers:
                observe(it, c, out)
            return out
        _OBSERVED[name] = wrapped
    return wrapped


def handler_for(name: str) -> Optional[Handler]:
    fn = _handler_for(name)
    if name in _OBSERVERS:
        fallback = fn or _BY_NAME.get("")
        return _observed(name, fallback) if fallback is not None else None
    return fn


def _handler_for(name: str) -> Optional[Handler]:
    fn = _BY_NAME.get(name)
    if fn is not None:
        return fn
    for prefix, h in _BY_PREFIX:
        if name.startswith(prefix):
            return h
    return None


def callee_handler(v: Value) -> Optional[CalleeHandler]:
    return _BY_CALLEE.get(type(v))


def attribute_handler(v: Value) -> Optional[AttributeHandler]:
    return _ATTRIBUTES.get(type(v))


def method_handler(v: Value) -> Optional[MethodHandler]:
    return _METHODS.get(type(v))


def index_handler(v: Value) -> Optional[IndexHandler]:
    return _INDEXES.get(type(v))


def modelled_names() -> List[str]:
    """Every canonical name with a handler of its own (for docs and tests)."""
    return sorted(_BY_NAME)
