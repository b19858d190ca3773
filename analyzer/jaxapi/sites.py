"""Sharding sites, recorded as the interpreter evaluates them (``shardcheck specs``).

Each call that places or declares a sharding (``with_sharding_constraint``,
``device_put`` with a sharding, ``NamedSharding``, ``reshard``, ``shard_map``'s specs,
``jit``'s shardings, Flax logical constraints) is observed after its handler ran: the
values it was given are the analyzer's own resolution, read here leaf by leaf (a tree of
shardings is one site per leaf, with its path). What is not known gets a reason read
from the source the value came from.

Logical axis names: a handler that resolves them (Flax's ``with_logical_constraint``,
a project's declared wrapper) records its own site at its call, with the logical names
it resolved from::

    record_site(it, c.node, "logical constraint", spec, mesh, names_node, c.env,
                logical=("batch", "embed"))

and the generic observer below (``_logical``) then leaves that call alone; where no
handler resolved them, it records the names with the spec unknown.
"""

from __future__ import annotations

from typing import List, Optional, Tuple

import libcst as cst

from . import names as api
from ..events import MeshCtx, ShardingSite
from ..interp.state import Env
from ..values import (UNKNOWN, Const, DictVal, FuncVal, MeshVal, RuleTreeVal, ShardingVal,
                      SpecVal, TupleVal, Value)
from ..syntax import param_names, small_statements, subtree, target_names
from .literals import literal_item
from ..api import ApiCall, ApiContext, attribute_of, observes


# Flax's logical-axis APIs: canonical name -> (site kind, index and name of the argument
# holding the logical names)
LOGICAL_APIS = {
    "flax.linen.with_logical_constraint": ("logical constraint", 1, "logical_axis_resources"),
    "flax.linen.spmd.with_logical_constraint": ("logical constraint", 1, "logical_axis_resources"),
    "flax.linen.partitioning.with_sharding_constraint": ("logical constraint", 1,
                                                         "logical_axis_resources"),
    "flax.linen.with_logical_partitioning": ("logical partitioning", 1, "names"),
    # keyword-only ``axes=``: no position reaches it
    "flax.linen.partitioning.param_with_axes": ("logical partitioning", 99, "axes"),
    "flax.linen.partitioning.variable_with_axes": ("logical partitioning", 99, "axes"),
}


ONLY_NONE = ("every context in view passes None here (no sharding placed or declared); "
             "a caller not in view may pass one")


def record_site(it: ApiContext, node: cst.CSTNode, kind: str, value: Value,
                mesh: Optional[MeshVal], arg: Optional[cst.CSTNode], env: Env,
                path: str = "", logical: Optional[Tuple[Optional[str], ...]] = None) -> None:
    """Record the sites of ``value`` (a spec, a sharding, or a tree of them) placed at
    ``node``; ``mesh`` is the mesh a bare spec means there (None when unknown)."""
    if isinstance(value, DictVal):
        for k, v in value.items:
            record_site(it, node, kind, v, mesh, literal_item(arg, k), env, f"{path}[{k!r}]", logical)
        return
    if isinstance(value, TupleVal):
        for i, v in enumerate(value.items):
            record_site(it, node, kind, v, mesh, literal_item(arg, i), env, f"{path}[{i}]", logical)
        return
    if isinstance(value, RuleTreeVal):  # a leaf per rule: what each pattern's leaves get
        for pattern, v in value.rules:
            key = pattern if value.filters else repr(pattern)
            record_site(it, node, kind, v, mesh, None, env, f"{path}[matching {key}]", logical)
        return
    if isinstance(value, Const) and value.value is None:
        if arg is not None and not (isinstance(arg, cst.Name) and arg.value == "None"):
            # a name that holds None here: the site stays listed unless another context
            # resolves it (sitemap._merge drops this record where any other exists)
            it.record("sites", ShardingSite(node, kind, path, None, mesh, ONLY_NONE, logical))
            return
        return  # None: no sharding placed or declared there (the compiler's choice)
    if isinstance(value, ShardingVal):
        mesh = value.mesh if isinstance(value.mesh, MeshVal) else None
        spec_arg = _call_arg(value.node, 1, "spec")
        spec = value.spec
        if isinstance(spec, SpecVal) and known_spec(spec):
            it.record("sites", ShardingSite(node, kind, path, spec, mesh, None, logical))
            return
        why = unknown_reason(it, spec, spec_arg if spec_arg is not None else arg, env)
        it.record("sites", ShardingSite(node, kind, path, None, mesh, why, logical))
        return
    if isinstance(value, SpecVal) and known_spec(value):
        it.record("sites", ShardingSite(node, kind, path, value, mesh, None, logical))
        return
    it.record("sites", ShardingSite(node, kind, path, None, mesh,
                                    unknown_reason(it, value, arg, env), logical))


