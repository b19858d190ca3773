from typing import Dict, Optional, Set

import libcst as cst

from ..compat import FLAX_REMOVED, MESH_ENTER, PROFILES, FlaxRemoval, JaxProfile
from ..codemods import rewrite
from ..compat.names import HISTORY
from ..ftypes import ERROR, WARNING, Invalid, Valid
from ..jaxapi.names import JITS
from ..rule import ShardRule
from ..syntax import dotted


def _status(profile: JaxProfile, name: str) -> str:
    dep = HISTORY[name]
    status = profile.status(name)
    if status == "removed":
        return f"removed in {dep.removed_in}" if dep.removed_in else "removed"
    if status == "deprecated":
        return f"deprecated in {dep.deprecated_in}" if dep.deprecated_in else "deprecated"
    return "current"


def deprecation_table() -> str:
    """The deprecated and removed APIs by JAX version, from the version profiles."""
    heads = ["API"] + [f"JAX {p.version}" for p in PROFILES] + ["use instead"]
    rows = [heads, ["---"] * len(heads)]
    for name, dep in HISTORY.items():
        api = "with mesh: (a Mesh as context manager)" if name == MESH_ENTER else name
        rows.append([f"`{api}`"] + [_status(p, name) for p in PROFILES]
                    + [f"`{dep.replacement}`"])
    rows.append(["`shard_map(..., check_rep=)`"]
                + [p.errors["shard_map.check_rep"].exception for p in PROFILES] + ["`check_vma=`"])
    return "\n".join("| " + " | ".join(r) + " |" for r in rows)


def flax_table() -> str:
    """Flax's removed sharding helpers (``compat.FLAX_REMOVED``)."""
    rows = ["| Flax API | gone since Flax | use instead |", "|---|---|---|"]
    for name, gone in FLAX_REMOVED.items():
        rows.append(f"| `{name}` | {gone.removed_in} | "
                    f"{f'`{gone.replacement}`' if gone.replacement else '(none)'} |")
    return "\n".join(rows)


# the release jax.shard_map replaced jax.experimental.shard_map (check_rep -> check_vma)
_MOVED_IN = HISTORY["jax.experimental.shard_map.shard_map"].deprecated_in


