"""The interpreter's working state: environments, per-function records, call arguments,
and the few abstract values that exist only while interpreting (not facts for rules)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

import libcst as cst

from ..events import (ApiUse, AxisTypedUse, CallFact, CollectiveCall, FactAt, JitCall, MeshCtx,
                      MeshMade, MeshMeet, NeedsMesh, ShardingSite, ShardMapCall,
                      SpecUse, TypeRecord)
from ..values import JOINABLE, UNKNOWN, FuncVal, Value, join


class Env:
    """A scope: names to abstract values, falling back to the enclosing scope."""

    __slots__ = ("vars", "parent")

    def __init__(self, parent: Optional["Env"] = None, vars: Optional[dict] = None):
        self.parent = parent
        self.vars: Dict[str, Value] = vars if vars is not None else {}

    def lookup(self, name: str) -> Value:
        env: Optional[Env] = self
        while env is not None:
            v = env.vars.get(name)
            if v is not None:
                if type(v) is LazyImport:
                    return v.value()
                return v
            env = env.parent
        return UNKNOWN

    def binds(self, name: str) -> bool:
        """Whether ``name`` is bound in this scope or an enclosing one."""
        env: Optional[Env] = self
        while env is not None:
            if name in env.vars:
                return True
            env = env.parent
        return False

    def rebind(self, name: str, v: Value) -> None:
        """Set ``name`` where it is bound (the nearest scope that holds it), else here:
        what a call that changes the object a name holds leaves it holding."""
        scope: Optional[Env] = self
        while scope is not None:
            if name in scope.vars:
                scope.vars[name] = v
                return
            scope = scope.parent
        self.vars[name] = v

    def copy(self) -> "Env":
        return Env(self.parent, dict(self.vars))

    def merge_from(self, *branches: "Env") -> None:
        """Set self to the join of ``branches`` (each a copy of an earlier self)."""
        names: set = set()
        for b in branches:
            names.update(b.vars)
        mine = self.vars
        for n in names:
            # a branch that does not bind n leaves what n was before: looked up once, and
            # only then (the lookup of an imported name reads that module)
            before: Optional[Value] = None
            v: Optional[Value] = None
            for b in branches:
                w = b.vars.get(n)  # never None: a scope binds values only (``lookup``)
                if w is None:
                    if before is None:
                        before = self.lookup(n)
                    w = before
                v = w if v is None else _joined(v, w)
            mine[n] = v  # type: ignore[assignment]  # branches is never empty here


def _joined(a: Value, b: Value) -> Value:
    """``join(a, b)``, where an imported name (``LazyImport``) is read only if the join
    can keep what it is, as it could had the import been read when it ran: the same
    import on both paths is itself; against a value of a kind ``join`` keeps, or
    another import, it is read; against anything else (unknown, a function, a class)
    the join is unknown, whatever it reads."""
    lazy_a, lazy_b = type(a) is LazyImport, type(b) is LazyImport
    if lazy_a and lazy_b and (a.module, a.name) == (b.module, b.name):  # type: ignore[attr-defined]
        return a
    if lazy_a and (lazy_b or isinstance(b, JOINABLE)):
        a = a.value()  # type: ignore[attr-defined]
    if lazy_b and (lazy_a or isinstance(a, JOINABLE)):
        b = b.value()  # type: ignore[attr-defined]
    return join(a, b)


@dataclass
class Events:
    """What one function body (or the module body) recorded for the rules."""

    spec_uses: List[SpecUse] = field(default_factory=list)
    meshes: List[MeshMade] = field(default_factory=list)
    collectives: List[CollectiveCall] = field(default_factory=list)
    shard_maps: List[ShardMapCall] = field(default_factory=list)
    api_uses: List[ApiUse] = field(default_factory=list)
    needs_mesh: List[NeedsMesh] = field(default_factory=list)
    axis_typed: List[AxisTypedUse] = field(default_factory=list)
    mesh_meets: List[MeshMeet] = field(default_factory=list)
    facts: List[FactAt] = field(default_factory=list)
    types: List[TypeRecord] = field(default_factory=list)
    jit_calls: List[JitCall] = field(default_factory=list)
    sites: List[ShardingSite] = field(default_factory=list)  # for `shardcheck specs`
    call_facts: List[CallFact] = field(default_factory=list)  # CallsMixin.sites_via
    call_spec_uses: List[Tuple[SpecUse, cst.CSTNode]] = field(default_factory=list)  # and origin

    def extend(self, other: "Events") -> None:
        for k in self.__dataclass_fields__:
            getattr(self, k).extend(getattr(other, k))


@dataclass(eq=False)
class FuncInfo:
    """A function of the file: who calls it under which contexts, and its records."""

    val: FuncVal
    calls: Dict[Any, List[MeshCtx]] = field(default_factory=dict)  # caller key -> contexts
    call_args: Dict[Any, List[tuple]] = field(default_factory=dict)
    # each call's keyword arguments, parallel to call_args (None: a ``**kw`` hides them)
    call_kws: Dict[Any, List[Optional[dict]]] = field(default_factory=dict)
    # shardcheck specs: the defaults each caller had assumed when it called (its
    # arguments may rest on them)
    call_assumes: Dict[Any, List[Tuple[str, ...]]] = field(default_factory=dict)
    # caller key -> the call expressions that called it there (a finding inside it names
    # them: the calls that gave it the values the finding depends on)
    call_sites: Dict[Any, List[Any]] = field(default_factory=dict)
    analyzed_ctx: Optional[MeshCtx] = None
    analyzed_args: Optional[tuple] = None  # the common arguments it was analysed with
    analyzed_kws: Optional[dict] = None
    events: Optional[Events] = None
    analyses: int = 0
    # where its definition was evaluated: in an ``if`` branch known not to run there
    # (a lambda built under ``if mesh is not None:`` with ``mesh`` None), or elsewhere;
    # one only ever defined in dead branches proves nothing (Interpreter.prove)
    defined_dead: bool = False
    defined_live: bool = False


@dataclass(frozen=True, eq=False)
class Arg:
    """One argument at a call site: keyword (or None), ``*``/``**`` marker, value, node."""

    keyword: Optional[str]
    star: str
    value: Value
    node: Optional[cst.CSTNode]


class CallArgs:
    """A call's arguments, read the way Python binds them to parameters."""

    __slots__ = ("args", "pos", "kw")

    def __init__(self, args: List[Arg]):
        self.args = args
        self.pos: List[Value] = [a.value for a in args if a.keyword is None and not a.star]
        self.kw: Dict[str, Arg] = {a.keyword: a for a in args if a.keyword is not None}

    def get(self, i: Optional[int], name: str) -> Value:
        """The argument passed as parameter ``name`` at position ``i`` (None: keyword-only;
        UNKNOWN if absent)."""
        if name in self.kw:
            return self.kw[name].value
        return self.pos[i] if i is not None and i < len(self.pos) else UNKNOWN

    def given(self, i: int, name: str) -> bool:
        return name in self.kw or i < len(self.pos)

    def node(self, i: int, name: str) -> Optional[cst.CSTNode]:
        if name in self.kw:
            return self.kw[name].node
        positional = [a for a in self.args if a.keyword is None and not a.star]
        return positional[i].node if i < len(positional) else None

    def keyword(self, name: str) -> Optional[Value]:
        a = self.kw.get(name)
        return a.value if a is not None else None

    def kw_values(self) -> Dict[str, Value]:
        return {k: a.value for k, a in self.kw.items()}

    def known_keywords(self) -> Optional[Dict[str, Value]]:
        """The keyword arguments, or None where a ``**kw`` may pass more."""
        return None if any(a.star == "**" for a in self.args) else self.kw_values()

    @property
    def starred(self) -> bool:
        return any(a.star for a in self.args)