@attribute_of(RuleTreeVal)
def _rule_subtree(it: ApiContext, base: Value, attr: str, node: cst.CSTNode,
                  ctx: MeshCtx) -> Value:
    """``tree.params``: a subtree, whose leaves the same rules match (``re.search`` finds
    a pattern anywhere in a path, so a path without the ``params/`` prefix still matches)."""
    return base


def known_spec(spec: SpecVal) -> bool:
    """Every entry and every axis name of ``spec`` is known."""
    if not spec.complete:
        return False
    for e in spec.entries:
        if e is not None and not (isinstance(e, tuple) and all(isinstance(a, str) for a in e)):
            return False
    return all(isinstance(a, str) for a in spec.unreduced + spec.reduced)


def _call_arg(node: Optional[cst.CSTNode], i: int, name: str) -> Optional[cst.CSTNode]:
    """The argument written as parameter ``name`` (position ``i``) of call ``node``."""
    if not isinstance(node, cst.Call):
        return None
    positional = [a for a in node.args if a.keyword is None and not a.star]
    for a in node.args:
        if a.keyword is not None and a.keyword.value == name:
            return a.value
    return positional[i].value if i < len(positional) else None


def _code(node: cst.CSTNode) -> str:
    text = " ".join(cst.Module([]).code_for_node(node).split())
    return text if len(text) <= 60 else text[:57] + "..."


UNEXPLAINED = "not explained (the analysis was asked for findings only)"


def unknown_reason(it: ApiContext, value: Value, node: Optional[cst.CSTNode], env: Env) -> str:
    """Why ``value`` (written as ``node``) is not a known spec, in the source's terms
    (``UNEXPLAINED`` where no one reads it: ``check``)."""
    if not it.explain_sites:
        return UNEXPLAINED
    if isinstance(value, SpecVal):
        return _spec_reason(it, value, env)
    if value is not UNKNOWN and not isinstance(value, (ShardingVal, MeshVal)):
        return f"not a sharding or PartitionSpec the analyzer knows ({type(value).__name__})"
    if node is None:
        return "built where the analyzer cannot see (a tree of shardings it does not know)"
    if isinstance(node, cst.Call) and _is_spec_call(node) and node.args:
        return f"{_code(node)}: an entry is not a known axis name"
    if isinstance(node, cst.Name):
        return _name_reason(it, node.value, env)
    if isinstance(node, cst.Attribute):
        owner = _sharding_owner(node)
        if owner is not None:  # `jax.typeof(x).sharding.spec`: keep x's layout
            return (f"`{_code(node)}`: the sharding `{_code(owner)}` has when it runs, "
                    "which the analyzer does not know here")
        base = node.value
        if isinstance(base, cst.Name) and base.value in ("self", "cls"):
            return f"`{_code(node)}`: an attribute of the object, which the analyzer does not track"
        return f"`{_code(node)}`: an attribute the analyzer does not resolve (config or object)"
    if isinstance(node, cst.Subscript):
        return f"`{_code(node)}`: an element of a container the analyzer does not know"
    if isinstance(node, cst.Call):
        params = _current_params(it) if _written_here(it, node) else []
        for a in node.args:  # of a parameter: what the calls pass decides it
            if isinstance(a.value, cst.Name) and a.value.value in params:
                return (f"`{_code(node.func)}(...)` of {_name_reason(it, a.value.value, env)}")
        return f"`{_code(node.func)}(...)` returns a value the analyzer does not know"
    return f"`{_code(node)}` is not resolved"