class DeprecatedApi(ShardRule):
    """
    ## What it does
    Flags sharding APIs that JAX has deprecated or removed, and names the replacement.
    Removed APIs are errors (the code fails on that JAX); deprecated ones that still
    work, with a `DeprecationWarning`, are warnings. Which JAX: the version profile
    `jax-version` in `[tool.shardcheck]` selects (JAX 0.10 when not set).

    {DEPRECATION_TABLE}

    It also flags `jax.shard_map(f, mesh, in_specs, out_specs)`: the positional order of
    the old `jax.experimental.shard_map.shard_map`. `jax.shard_map` takes only the
    function positionally; JAX raises `TypeError: shard_map() takes from 0 to 1
    positional arguments but 4 were given` (the fix passes them as keywords). Likewise
    `jax.jit(f, in_shardings, out_shardings)` (keyword-only since JAX 0.7: `jit() takes
    from 0 to 1 positional arguments`), and removed keyword arguments: pjit's and jit's
    `in_axis_resources=`/`out_axis_resources=` (deleted in JAX 0.4.14; now
    `in_shardings=`/`out_shardings=`) and `with_sharding_constraint`'s
    `axis_resources=` (now `shardings=`), and array serialization's
    `async_deserialize(in_sharding=...)` (`in_type=` since JAX 0.6.1, which checkpoint
    helpers written for older JAX still pass); JAX raises `TypeError: ... got an
    unexpected keyword argument`, and the fix renames them.

    A removed API used only where the code first asks for it (`if hasattr(jax.sharding,
    "use_mesh"):`, a version check, `try: ... except ImportError:`) is not reported.

    Flax's sharding helpers that later Flax releases removed are warnings: which Flax a
    project installs is not known. Every release from the one named on raises
    `ImportError` or `AttributeError` there, as flax 0.12.8 and 0.12.12 do; and the last
    release that had `nnx.with_sharding_constraint`, flax 0.11.1, cannot import
    `flax.nnx` at all under JAX 0.10.2 (`cannot import name 'mutable_array'`).

    {FLAX_TABLE}

    ## Why is this bad?
    Removed APIs raise `AttributeError`, `ImportError` or `TypeError` on current JAX
    (`from jax.sharding import PositionalSharding`, `jax.sharding.use_mesh`,
    `import jax.experimental.maps`, `from jax.experimental.pjit import
    with_sharding_constraint`); deprecated ones warn now and will fail
    (`from jax.experimental.pjit import pjit`, `with mesh:`). Their replacements also
    differ in behaviour: `jax.shard_map` takes `mesh=` as a keyword and checks varying
    axes (`check_vma=True`) by default; `with jax.set_mesh(mesh):` sets the mesh for
    explicit sharding too, where `with mesh:` set it only for Auto (pjit-style) sharding.

    ## Example
    ```python
    from jax.experimental.shard_map import shard_map
    y = shard_map(f, mesh, in_specs=P("data"), out_specs=P("data"), check_rep=False)(x)
    ```

    Use instead:
    ```python
    y = jax.shard_map(f, mesh=mesh, in_specs=P("data"), out_specs=P("data"), check_vma=False)(x)
    ```

    ## Fix safety
    `--fix` rewrites `jax.shard_map`'s positional mesh/specs as keywords, `check_rep=` as
    `check_vma=` and `jax.sharding.use_mesh` as `jax.set_mesh` (safe), and `with mesh:`
    as `with jax.set_mesh(mesh):`: safe on a mesh whose axes are all Auto, unsafe
    otherwise, because on Explicit axes `set_mesh` also turns on explicit sharding
    (`with_sharding_constraint` becomes an assert; checked on JAX 0.10.2).

    It also moves the imports, rewriting every use of the name in the same fix:
    - `from jax.experimental.shard_map import shard_map`: each `shard_map(f, mesh,
      in_specs, out_specs, check_rep=...)` becomes `jax.shard_map(f, mesh=mesh,
      in_specs=..., out_specs=..., check_vma=...)`, and `partial(shard_map, ...)` becomes
      `partial(jax.shard_map, ...)`. This is safe: on JAX 0.10.2 the old function calls
      the new one with `check_vma=check_rep` and the same (empty) `axis_names`.
    - `from jax.experimental.pjit import pjit`: calls, `partial(pjit, ...)` and `@pjit`
      become `jax.jit`, with positional shardings passed as keywords and
      `in_axis_resources`/`out_axis_resources` renamed `in_shardings`/`out_shardings`.
      This is safe where every sharding passed is `None` or a `NamedSharding(...)` written
      out (also in a tuple, list or dict): with those, pjit and `jax.jit` agree in all 18
      cases tried on JAX 0.10.2. Otherwise it is unsafe. pjit resolves PartitionSpecs
      against `with mesh:` and moves its arguments to them. `jax.jit` reads a
      PartitionSpec only under `jax.set_mesh`, and there it raises where an argument
      already on the mesh differs. Both were checked on JAX 0.10.2.
    - The import line is dropped, or becomes `import jax` where the module lacks one.

    A name that is rebound, passed as a value, starred into, or imported inside a block
    gets no fix.
    """

    CODE = "SC401"
    NAME = "deprecated-api"
    SEVERITY = ERROR
    JAX_FACTS = ("shard_map.check_rep", "shard_map.positional_mesh", "jit.removed_keyword",
                 "jit.positional_arguments")
    VALID = [Valid("""import jax
import jax.numpy as jnp
import flax.linen as nn
from flax.linen.spmd import get_logical_axis_rules
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((8,), ("data",), axis_types=(jax.sharding.AxisType.Auto,))
rows = NamedSharding(mesh, P("data"))
y = jax.jit(lambda a: jax.lax.with_sharding_constraint(a, rows))(jnp.ones((8, 4)))
with nn.logical_axis_rules([("batch", "data")]):
    rules = get_logical_axis_rules()
"""), Valid("""import jax
import jax.numpy as jnp
from jax import P
mesh = jax.make_mesh((2, 4), ("data", "model"))
with jax.set_mesh(mesh):
    x = jax.device_put(jnp.ones((8,)), P("data"))
    body = lambda b: jax.lax.psum(jax.lax.pcast(b, "model", to="varying"), "model")
    y = jax.shard_map(body, in_specs=P("data"), out_specs=P("data"), check_vma=True)(x)
"""), Valid("""import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((8,), ("data",))
f = jax.jit(lambda a: a * 2, in_shardings=NamedSharding(mesh, P("data")))
y = f(jnp.ones((8,)))
with jax.set_mesh(mesh):
    z = jax.shard_map(lambda b: b, mesh=mesh, in_specs=P("data"), out_specs=P("data"))(y)
"""), Valid("""import jax
try:
    from jax.sharding import PositionalSharding
except ImportError:
    PositionalSharding = None
set_mesh = jax.sharding.use_mesh if hasattr(jax.sharding, "use_mesh") else jax.set_mesh
with set_mesh(jax.make_mesh((8,), ("data",))):
    pass
""")]
    INVALID = [
        Invalid("""import jax
import jax.numpy as jnp
from jax.experimental.shard_map import shard_map
from jax.sharding import PartitionSpec as P
mesh = jax.make_mesh((2, 4), ("data", "model"))
x = jax.device_put(jnp.ones((8,)), jax.NamedSharding(mesh, P("data")))
y = shard_map(lambda b: b, mesh, in_specs=P("data"), out_specs=P("data"))(x)
""", line=3, message="jax.shard_map", jax_outcome="deprecation"),
        Invalid("""import jax
import jax.numpy as jnp
from jax import P
mesh = jax.make_mesh((2, 4), ("data", "model"))
with jax.set_mesh(mesh):
    x = jax.device_put(jnp.ones((8,)), P("data"))
    y = jax.shard_map(lambda b: b, in_specs=P("data"), out_specs=P("data"), check_rep=False)(x)
""", line=7, message="check_vma", jax_error="check_rep"),
        Invalid("""import jax
import jax.numpy as jnp
from jax import P
mesh = jax.make_mesh((2, 4), ("data", "model"))
with jax.set_mesh(mesh):
    x = jax.device_put(jnp.ones((8,)), P("data"))
    y = jax.shard_map(lambda b: jax.lax.pvary(b, "model"), in_specs=P("data"), out_specs=P("data"))(x)
""", line=7, message="pcast", jax_error="pvary"),
        Invalid("""import jax
import jax.numpy as jnp
mesh = jax.sharding.Mesh(jax.devices(), ("data",))
with mesh:
    y = jnp.ones((8,)) * 2
""", line=4, message="jax.set_mesh", jax_outcome="deprecation"),
        Invalid("""import jax
import jax.numpy as jnp
from jax import P
mesh = jax.make_mesh((8,), ("data",))
x = jax.device_put(jnp.ones((8,)), jax.NamedSharding(mesh, P("data")))
y = jax.shard_map(lambda b: b * 2, mesh, P("data"), P("data"))(x)
""", line=6, message="keyword-only", jax_error="takes from 0 to 1 positional arguments"),
        Invalid("""import jax
import jax.numpy as jnp
from jax.experimental.pjit import pjit
y = pjit(lambda a: a * 2)(jnp.ones((8,)))
""", line=3, message="jax.jit", jax_outcome="deprecation"),
        Invalid("""import jax
mesh = jax.make_mesh((8,), ("data",))
with jax.sharding.use_mesh(mesh):
    pass
""", line=3, message="jax.set_mesh(mesh)", jax_error="has no attribute 'use_mesh'"),
        Invalid("""import jax
from jax.sharding import PositionalSharding
s = PositionalSharding(jax.devices()).reshape(8, 1)
""", line=2, message="NamedSharding", jax_error="cannot import name 'PositionalSharding'"),
        Invalid("""from jax.experimental import maps
mesh = maps.Mesh(None, ("data",))
""", line=1, message="jax.shard_map", jax_error="cannot import name 'maps'"),
        Invalid("""import jax
from jax.experimental.gda_serialization import serialization
""", line=2, message="jax.experimental.array_serialization",
            jax_error="No module named 'jax.experimental.gda_serialization'"),
        Invalid("""import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
from jax.experimental.array_serialization import serialization
mesh = jax.make_mesh((2, 4), ("data", "model"))
spec = serialization.get_tensorstore_spec("/tmp/checkpoint/w")
restore = serialization.async_deserialize(
    in_sharding=NamedSharding(mesh, P("data")), tensorstore_spec=spec, global_shape=(8, 16),
    dtype=jnp.float32)
""", line=8, message="in_type=", jax_error="unexpected keyword argument 'in_sharding'"),
        Invalid("""import jax
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((8,), ("data",))
rows = NamedSharding(mesh, P("data"))
step = jax.jit(lambda a: a * 2, in_axis_resources=rows, out_axis_resources=rows)
""", line=5, message="in_shardings=", jax_error="unexpected keyword argument 'in_axis_resources'"),
        Invalid("""import jax
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((8,), ("data",))
rows = NamedSharding(mesh, P("data"))
step = jax.jit(lambda a: a * 2, rows, rows)
""", line=5, message="keyword-only", jax_error="takes from 0 to 1 positional arguments"),
        Invalid("""import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((8,), ("data",), axis_types=(jax.sharding.AxisType.Auto,))
rows = NamedSharding(mesh, P("data"))
y = jax.jit(lambda a: jax.lax.with_sharding_constraint(a, axis_resources=rows))(jnp.ones((8,)))
""", line=6, message="shardings=", jax_error="unexpected keyword argument 'axis_resources'"),
        Invalid("""import jax
import jax.numpy as jnp
from flax import nnx
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((8,), ("data",), axis_types=(jax.sharding.AxisType.Auto,))
rows = NamedSharding(mesh, P("data"))
y = jax.jit(lambda a: nnx.with_sharding_constraint(a, rows))(jnp.ones((8, 4)))
""", line=7, message="Flax 0.11.2", jax_error="has no attribute 'with_sharding_constraint'"),
        Invalid("""import flax.linen as nn
from flax.linen.spmd import logical_axis_rules
""", line=2, message="flax.linen.logical_axis_rules",
            jax_error="cannot import name 'logical_axis_rules'"),
    ]

    def check(self, ctx):
        # `jax.experimental.maps.xmap` is one use, not also one of `jax.experimental.maps`
        inner = {id(u.node.value) for u in ctx.events.api_uses if isinstance(u.node, cst.Attribute)}
        guarded = _Guards(ctx)
        for use in ctx.events.api_uses:
            if id(use.node) in inner:
                continue
            if use.kind == "positional":
                yield self._positional_jit(use) if use.api in JITS else self._positional(use)
                continue
            if use.kind == "keyword":
                if use.detail in _RENAMED_KEYWORDS:
                    new, when = _RENAMED_KEYWORDS[use.detail]
                    fn = "with_sharding_constraint" if use.detail == "axis_resources" else \
                        use.api.rsplit(".", 1)[-1]
                    api = "jax.jit" if use.api == "jax.jit" else fn
                    yield self.report(
                        use.node, f"`{api}` has no `{use.detail}` argument: it was renamed "
                        f"`{new}` ({when}). JAX raises TypeError (\"{fn}() got an unexpected "
                        f"keyword argument '{use.detail}'\"). Use {new}=.", ERROR,
                        # pjit's own fix (pjit -> jax.jit, codemods.py) renames them too
                        fix_content=new if use.keyword is not None and fn != "pjit" else None,
                        fix_node=use.keyword, fix_message=f"Rename {use.detail}= to {new}=")
                elif use.detail == "check_rep":
                    yield self.report(
                        use.node, "`jax.shard_map` has no `check_rep` argument (it was renamed "
                        f"`check_vma` when shard_map moved out of jax.experimental in JAX {_MOVED_IN}): "
                        "JAX raises TypeError. Use check_vma=.", ERROR,
                        fix_content="check_vma" if use.keyword is not None else None,
                        fix_node=use.keyword, fix_message="Rename check_rep= to check_vma=")
                else:
                    yield self.report(
                        use.node, "`jax.experimental.shard_map.shard_map` takes `check_rep`, not "
                        "`check_vma`: JAX raises TypeError. Better, move to `jax.shard_map`, which "
                        "takes check_vma=.", ERROR)
                continue
            flax = FLAX_REMOVED.get(use.api)
            if flax is not None:
                if not guarded(use.node):
                    yield self._flax(use, flax)
                continue
            dep = ctx.profile.deprecation(use.api)
            if dep is None:
                continue
            removed = ctx.profile.status(use.api) == "removed"
            if removed:
                if guarded(use.node):  # `if hasattr(jax.sharding, "use_mesh"):`, ...
                    continue
            shown = "with mesh:" if use.api == MESH_ENTER else (use.detail or use.api)
            status = (f"and fails on JAX {ctx.profile.release}" if removed else
                      f"and still works in JAX {ctx.profile.release} with a DeprecationWarning")
            content, how = _replacement(use, ctx.model.module)
            # on a mesh with Explicit (or unknown) axes, set_mesh also turns on explicit
            # sharding, which `with mesh:` did not: the fix may change what the code does
            unsafe = use.api == MESH_ENTER and use.detail != "auto"
            fix_node, more = None, []
            if use.kind == "import" and isinstance(use.node, cst.ImportAlias):
                moved = rewrite(ctx.model.module, use.node, use.api, _jax_alias(ctx.model.module))
                if moved is not None:
                    fix_node, content, more = moved.statement, moved.replacement, moved.edits
                    how, unsafe = moved.message, moved.unsafe
            yield self.report(use.node, f"`{shown}`: {dep.note} ({status}). Use "
                              f"`{dep.replacement}` instead.", ERROR if removed else WARNING,
                              fix_content=content, fix_message=how, fix_unsafe=unsafe,
                              fix_node=fix_node, fix_more=more)

    def _flax(self, use, flax: FlaxRemoval):
        instead = f"Use `{flax.replacement}` instead." if flax.replacement else \
            "Flax has no replacement: drop the use."
        return self.report(
            use.node, f"`{use.detail or use.api}`: {flax.note}. Flax {flax.removed_in} and "
            f"later raise ImportError or AttributeError here. {instead}", WARNING)

    def _positional(self, use):
        fixed = _keyword_call(use.node)
        return self.report(
            use.node, f"`jax.shard_map` is called with {use.detail} positional arguments, in the "
            "order of the old `jax.experimental.shard_map.shard_map(f, mesh, in_specs, "
            "out_specs)`; `jax.shard_map` takes only the function positionally (mesh=, in_specs= "
            "and out_specs= are keyword-only). JAX raises TypeError (\"shard_map() takes from 0 "
            "to 1 positional arguments\"). Pass them as keywords: `jax.shard_map(f, mesh=mesh, "
            "in_specs=..., out_specs=...)`.", ERROR, fix_content=fixed,
            fix_message="Pass mesh, in_specs and out_specs as keywords")

    def _positional_jit(self, use):
        fixed = _keyword_call(use.node, _JIT_ORDER)
        return self.report(
            use.node, f"`jax.jit` is called with {use.detail} positional arguments: since JAX 0.7 "
            "it takes only the function positionally (in_shardings=, out_shardings=, "
            "static_argnums=, ... are keyword-only). JAX raises TypeError (\"jit() takes from 0 "
            "to 1 positional arguments\"). Pass them as keywords.", ERROR, fix_content=fixed,
            fix_message="Pass jit's options as keywords")

    @classmethod
    def docs(cls) -> str:
        return super().docs().replace("{DEPRECATION_TABLE}", deprecation_table()).replace(
            "{FLAX_TABLE}", flax_table())