@dataclass(frozen=True, eq=False)
class LazyImport(Value):
    """``from module import name`` of a project module, read from ``module`` each time
    it is looked up (``Env.lookup``), not when the import runs: a package's ``__init__``
    re-exports every submodule, and a file that uses one of them reads that one only
    (and depends on that one only, for the cache); a checked ``__init__`` reads none of
    the modules whose names it only re-exports."""

    project: Any
    module: str
    name: str
    # the checked module's own imports are read once, at first use (its check alone sees
    # them); a module read through an import reads them at each use, so that each file
    # using the name records what it read (the cache's dependencies)
    once: bool = False
    read: list = field(default_factory=list)

    def value(self) -> Value:
        if self.read:
            return self.read[0]
        got = self.project.imported(self.module, self.name)
        if self.once:
            self.read.append(got)
        return got


@dataclass(frozen=True, eq=False)
class MeshContextVal(Value):
    """What ``jax.set_mesh(m)`` returns: usable in ``with`` or as a statement."""

    mesh: Value
    sets_now: bool = False  # jax.set_mesh: the call itself sets the mesh (0.10-0.12)


@dataclass(frozen=True, eq=False)
class ShardMapFactory(Value):
    """``jax.shard_map(mesh=..., in_specs=..., out_specs=...)`` without f: a decorator."""

    api: str
    kwargs: Tuple[Tuple[str, Value], ...]
    node: cst.CSTNode


@dataclass(frozen=True, eq=False)
class GradVal(Value):
    """``jax.grad(f)`` / ``jax.value_and_grad(f)``: gradients have their primals' types."""

    func: Value
    with_value: bool
    argnums: Optional[Arg] = None
    has_aux: Optional[Arg] = None


@dataclass(frozen=True, eq=False)
class SuperVal(Value):
    """``super()`` in a method of ``owner`` whose ``self`` is ``inst``: its methods are
    those of the classes after ``owner`` in the instance's lineage."""

    owner: Any  # the ClassVal whose body defines the method
    inst: Any  # the InstanceVal
