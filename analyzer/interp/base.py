"""What each part of the interpreter may use of the others, typed once.

The interpreter is one class assembled from three parts (statements, expressions,
calls) and a driver; each part subclasses this base, which declares the shared state
and the entry points the parts call across one another."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, ContextManager, Dict, List, Optional, Set, Tuple

import libcst as cst

from ..events import MeshCtx
from ..values import UNKNOWN, FuncVal, MeshVal, Value
from .state import Arg, Env, Events, FuncInfo

if TYPE_CHECKING:
    from ..compat import JaxProfile


class InterpreterBase:
    module: cst.Module
    module_name: str
    # shardcheck specs: the Python config of the module's script (its file, as shown)
    python_config: Optional[Tuple[str, str]]
    project: Any  # analyzer.project.Project, or None for a lone file
    profile: "JaxProfile"
    config_meshes: Dict[Tuple[str, ...], MeshVal]
    default_mesh: Optional[MeshVal]
    logical_config: Any  # analyzer.logical_config.LogicalConfig, or None
    scale_mesh: Optional[MeshVal]
    definitions_only: bool
    env: Env
    funcs: Dict[cst.CSTNode, FuncInfo]
    queue: List[FuncInfo]
    module_events: Events
    cur: Optional[Events]  # where events go now (None: a helper evaluated for its value)
    caller: Any  # "module" or the FunctionDef/Lambda node being analyzed
    global_meshes: List[MeshVal]
    returns: Optional[List[Tuple[cst.CSTNode, Value]]]
    ended: bool
    helper_depth: int
    dead_branches: int
    # what the generator body being run yields (None: no generator's body is being run)
    yields: Optional[List[Any]]
    methods_running: Set[Any]
    method_runs: int
    loop_rerun_depth: int
    loop_unroll_depth: int
    raises_blocks: List[cst.With]
    func_stack: List[FuncInfo]
    ret_cache: Dict[Any, Value]
    site_sink: Optional[List[Any]]  # sites a helper reaches for one call (calls.sites_via)
    site_facts: List[Any]  # and the facts they are read from
    site_spec_uses: List[Any]  # and the specs it applies
    helper_origins: Dict[cst.CSTNode, cst.CSTNode]
    calling: Optional[cst.CSTNode]  # the call expression being evaluated (its callee's site)
    helper_nodes: Dict[cst.CSTNode, frozenset]
    rule_params: Dict[cst.CSTNode, Optional[int]]  # rule_trees.rules_parameter's answers
    assume_defaults: bool  # shardcheck specs: config objects' fields read as their defaults
    explain_sites: bool  # the reasons a site's spec is unknown are wanted (not by check)
    class_bodies: Dict[int, Tuple[Any, Any, tuple]]  # check: a class body's scope -> its class
    assumed: List[str]  # the defaults read so far in the body being analyzed ("Cls.field")
    events: Events

    def memo(self, key: Any, compute: Callable[[], Any]) -> Any:
        """``compute()``, once per ``key`` in this analysis: for walks of the syntax tree
        that a helper's body would otherwise repeat at every call."""
        if key not in self.ret_cache:
            self.ret_cache[key] = compute()
        return self.ret_cache[key]

    # -- the driver (model.py) --------------------------------------------------------------
    def register(self, fv: FuncVal) -> FuncInfo:
        raise NotImplementedError

    def note_call(self, fv: Value, ctx: MeshCtx, args: tuple = (),
                  kwargs: Optional[dict] = None) -> None:
        raise NotImplementedError

    def record(self, kind: str, event: Any) -> None:
        raise NotImplementedError

    def recorded(self, kind: str) -> Optional[List[Any]]:
        raise NotImplementedError

    def infer(self, at: cst.CSTNode, fn: Callable[..., Any], *args: Any,
              fallback: Value = UNKNOWN, **kwargs: Any) -> Value:
        raise NotImplementedError

    def prove(self, fact: Any, node: cst.CSTNode) -> None:
        raise NotImplementedError

    def conflict_at(self, node: cst.CSTNode) -> bool:
        raise NotImplementedError

    def recording(self) -> bool:
        raise NotImplementedError

    def unrecorded(self) -> ContextManager[None]:
        raise NotImplementedError

    def assume(self, what: str) -> None:
        raise NotImplementedError

    def current_function(self) -> Optional[FuncInfo]:
        raise NotImplementedError

    def function_info(self, node: Any) -> Optional[FuncInfo]:
        raise NotImplementedError

    def module_scope(self) -> Env:
        raise NotImplementedError

    def set_module_mesh(self, mesh: MeshVal) -> None:
        raise NotImplementedError

    @staticmethod
    def context_mesh(ctx: MeshCtx) -> Optional[MeshVal]:
        raise NotImplementedError

    def sizes(self, ctx: MeshCtx, x: Optional[Value] = None) -> Callable[[str], Optional[int]]:
        raise NotImplementedError

    # -- statements.py -----------------------------------------------------------------------
    def exec_block(self, body: Any, env: Env, ctx: MeshCtx) -> MeshCtx:
        raise NotImplementedError

    def assign(self, target: cst.CSTNode, v: Value, env: Env, ctx: MeshCtx,
               record: bool = True) -> None:
        raise NotImplementedError

    # -- expressions.py ----------------------------------------------------------------------
    def ev(self, e: Optional[cst.CSTNode], env: Env, ctx: MeshCtx) -> Value:
        raise NotImplementedError

    def attribute(self, e: cst.Attribute, env: Env, ctx: MeshCtx) -> Value:
        raise NotImplementedError

    def binop(self, op: str, a: Value, b: Value, node: cst.CSTNode, ctx: MeshCtx) -> Value:
        raise NotImplementedError

    def iter_items(self, v: Value) -> Optional[List[Value]]:
        raise NotImplementedError

    def loop_item(self, v: Value, ctx: MeshCtx) -> Value:
        raise NotImplementedError

    # -- calls.py ------------------------------------------------------------------------------
    def call(self, e: cst.Call, env: Env, ctx: MeshCtx) -> Value:
        raise NotImplementedError

    def call_api(self, name: str, e: cst.CSTNode, args: List[Arg], env: Env,
                 ctx: MeshCtx) -> Value:
        raise NotImplementedError

    def pass_functions(self, args: List[Arg], ctx: MeshCtx,
                       bound: Optional[frozenset] = None, opaque: bool = True) -> None:
        raise NotImplementedError

    def eval_return(self, fv: FuncVal, args: tuple, kwargs: dict, ctx: MeshCtx,
                    record: bool = False) -> Value:
        raise NotImplementedError

    def bind_params(self, node: cst.CSTNode, env: Env, ctx: MeshCtx,
                    args: Optional[tuple] = None, kwargs: Optional[dict] = None) -> None:
        raise NotImplementedError