def _jax_alias(module: cst.Module) -> Optional[str]:
    """The name ``jax`` is bound to by a top-level ``import jax [as j]``, if any."""
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Import):
                    for alias in small.names:
                        if isinstance(alias.name, cst.Name) and alias.name.value == "jax":
                            asname = alias.asname
                            if asname is None:
                                return "jax"
                            if isinstance(asname.name, cst.Name):
                                return asname.name.value
    return None


def _replacement(use, module: cst.Module):
    """(the text that replaces ``use.node``, what the fix does) for the mechanical
    rewrites (``with mesh:``, ``jax.sharding.use_mesh``); (None, "") otherwise."""
    alias = _jax_alias(module)
    if alias is None:
        return None, ""
    if use.api == MESH_ENTER and isinstance(use.node, (cst.Name, cst.Attribute, cst.Call)):
        code = cst.Module([]).code_for_node(use.node)
        return f"{alias}.set_mesh({code})", "Enter the mesh with jax.set_mesh(mesh)"
    if use.api == "jax.sharding.use_mesh" and dotted(use.node) == f"{alias}.sharding.use_mesh":
        return f"{alias}.set_mesh", "Use jax.set_mesh"
    return None, ""


_OLD_ORDER = ("mesh", "in_specs", "out_specs")
# jax.jit's parameters after the function, in the order they could once be passed
_JIT_ORDER = ("in_shardings", "out_shardings", "static_argnums", "static_argnames",
              "donate_argnums")