def _sharding_owner(node: cst.Attribute) -> Optional[cst.BaseExpression]:
    """``x`` in ``jax.typeof(x).sharding.spec``, ``x.sharding.spec``, ``x.sharding``."""
    if node.attr.value == "spec" and isinstance(node.value, cst.Attribute):
        node = node.value
    if node.attr.value != "sharding":
        return None
    inner = node.value
    if isinstance(inner, cst.Call) and isinstance(inner.func, (cst.Name, cst.Attribute)) \
            and _code(inner.func).rsplit(".", 1)[-1] == "typeof" and inner.args:
        return inner.args[0].value
    return inner


def _current_params(it: ApiContext) -> List[str]:
    fn = it.current_function()
    params = getattr(fn.val.node, "params", None) if fn is not None else None
    return param_names(params) if params is not None else []


def _is_spec_call(node: cst.Call) -> bool:
    f = node.func
    name = f.attr.value if isinstance(f, cst.Attribute) else f.value if isinstance(f, cst.Name) else ""
    return name in ("P", "PartitionSpec", "PS", "Pspec")


def _spec_reason(it: ApiContext, spec: SpecVal, env: Env) -> str:
    if not spec.complete:
        return f"{spec.describe()}: entries spliced in with * are not known"
    if spec.built_at is not None and isinstance(spec.node, cst.Call):
        return (f"{spec.describe()}: built by `{_code(spec.node.func)}(...)` with an entry "
                "that is not a known axis name")
    written = spec.node.args if isinstance(spec.node, cst.Call) and spec.built_at is None else ()
    if written and spec.node is not None and not _written_here(it, spec.node):
        where = "a function it calls" if it.current_function() else "another module"
        return f"{spec.describe()}: an entry is not a known axis name (the spec is built in {where})"
    for i, e in enumerate(spec.entries):
        known = e is None or (isinstance(e, tuple) and all(isinstance(a, str) for a in e))
        if not known and i < len(written) and not written[i].star:
            entry = written[i].value
            why = unknown_reason(it, UNKNOWN, entry, env)
            return f"{spec.describe()}: entry `{_code(entry)}` is not a known axis name ({why})"
    return f"{spec.describe()}: an entry is not a known axis name"


# Flax's trees of a model's parameter specs: the spec of every leaf is the spec its
# parameter was declared with (nnx.with_partitioning, nnx.Param(sharding=...),
# nn.with_logical_partitioning), which the map lists at that declaration
_MODEL_TREES = ("get_partition_spec", "get_named_sharding", "logical_to_mesh_sharding",
                "logical_to_mesh")


def _written_here(it: ApiContext, node: cst.CSTNode) -> bool:
    """Whether ``node`` is written in the function (or module body) being analysed, so
    that its names mean what the environment there holds. Each body is walked once."""
    body = _body(it)
    return id(node) in it.memo(("nodes written in", body), lambda: _node_ids(body))


def _node_ids(body: cst.CSTNode) -> frozenset:
    return frozenset(id(n) for n in subtree(body))


def _name_reason(it: ApiContext, name: str, env: Env) -> str:
    if name in _current_params(it):
        info = it.current_function()
        assert info is not None  # name is one of its parameters
        fn = info.val.node
        label = fn.name.value if isinstance(fn, cst.FunctionDef) else "lambda"
        if any(info.call_args.values()):
            return (f"`{name}` is a parameter of `{label}`, whose calls pass different "
                    "or unknown values")
        return f"`{name}` is a parameter of `{label}`, which no call in view passes"
    scope: Optional[Env] = env
    while scope is not None:
        if name in scope.vars:
            return _assigned_reason(it, name)
        scope = scope.parent
    return f"`{name}` is not defined in the analyzed code"


def _assigned_reason(it: ApiContext, name: str) -> str:
    """Why the value bound to ``name`` is unknown: what its last assignment in the
    enclosing function (or module) is assigned from."""
    body = _body(it)
    finder = _last_assignment(body, name)
    value = finder.value
    if finder.count > 1:
        last = f"`{_code(value.func)}(...)`" if isinstance(value, cst.Call) else (
            f"`{_code(value)}`" if value is not None else "a value")
        return (f"`{name}` is assigned in {finder.count} places, which give different or "
                f"unknown values where the analyzer cannot tell which runs (the last: {last})")
    if isinstance(value, cst.Call):
        func = _code(value.func)
        if func.rsplit(".", 1)[-1] in _MODEL_TREES:
            return (f"`{name}` is assigned from `{func}(...)`: a tree with one spec per "
                    "parameter of a model, each listed at the parameter's own site")
        return (f"`{name}` is assigned from `{func}(...)`, whose result the "
                "analyzer does not know")
    if value is not None:
        return f"`{name}` is assigned `{_code(value)}`, which the analyzer does not resolve"
    return f"`{name}` holds a value the analyzer does not resolve"


