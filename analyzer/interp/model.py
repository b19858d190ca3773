"""The abstract interpreter of one module: the driver.

It walks statements in order, keeping an environment of abstract values (meshes,
specs, shapes, functions), joins environments where control flow merges, and follows
calls so that a function body is analyzed under the mesh context of its callers
(``with jax.set_mesh(mesh): step(x)``) or of the ``shard_map`` that maps it. What it
cannot prove it leaves UNKNOWN.

Python's semantics live in this package (statements, expressions, calls); what a JAX
API means lives in ``analyzer.jaxapi``, one module per API family, found by name.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Set, Tuple

import libcst as cst

from .. import compat
from ..compat import JaxProfile
from ..events import NO_MESH, UNKNOWN_CTX, FactAt, MeshCtx, ShardMapCall
from ..transfer import Conflict
from ..values import SPREAD, UNKNOWN, ArrayVal, FuncVal, JitVal, MeshVal, PartialVal, Value, join
from .calls import CallsMixin
from .expressions import ExpressionsMixin
from .state import Env, Events, FuncInfo
from .statements import StatementsMixin


@dataclass(frozen=True)
class Options:
    """How a module is analysed, fixed before the analysis starts (``engine.analyze``
    makes them from the config).

    ``scale_mesh`` (``check/confirm --mesh``): every mesh the source makes becomes this
    one (its axes and sizes; an axis the source also names keeps the source's type).
    ``definitions_only``: evaluate the module's top level only (an imported module).
    ``profile``: the JAX version profile (``analyzer.compat``) whose API semantics apply.
    ``logical_config``: ``[tool.shardcheck.logical]`` (``logical_config.LogicalConfig``).
    ``assume_defaults``: config objects' fields read as their declared defaults, and why
    each unknown site is unknown explained (``explain_sites``): ``shardcheck specs``.
    ``python_config``: the script's Python config (its file, as shown), for the map."""

    module_name: str = ""
    config_meshes: Mapping[Tuple[str, ...], MeshVal] = field(default_factory=dict)
    default_mesh: Optional[MeshVal] = None
    scale_mesh: Optional[MeshVal] = None
    definitions_only: bool = False
    profile: Optional[JaxProfile] = None
    logical_config: Any = None
    assume_defaults: bool = False
    explain_sites: bool = True
    python_config: Optional[Tuple[str, str]] = None


# the records that judge the values in view (a spec meeting an array, a mesh needed, a
# proven conflict): dropped in a branch those values never run. A site (`shardcheck
# specs`), a deprecated API, a mesh made and the inferred types are kept there.
_VALUE_CHECKS = frozenset({"facts", "spec_uses", "needs_mesh", "axis_typed", "mesh_meets",
                           "call_facts", "call_spec_uses"})


class Interpreter(StatementsMixin, ExpressionsMixin, CallsMixin):
    """Resolve one module and record events. ``build()`` runs the analysis once; its
    options (``Options``) do not change once it is made."""

    def __init__(self, module: cst.Module, project: Any = None,
                 options: Optional[Options] = None):
        o = options or Options()
        self.options = o
        self.module = module
        self.profile = o.profile or compat.DEFAULT  # the JAX version whose semantics apply
        self.module_name = o.module_name
        self.project = project
        self.config_meshes = dict(o.config_meshes)
        self.default_mesh = o.default_mesh
        self.scale_mesh = o.scale_mesh
        self.logical_config: Any = o.logical_config
        self.definitions_only = o.definitions_only
        self.env = Env()
        self.funcs: Dict[cst.CSTNode, FuncInfo] = {}
        # caller node -> the functions it has recorded calls of (id -> info): what an
        # analysis of the caller forgets, without a look at every function of the module
        self.callees: Dict[Any, Dict[int, FuncInfo]] = {}
        self.queue: List[FuncInfo] = []
        self.module_events = Events()
        self.cur: Optional[Events] = self.module_events
        self.caller: Any = "module"
        self.global_meshes: List[MeshVal] = []
        self.returns: Optional[List[Tuple[cst.CSTNode, Value]]] = None
        self.ended = False  # the statement just run always returns or raises (statements.py)
        self.helper_depth = 0
        self.dead_branches = 0  # inside an `if` branch Python does not run here (statements.py)
        self.yields: Optional[List[Value]] = None
        self.methods_running: Set[cst.FunctionDef] = set()  # instances.run_method
        self.method_runs = 0  # for the function analysed now (instances._MAX_RUNS)
        self.loop_rerun_depth = 0
        self.loop_unroll_depth = 0
        self.raises_blocks: List[cst.With] = []
        self.func_stack: List[FuncInfo] = []
        self.ret_cache: Dict[Any, Value] = {}
        # what a helper evaluated for one call reaches: its sites, facts and specs applied
        # (CallsMixin.sites_via)
        self.site_sink: Optional[List[Any]] = None
        self.site_facts: List[Any] = []
        self.site_spec_uses: List[Any] = []
        self.helper_nodes: Dict[cst.CSTNode, frozenset] = {}  # calls._descendants' cache
        self.rule_params: Dict[cst.CSTNode, Optional[int]] = {}  # rule_trees.rules_parameter
        self.assume_defaults = o.assume_defaults  # see Options
        self.explain_sites = o.explain_sites  # see Options
        # check: each class body's scope (by id) -> (its ClassDef, the scope, its bases)
        self.class_bodies: Dict[int, Tuple[cst.ClassDef, Env, tuple]] = {}
        self.python_config: Optional[Tuple[str, str]] = o.python_config  # see Options
        self.assumed: List[str] = []
        self.helper_origins: Dict[cst.CSTNode, cst.CSTNode] = {}  # call -> line in the helper
        self.calling: Optional[cst.CSTNode] = None  # the call expression being evaluated
        # the row in the file of each line of what was parsed, when relevance left lines
        # out (set by engine._model for the map); None: parsed whole
        self.rows: Optional[List[int]] = None
        self.events = Events()

    # -- driver -------------------------------------------------------------------------
    def build(self) -> "Interpreter":
        self.exec_block(self.module.body, self.env, NO_MESH)
        if self.definitions_only:
            return self
        budget = 4 * len(self.funcs) + 64
        while self.queue and budget > 0:
            info = self.queue.pop(0)
            ctx = self.merged_ctx(info)
            if info.analyzed_ctx is not None and ctx.same(info.analyzed_ctx) and \
                    _same_args(info.analyzed_args, self.common_args(info)) and \
                    _same_kws(info.analyzed_kws, self.common_kwargs(info)):
                continue
            if info.analyses >= 4:
                continue
            budget -= 1
            self.analyze_function(info, ctx)
        self.events = Events()
        self.events.extend(self.module_events)
        for info in self.funcs.values():
            if info.events is not None:
                self.events.extend(info.events)
        self._facts_of_calls()
        return self

    def _facts_of_calls(self) -> None:
        """A helper's fact for one call's arguments, where no analysis of the helper
        itself proves it (its own parameters unknown there), is reported at the call,
        with the line in the helper noted (``helper_origins``)."""
        own = {(id(f.node), type(f.fact)) for f in self.events.facts}
        for cf in self.events.call_facts:
            key = (id(cf.origin), type(cf.fact))
            if key in own or (id(cf.call), type(cf.fact)) in own:
                continue
            own.add((id(cf.call), type(cf.fact)))
            self.events.facts.append(FactAt(cf.fact, cf.call))
            self.helper_origins[cf.call] = cf.origin
        complete = {id(u.spec.node) for u in self.events.spec_uses if u.spec.complete}
        for use, origin in self.events.call_spec_uses:  # likewise a spec the helper applies
            if id(origin) not in complete:
                self.events.spec_uses.append(use)

    def default_ctx(self) -> MeshCtx:
        """The context of a function no call in this file tells us about."""
        if len(self.global_meshes) == 1:  # one module-level jax.set_mesh(mesh)
            return MeshCtx(known=True, mesh=self.global_meshes[0], bound_axes=None)
        if self.global_meshes:  # several: which one a later call sees is unknown
            return UNKNOWN_CTX
        if self.default_mesh is not None:  # [tool.shardcheck] default-mesh
            return MeshCtx(known=True, mesh=self.default_mesh, bound_axes=None)
        return UNKNOWN_CTX

    def merged_ctx(self, info: FuncInfo) -> MeshCtx:
        ctxs = [c for cs in info.calls.values() for c in cs]
        if not ctxs:
            return self.default_ctx()
        first = ctxs[0]
        if all(c.same(first) for c in ctxs[1:]):
            return first
        if all(c.known and c.mesh is first.mesh for c in ctxs):
            if first.bound_axes is not None and first.shard_map is not None and all(
                    c.bound_axes == first.bound_axes and c.manual_axes == first.manual_axes
                    and c.shard_map is not None for c in ctxs[1:]):
                # the body of one shard_map built twice (by a factory's own analysis and
                # for the call that uses it): the same axes are bound in each
                return MeshCtx(known=True, mesh=first.mesh, bound_axes=first.bound_axes,
                               manual_axes=first.manual_axes, shard_map=first.shard_map,
                               eager=False)
            # the logical axis rules all callers run it under stay in force in it
            rules = first.logical_rules if all(
                c.logical_rules == first.logical_rules for c in ctxs[1:]) else None
            # the mesh is JAX's context mesh for it if it is so for every caller
            return MeshCtx(known=True, mesh=first.mesh, bound_axes=None, logical_rules=rules,
                           abstract=all(c.abstract for c in ctxs))
        return UNKNOWN_CTX

    def register(self, fv: FuncVal) -> FuncInfo:
        info = self.funcs.get(fv.node)
        if info is None:
            info = FuncInfo(fv)
            self.funcs[fv.node] = info
            self.queue.append(info)
        else:
            info.val = fv
        if self.dead_branches:
            info.defined_dead = True
        else:
            info.defined_live = True
        return info

    def note_call(self, fv: Value, ctx: MeshCtx, args: tuple = (),
                  kwargs: Optional[dict] = None) -> None:
        """``fv`` is called under ``ctx`` with positional ``args`` and keyword ``kwargs``
        (None: not all known, a ``**kw`` was passed): analyze it there."""
        if isinstance(fv, JitVal):
            fv = fv.func
        if isinstance(fv, PartialVal):
            args = tuple(fv.args) + tuple(args)
            if kwargs is not None:
                kwargs = {**dict(fv.kwargs), **kwargs}
            fv = fv.func
            if isinstance(fv, JitVal):
                fv = fv.func
        if not isinstance(fv, FuncVal):
            return
        info = self.register(fv)
        if self.cur is None or self.dead_branches:
            return  # (a call in code that never runs here gives the function no context)
        info.calls.setdefault(self.caller, []).append(ctx)
        self.callees.setdefault(self.caller, {})[id(info)] = info
        info.call_args.setdefault(self.caller, []).append(args)
        info.call_kws.setdefault(self.caller, []).append(kwargs)
        if self.calling is not None:
            info.call_sites.setdefault(self.caller, []).append(self.calling)
        info.call_assumes.setdefault(self.caller, []).append(tuple(self.assumed))
        if info not in self.queue:
            self.queue.append(info)

    def analyze_function(self, info: FuncInfo, ctx: MeshCtx) -> None:
        fv = info.val
        info.analyzed_ctx = ctx
        info.analyzed_args = self.common_args(info)
        info.analyzed_kws = self.common_kwargs(info)
        info.analyses += 1
        events = Events()
        saved = (self.cur, self.caller, self.returns, self.assumed, self.yields)
        self.yields = None  # a generator analysed as a body: what it yields goes nowhere
        returns: List[Tuple[cst.CSTNode, Value]] = []
        # what its callers assumed is assumed in it too, where their arguments are bound
        inherited = [a for by_caller in info.call_assumes.values() for call in by_caller
                     for a in call] if info.analyzed_args is not None else []
        self.cur, self.caller, self.returns, self.assumed = events, fv.node, returns, inherited
        # forget this function's earlier outgoing calls: they are recorded again below
        for other in self.callees.pop(fv.node, {}).values():
            other.calls.pop(fv.node, None)
            other.call_args.pop(fv.node, None)
            other.call_kws.pop(fv.node, None)
            other.call_assumes.pop(fv.node, None)
            other.call_sites.pop(fv.node, None)
        self.func_stack.append(info)
        saved_runs, self.method_runs = self.method_runs, 0
        saved_dead = self.dead_branches
        self.dead_branches = int(info.defined_dead and not info.defined_live)
        try:
            env = Env(parent=fv.scope if isinstance(fv.scope, Env) else self.env)
            self.bind_params(fv.node, env, ctx, info.analyzed_args, info.analyzed_kws)
            if isinstance(fv.node, cst.Lambda):
                returns.append((fv.node.body, self.ev(fv.node.body, env, ctx)))
            elif isinstance(fv.node, cst.FunctionDef):
                self.exec_block(fv.node.body, env, ctx)
            for sm in self.shard_maps_of(fv):
                sm.returns = list(returns)
        finally:
            self.func_stack.pop()
            self.method_runs = saved_runs
            self.dead_branches = saved_dead
            info.events = events
            self.cur, self.caller, self.returns, self.assumed, self.yields = saved

    @staticmethod
    def common_args(info: FuncInfo) -> Optional[tuple]:
        """Positional arguments every known call passes alike (UNKNOWN where they differ)."""
        calls = [a for args in info.call_args.values() for a in args]
        if calls and all(len(a) == 0 for a in calls):
            return ()  # every call passes nothing positionally: the defaults hold
        if not calls or any(len(a) == 0 for a in calls):
            return None
        n = min(len(a) for a in calls)
        out = []
        for i in range(n):
            v = calls[0][i]
            for other in calls[1:]:
                v = v if other[i] is v else join(v, other[i])
            out.append(v)
        if any(len(a) != n for a in calls):  # what a *args parameter holds differs
            out.append(SPREAD)
        return tuple(out)

    @staticmethod
    def common_kwargs(info: FuncInfo) -> dict:
        """Keyword arguments: each name any call passes, with the value every call passes
        alike; UNKNOWN where a call passes another or none (that call's parameter holds
        its default) or hides its keywords in ``**kw`` (then every parameter a call does
        not pass by position is UNKNOWN, never its default)."""
        kws = [k for ks in info.call_kws.values() for k in ks]
        names: dict = {}
        for k in kws:
            names.update(dict.fromkeys(k or ()))
        if any(k is None for k in kws):
            params = info.val.node.params  # type: ignore[attr-defined]  # FunctionDef/Lambda
            names.update(dict.fromkeys(p.name.value for p in
                                       list(params.params) + list(params.kwonly_params)))
        out = {}
        for n in names:
            vals = [k.get(n) if k is not None else None for k in kws]
            v = vals[0]
            for other in vals[1:]:
                v = None if v is None or other is None else v if other is v else join(v, other)
            out[n] = UNKNOWN if v is None else v
        return out

    def shard_maps_of(self, fv: FuncVal) -> List[ShardMapCall]:
        out = []
        for evs in [self.module_events] + [i.events for i in self.funcs.values() if i.events]:
            for sm in evs.shard_maps:
                f = sm.func
                if isinstance(f, PartialVal):
                    f = f.func
                if isinstance(f, FuncVal) and f.node is fv.node:
                    out.append(sm)
        return out

    # -- recording --------------------------------------------------------------------------
    def record(self, kind: str, event: Any) -> None:
        """Add ``event`` to the records of the body being analyzed (none in a helper
        evaluated only for its return value; none of those that judge values in a
        branch whose test is known false here: its code never runs for these values)."""
        if self.dead_branches and kind in _VALUE_CHECKS:
            return
        where = self.recorded(kind)
        if where is not None:
            if kind == "sites" and self.assumed:
                event = replace(event, assumes=tuple(dict.fromkeys(self.assumed)))
            where.append(event)

    def recorded(self, kind: str) -> Optional[List[Any]]:
        """Where events of ``kind`` go now: the body's records; for a helper evaluated at
        a call (``sites_via``), its sites, its facts and the specs it applies; else None
        (dropped)."""
        if self.cur is not None:
            return getattr(self.cur, kind)
        if self.site_sink is not None and kind in ("sites", "facts", "spec_uses"):
            return {"sites": self.site_sink, "facts": self.site_facts,
                    "spec_uses": self.site_spec_uses}[kind]
        return None

    def infer(self, at: cst.CSTNode, fn: Callable[..., Any], *args: Any,
              fallback: Value = UNKNOWN, **kwargs: Any) -> Value:
        """Run a transfer rule; a conflict's fact is recorded at ``at`` and the result is
        unknown."""
        try:
            out = fn(*args, **kwargs)
        except Conflict as c:
            self.prove(c.fact, at)
            return fallback
        return out if out is not None else fallback

    def prove(self, fact: Any, node: cst.CSTNode) -> None:
        """Record a typed fact (``analyzer.facts``) at ``node`` for the rules."""
        self.record("facts", FactAt(fact, node))

    def conflict_at(self, node: cst.CSTNode) -> bool:
        """Whether the body being analyzed proved a conflict at ``node``."""
        return self.cur is not None and any(f.node is node for f in self.cur.facts)

    def recording(self) -> bool:
        """Whether a body is being analysed (its events kept), not a helper run for its
        value."""
        return self.cur is not None

    @contextmanager
    def unrecorded(self) -> Iterator[None]:
        """Evaluate for a value only: nothing is recorded meanwhile."""
        saved, self.cur = self.cur, None
        try:
            yield
        finally:
            self.cur = saved

    def assume(self, what: str) -> None:
        """``shardcheck specs``: the body being analysed read a declared default."""
        self.assumed.append(what)

    def current_function(self) -> Optional[FuncInfo]:
        """The function whose body is being analysed (None: the module's body)."""
        return self.func_stack[-1] if self.func_stack else None

    def function_info(self, node: Any) -> Optional[FuncInfo]:
        return self.funcs.get(node)

    def module_scope(self) -> Env:
        return self.env

    # -- the mesh in force ------------------------------------------------------------------
    def set_module_mesh(self, mesh: MeshVal) -> None:
        """``jax.set_mesh(mesh)`` as a statement: at the module's top level, the mesh of
        every function no call in view tells about (``default_ctx``)."""
        if self.caller == "module":
            self.global_meshes.append(mesh)

    @staticmethod
    def context_mesh(ctx: MeshCtx) -> Optional[MeshVal]:
        return ctx.mesh if ctx.known else None

    def sizes(self, ctx: MeshCtx, x: Optional[Value] = None) -> Callable[[str], Optional[int]]:
        """Mesh axis -> size, from ``x``'s own mesh or the context's (None when unknown)."""
        mesh = x.mesh if isinstance(x, ArrayVal) and x.mesh is not None else self.context_mesh(ctx)
        return mesh.size_of if mesh is not None else (lambda a: None)


def _same_kws(a: Optional[dict], b: dict) -> bool:
    return a is not None and a.keys() == b.keys() and all(
        a[k] is b[k] or a[k] == b[k] for k in a)


def _same_args(a: Optional[tuple], b: Optional[tuple]) -> bool:
    """Whether two bindings of a function's arguments are the same values (identity: a
    later call passing other values makes the function worth analysing again)."""
    if a is None or b is None:
        return a is b
    return len(a) == len(b) and all(x is y or x == y for x, y in zip(a, b))