# removed keyword arguments -> (their name today, when they changed)
_RENAMED_KEYWORDS = {
    "in_axis_resources": ("in_shardings", "JAX 0.4.14 deleted the old name"),
    "out_axis_resources": ("out_shardings", "JAX 0.4.14 deleted the old name"),
    "axis_resources": ("shardings", "deprecated in February 2023, since removed"),
    "in_sharding": ("in_type", "JAX 0.6.1 renamed it"),  # array serialization's deserialize
}


def _keyword_call(node, order=_OLD_ORDER):
    """``jax.shard_map(f, mesh, a, b)`` (``jax.jit(f, s, s)``) with the old positional
    order as keywords."""
    if not isinstance(node, cst.Call):
        return None
    positional = [a for a in node.args if a.keyword is None]
    if any(a.star for a in node.args) or not 2 <= len(positional) <= 1 + len(order) \
            or node.args[:len(positional)] != tuple(positional):
        return None
    given = {a.keyword.value for a in node.args if a.keyword is not None}
    names = order[:len(positional) - 1]
    if given & set(names):
        return None
    equal = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                            whitespace_after=cst.SimpleWhitespace(""))
    args = [positional[0]] + [a.with_changes(keyword=cst.Name(k), equal=equal)
                              for k, a in zip(names, positional[1:])]
    args += list(node.args[len(positional):])
    return cst.Module([]).code_for_node(node.with_changes(args=args))