# the nodes whose parts may be statements (a compound statement's test is not)
def _last_assignment(body: cst.CSTNode, name: str) -> "_LastAssignment":
    """The assignments of ``name`` in ``body``, read in order (the last one's value)."""
    finder = _LastAssignment(name)
    for stmt in small_statements(body):
        if isinstance(stmt, cst.Assign):
            finder.visit_Assign(stmt)
        elif isinstance(stmt, cst.AnnAssign):
            finder.visit_AnnAssign(stmt)
    return finder


class _LastAssignment:
    def __init__(self, name: str) -> None:
        self.name = name
        self.value: Optional[cst.BaseExpression] = None
        self.count = 0

    def visit_Assign(self, node: cst.Assign) -> None:
        if any(isinstance(t.target, cst.Name) and t.target.value == self.name for t in node.targets):
            self.value = node.value
            self.count += 1
        elif any(n.value == self.name for t in node.targets for n in target_names(t.target)):
            self.value = None  # `b, t = spec`: unpacked
            self.count += 1

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if isinstance(node.target, cst.Name) and node.target.value == self.name and node.value:
            self.value = node.value
            self.count += 1


def _context_mesh(it: ApiContext, ctx: MeshCtx) -> Optional[MeshVal]:
    return it.context_mesh(ctx)


def _arg(it: ApiContext, c: ApiCall, kind: str, i: int, name: str,
         mesh: Optional[MeshVal]) -> None:
    if c.args.given(i, name):
        record_site(it, c.node, kind, c.args.get(i, name), mesh, c.args.node(i, name), c.env)


@observes(api.WITH_SHARDING_CONSTRAINT)
def _constraint(it: ApiContext, c: ApiCall, out: Value) -> None:
    _arg(it, c, "with_sharding_constraint", 1, "shardings", _context_mesh(it, c.ctx))


@observes(api.RESHARD)
def _reshard(it: ApiContext, c: ApiCall, out: Value) -> None:
    _arg(it, c, "reshard", 1, "out_shardings", _context_mesh(it, c.ctx))


@observes(api.DEVICE_PUT)
def _device_put(it: ApiContext, c: ApiCall, out: Value) -> None:
    target = c.args.get(1, "device")
    if not c.args.given(1, "device") or (isinstance(target, Const) and target.value is None):
        return  # no placement named: the default device
    scope = None  # the map only: finding a name's assignment walks its function
    if it.assume_defaults:
        scope = _body(it)
    if is_device(c.args.node(1, "device"), scope):
        return
    _arg(it, c, "device_put", 1, "device", _context_mesh(it, c.ctx))


def is_device(node: Optional[cst.CSTNode], scope: Optional[cst.CSTNode] = None) -> bool:
    """``jax.devices()[0]``, ``jax.local_devices(backend="cpu")[i]``,
    ``SingleDeviceSharding(d)``: a device, not a sharding over a mesh. With ``scope``
    (the enclosing function or module), also a name (or a name's element: ``cpus[0]``)
    whose last assignment there is one (``cpu = jax.local_devices(backend="cpu")[0]``)."""
    if node is None:
        return False
    code = _code(node)
    if "devices(" in code or "SingleDeviceSharding" in code or code.startswith("device"):
        return True
    base = node.value if isinstance(node, cst.Subscript) else node
    if scope is None or not isinstance(base, cst.Name):
        return False
    finder = _last_assignment(scope, base.value)
    return finder.value is not None and is_device(finder.value)


@observes(api.NAMED_SHARDING)
def _named_sharding(it: ApiContext, c: ApiCall, out: Value) -> None:
    mesh = c.args.get(0, "mesh")
    if not isinstance(out, ShardingVal):
        # JAX raises on the mesh (a config's `mesh: Mesh | None = None` read as its
        # default by the map, before the run sets it): the spec written is the site's
        out = c.args.get(1, "spec")
    record_site(it, c.node, "NamedSharding", out, mesh if isinstance(mesh, MeshVal) else None,
                c.args.node(1, "spec"), c.env)