_GUARD_EXCEPTIONS = ("ImportError", "ModuleNotFoundError", "AttributeError", "Exception")


class _Guards:
    """Whether a node runs only where an API exists (``_guarded``), in the checked
    module or in the module it was read from (a function of another module the checked
    file calls: its ``try: ... except AttributeError:`` is that module's; that module
    alone is walked, found from the function holding the node)."""

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self._guards: Dict[int, Set[int]] = {}

    def __call__(self, node: cst.CSTNode) -> bool:
        own = self.ctx.model.module
        if id(node) in self._of(own):
            return True
        project = getattr(self.ctx.model, "project", None)
        calls = self.ctx.call_sites
        if project is None or calls is None:
            return False
        read = project.parsed.get(calls.module_of(node, project) or "")
        return read is not None and read[1] is not own and id(node) in self._of(read[1])

    def _of(self, module: cst.Module) -> Set[int]:
        if id(module) not in self._guards:
            self._guards[id(module)] = _guarded(module)
        return self._guards[id(module)]


def _guarded(module: cst.Module) -> Set[int]:
    """The nodes of code that runs only where an API exists: under an ``if`` that asks
    (``hasattr``, a version) or in a ``try`` that catches its absence."""
    found: Set[int] = set()

    class Collect(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            found.add(id(node))
            return True

    class Guards(cst.CSTVisitor):
        def visit_If(self, node: cst.If) -> None:
            test = module.code_for_node(node.test)
            if "hasattr(" in test or "version" in test:
                node.body.visit(Collect())
                if node.orelse is not None:
                    node.orelse.visit(Collect())

        def visit_IfExp(self, node: cst.IfExp) -> None:
            test = module.code_for_node(node.test)
            if "hasattr(" in test or "version" in test:
                node.body.visit(Collect())
                node.orelse.visit(Collect())

        def visit_Try(self, node: cst.Try) -> None:
            for h in node.handlers:
                caught = module.code_for_node(h.type) if h.type is not None else "Exception"
                if any(e in caught for e in _GUARD_EXCEPTIONS):
                    node.body.visit(Collect())
                    return
    module.visit(Guards())
    return found