@observes(*api.SHARD_MAPS)
def _shard_map(it: ApiContext, c: ApiCall, out: Value) -> None:
    experimental = c.name == api.SHARD_MAP_EXPERIMENTAL
    mesh = c.args.get(1, "mesh") if experimental else c.args.keyword("mesh")
    if not isinstance(mesh, MeshVal):
        mesh = None if mesh is not None and mesh is not UNKNOWN else _context_mesh(it, c.ctx)
    for i, key in ((2, "in_specs"), (3, "out_specs")):
        i = i if experimental else len(c.args.args) + 1  # jax.shard_map's are keyword-only
        if c.args.given(i, key):
            record_site(it, c.node, f"shard_map {key}", c.args.get(i, key), mesh,
                        c.args.node(i, key), c.env)


# Flax's own wrappers of jit and shard_map take the same shardings and specs
FLAX_JITS = ("flax.nnx.jit",)
FLAX_SHARD_MAPS = ("flax.nnx.shard_map",)
# Flax's partitioning boxes that name mesh axes directly: name -> index of the names
# (NNX reads its ``sharding`` names as mesh axes unless sharding rules map them, so names
# that are not axes of the known mesh are taken as logical.)
MESH_AXIS_PARTITIONING = {"flax.linen.with_partitioning": (1, "names"),
                          "flax.core.meta.with_partitioning": (1, "names"),
                          "flax.nnx.with_partitioning": (1, "sharding"),
                          "flax.nnx.spmd.with_partitioning": (1, "sharding")}


@observes(*FLAX_SHARD_MAPS)
def _flax_shard_map(it: ApiContext, c: ApiCall, out: Value) -> None:
    mesh = c.args.keyword("mesh")
    mesh = mesh if isinstance(mesh, MeshVal) else None if mesh is not None else _context_mesh(it, c.ctx)
    for key in ("in_specs", "out_specs"):
        a = c.args.kw.get(key)
        if a is not None:
            record_site(it, c.node, f"shard_map {key}", a.value, mesh, a.node, c.env)


def _resolved(it: ApiContext, c: ApiCall, node: Optional[cst.CSTNode]) -> bool:
    """Record the site of ``c`` from the logical names the logical-axis model resolved
    there (``jaxapi.logical``'s ``LogicalResolution``); False when it resolved none."""
    from .logical import LogicalResolution, spec_entries
    facts = it.recorded("facts")
    if facts is None:
        return False
    for at in facts:
        if isinstance(at.fact, LogicalResolution) and at.node in (node, c.node):
            res = at.fact
            spec = SpecVal(spec_entries(res.entries), node=at.node)
            logical = tuple(n if isinstance(n, str) or n is None else None for n in res.names)
            kind = "logical constraint" if "constraint" in c.name else "logical partitioning"
            it.record("sites", ShardingSite(c.node, kind, "", spec, res.mesh, None, logical))
            return True
    return False


@observes(*api.NNX_VARIABLES)
def _nnx_variable(it: ApiContext, c: ApiCall, out: Value) -> None:
    """An NNX variable declared with sharding metadata is a site, as
    ``nnx.with_partitioning`` is."""
    for key in api.NNX_SHARDING_KEYS:
        a = c.args.kw.get(key)
        if a is not None:
            _partition_site(it, c, a.value, a.node)
            return


@observes(*MESH_AXIS_PARTITIONING)
def _partitioning(it: ApiContext, c: ApiCall, out: Value) -> None:
    i, name = MESH_AXIS_PARTITIONING[c.name]
    _partition_site(it, c, c.args.get(i, name), c.args.node(i, name))


def _partition_site(it: ApiContext, c: ApiCall, names: Value, node: Optional[cst.CSTNode]) -> None:
    if _resolved(it, c, node):
        return
    spec, mesh = _names_spec(names, node), _context_mesh(it, c.ctx)
    if spec is not None and mesh is not None and mesh.names is not None and c.name.startswith(
            "flax.nnx") and any(a not in mesh.names for a in spec.axis_names()):
        it.record("sites", ShardingSite(c.node, "logical partitioning", "", None, mesh,
                                        f"{spec.describe()} names axes the mesh lacks: logical "
                                        "names with no sharding rules in view", _logical_names(names)))
        return
    record_site(it, c.node, "partitioning", spec if spec is not None else names, mesh, node, c.env)


def _names_spec(v: Value, node: Optional[cst.CSTNode]) -> Optional[SpecVal]:
    """``('embed', None, ('x', 'y'))`` as the PartitionSpec Flax makes of it."""
    if not isinstance(v, TupleVal):
        return None
    from .specs import spec_entry
    return SpecVal(tuple(spec_entry(i) for i in v.items), node=node)


@observes(*api.JITS, *FLAX_JITS)
def _jit(it: ApiContext, c: ApiCall, out: Value) -> None:
    for key in ("in_shardings", "out_shardings"):
        a = c.args.kw.get(key)
        if a is not None and not (isinstance(a.value, Const) and a.value.value is None):
            record_site(it, c.node, f"jit {key}", a.value, _context_mesh(it, c.ctx), a.node, c.env)


@observes(*LOGICAL_APIS)
def _logical(it: ApiContext, c: ApiCall, out: Value) -> None:
    kind, i, name = LOGICAL_APIS[c.name]
    sites = it.recorded("sites")
    if sites is None or any(s.node is c.node for s in sites):
        return  # a handler that resolves the logical names recorded the site itself
    if _resolved(it, c, c.args.node(i, name)):
        return
    names = c.args.get(i, name)
    logical = _logical_names(names)
    if logical is None:  # a tuple the calls fill differently reads as its source says
        why = unknown_reason(it, UNKNOWN if isinstance(names, TupleVal) else names,
                             c.args.node(i, name), c.env)
        why = f"logical names unknown: {why}"
    else:
        why = "logical axis names: no logical axis rules in view resolve them to mesh axes"
    it.record("sites", ShardingSite(c.node, kind, "", None, None, why, logical))


def _logical_names(v: Value) -> Optional[Tuple[Optional[str], ...]]:
    if isinstance(v, SpecVal):  # nnx.with_partitioning(init, P('embed', 'mlp'))
        if not known_spec(v):
            return None
        return tuple(None if e is None else e[0] if len(e) == 1 else None for e in v.entries)
    if not isinstance(v, TupleVal):
        return None
    out: List[Optional[str]] = []
    for item in v.items:
        if not isinstance(item, Const) or not (item.value is None or isinstance(item.value, str)):
            return None
        out.append(item.value)
    return tuple(out)


@observes("jax.tree.map", "jax.tree_util.tree_map")
def _tree_map(it: ApiContext, c: ApiCall, out: Value) -> None:
    """``jax.tree.map(lambda s: NamedSharding(mesh, s), specs)``: the NamedSharding in the
    function is one site per leaf of the tree it makes (its analysis on its own, with
    the leaf unknown, says nothing more; the map drops it)."""
    if not c.args.pos or not isinstance(out, (DictVal, TupleVal)):
        return
    f = c.args.pos[0]
    inside: set = {c.node}
    if isinstance(f, FuncVal):
        collect = _Nodes()
        f.node.visit(collect)
        inside |= collect.nodes
    for path, leaf in _leaves(out, ""):
        if isinstance(leaf, ShardingVal) and leaf.node is not None and leaf.node in inside:
            record_site(it, leaf.node, "NamedSharding", leaf, None, None, c.env, path)


def _leaves(v: Value, path: str) -> List[Tuple[str, Value]]:
    if isinstance(v, DictVal):
        return [x for k, i in v.items for x in _leaves(i, f"{path}[{k!r}]")]
    if isinstance(v, TupleVal):
        return [x for n, i in enumerate(v.items) for x in _leaves(i, f"{path}[{n}]")]
    return [(path, v)]


class _Nodes(cst.CSTVisitor):
    def __init__(self) -> None:
        self.nodes: set = set()

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.nodes.add(node)
        return True


def _body(it: ApiContext) -> cst.CSTNode:
    """The function (or the module) whose body is being analysed."""
    fn = it.current_function()
    return fn.val.node if fn is not None else it.module
