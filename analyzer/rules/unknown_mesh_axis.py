from typing import List, Optional, Tuple

import libcst as cst

from ..ftypes import Invalid, Valid
from ..rule import ShardRule, axes_str, did_you_mean


class UnknownMeshAxis(ShardRule):
    """
    ## What it does
    Flags a `PartitionSpec` that names an axis the mesh it is used with does not have.

    ## Why is this bad?
    JAX raises `ValueError: Resource axis: batch of P('batch', None) is not found in
    mesh` when the sharding is built (`NamedSharding`, `device_put`, `jax.jit`
    shardings, `reshard`) and a `ValueError` from `shard_map` for its specs, but only
    when the code first runs on the cluster. Usually the axis name is a typo, or the spec
    was written for another mesh.

    The mesh is the one named in the call (`NamedSharding(mesh, ...)`,
    `shard_map(mesh=...)`) or the mesh set around it (`with jax.set_mesh(mesh):`, also
    through the functions called there), or `default-mesh` from `[tool.shardcheck]`.
    In a method, `self.mesh` is the mesh the class's `__init__` (or `__post_init__`,
    unittest's `setUp`, Linen's `setup`) stores, where no other statement of the module
    assigns a `.mesh` and the class's bases are library classes (`unittest.TestCase`),
    none of the project's.
    Flax logical names (`nn.with_logical_constraint`, `nn.logical_to_mesh_axes`,
    `nnx.with_partitioning`, ...) are checked after resolution through the rules in force.
    Where no mesh is in view, they are checked against the mesh axes the project declares:
    `mesh_axes` beside a YAML/JSON rule table, or `mesh-axes` in
    `[tool.shardcheck.logical]`. Flax skips a logical constraint when no mesh is set, so
    such code fails only when it runs on that mesh. Checked on flax 0.12.8 / JAX 0.10.2.
    An NNX name that no rule maps is passed to JAX as a mesh axis name; against a rule
    table that discovery found (rather than one the project names with `file` or `rules`)
    it is not flagged here, since the project may run that model with another of its
    configs, one that maps the name (`logical-name-without-rule` warns of it instead).
    A table of specs (`SPECS[name]`, `LAYOUT[i]`) used with a key the analyzer cannot
    resolve, such as a loop variable, has each of its entries checked, and the finding
    points at the entry.

    ## Example
    ```python
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    x = jax.device_put(jnp.zeros((8, 16)), NamedSharding(mesh, P("batch", None)))
    ```

    Use instead:
    ```python
    x = jax.device_put(jnp.zeros((8, 16)), NamedSharding(mesh, P("data", None)))
    ```

    ## Fix safety
    When exactly one mesh axis is one edit away from the misspelt name (`'dta'` for
    `'data'`), `--fix --unsafe-fixes` replaces the string. It is unsafe: the value may
    belong on another mesh that has the name.
    """

    CODE = "SC101"
    NAME = "unknown-mesh-axis"
    JAX_FACTS = ("mesh.axis_not_found", "shard_map.spec_axis_not_manual")
    VALID = [
        Valid("""import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ("data", "model"))
x = jax.device_put(jnp.zeros((8, 16)), NamedSharding(mesh, P("data", "model")))
y = jax.device_put(jnp.zeros((8, 16)), NamedSharding(mesh, P(mesh.axis_names[0], None)))
"""),
        Valid("""import jax
import jax.numpy as jnp
from jax import P

def scale(x):
    return jax.shard_map(lambda b: b * 2, in_specs=P("data", None), out_specs=P("data", None))(x)

mesh = jax.make_mesh((2, 4), ("data", "model"))
with jax.set_mesh(mesh):
    x = jax.device_put(jnp.zeros((8, 16)), P("data", None))
    y = jax.jit(scale)(x)
"""),
        Valid("""import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))
SPECS = {"w": P("model", None), "b": P("model")}


def place(params):
    out = {}
    for name, value in params.items():
        out[name] = jax.device_put(value, NamedSharding(mesh, SPECS[name]))
    return out


placed = place({"w": jnp.zeros((16, 8)), "b": jnp.zeros((8,))})
"""),
        Valid("""import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))
LAYOUT = [P("data", None), P(None, "model"), P("data", "model")]


def place(arrays):
    return [jax.device_put(a, NamedSharding(mesh, LAYOUT[i])) for i, a in enumerate(arrays)]


placed = place([jnp.zeros((8, 16))] * 3)
"""),
        Valid("""import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))


def shard_rows(x, axis="data"):
    return jax.device_put(x, NamedSharding(mesh, P(axis, None)))


y = shard_rows(jnp.zeros((8, 16)))
"""),
        Valid("""import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P


class Trainer:
    def __init__(self):
        self.mesh = jax.make_mesh((2, 4), ("data", "model"))

    def use(self, mesh):
        self.mesh = mesh  # another mesh: which one place() sees is the caller's choice

    def place(self, x):
        return jax.device_put(x, NamedSharding(self.mesh, P("batch", None)))


t = Trainer()
t.use(jax.make_mesh((8,), ("batch",)))
y = t.place(jnp.zeros((8, 16)))
"""),
    ]
    INVALID = [
        Invalid("""import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P


class Trainer:
    def __init__(self):
        self.mesh = jax.make_mesh((2, 4), ("data", "model"))

    def place(self, x):
        return jax.device_put(x, NamedSharding(self.mesh, P("dta", None)))


y = Trainer().place(jnp.zeros((8, 16)))
""", line=11, message="did you mean 'data'", jax_error="is not found in mesh"),
        Invalid("""import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ("data", "model"))
x = jax.device_put(jnp.zeros((8, 16)), NamedSharding(mesh, P("batch", None)))
""", line=5, message="'batch'", jax_error="is not found in mesh"),
        Invalid("""import jax
import jax.numpy as jnp
from jax import P

def scale(x):
    return jax.shard_map(lambda b: b * 2, in_specs=P("data", None), out_specs=P("dta", None))(x)

mesh = jax.make_mesh((2, 4), ("data", "model"))
with jax.set_mesh(mesh):
    x = jax.device_put(jnp.zeros((8, 16)), P("data", None))
    y = jax.jit(scale)(x)
""", line=6, message="did you mean 'data'", jax_error="refer to an axis"),
        Invalid("""import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))
SPECS = {"w": P("model", None), "b": P("modle")}


def place(params):
    out = {}
    for name, value in params.items():
        out[name] = jax.device_put(value, NamedSharding(mesh, SPECS[name]))
    return out


placed = place({"w": jnp.zeros((16, 8)), "b": jnp.zeros((8,))})
""", line=6, message="'modle'",
                jax_error='is not found in mesh'),
        Invalid("""import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))
LAYOUT = [P("data", None), P(None, "model"), P("fsdp", None)]


def place(arrays):
    return [jax.device_put(a, NamedSharding(mesh, LAYOUT[i])) for i, a in enumerate(arrays)]


placed = place([jnp.zeros((8, 16))] * 3)
""", line=6, message="'fsdp'",
                jax_error='is not found in mesh'),
        Invalid("""import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))


def shard_rows(x, axis="batch"):
    return jax.device_put(x, NamedSharding(mesh, P(axis, None)))


y = shard_rows(jnp.zeros((8, 16)))
""", line=9, message="'batch'",
                jax_error='is not found in mesh'),
        # a Flax logical axis rule mapping to an axis the mesh lacks
        Invalid("""import jax
import jax.numpy as jnp
import flax.linen as nn
from jax.sharding import AxisType
RULES = [("batch", "data"), ("embed", "tensor")]
mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
with jax.set_mesh(mesh), nn.logical_axis_rules(RULES):
    y = nn.with_logical_constraint(jnp.zeros((8, 16)), ("batch", "embed"))
""", line=8, message="'tensor'", jax_error="is not found in mesh"),
    ]

    def check(self, ctx):
        yield from self._declared_axes(ctx)
        reported = set()
        for use in ctx.events.spec_uses:
            mesh = use.mesh
            if mesh is None or mesh.names is None:
                continue
            spec = use.spec
            named = list(spec.axis_names()) + [a for a in spec.unreduced + spec.reduced if a]
            for axis in dict.fromkeys(named):
                if axis in mesh.names or (id(spec), axis) in reported:
                    continue
                reported.add((id(spec), axis))
                where = "the context mesh" if use.from_context else "the mesh"
                literal, fixed = _typo_fix(spec.node, axis, mesh.names)
                yield self.report(
                    spec.node or use.node,
                    f"`{spec.describe()}` in {use.where} names mesh axis {axis!r}, but {where} "
                    f"{mesh.describe()} has axes {axes_str(mesh.names)}{did_you_mean(axis, mesh.names)}. "
                    f"JAX raises ValueError (axis {axis!r} is not found in the mesh). Use one of "
                    f"the mesh's axes, or shard this value on the mesh that has {axis!r}.",
                    fix_node=literal, fix_content=fixed, fix_unsafe=True,
                    fix_message=f"Use the mesh axis {_unquoted(fixed)!r}" if fixed else "",
                    fails_at=use.at)


    def _declared_axes(self, ctx):
        """Logical names resolved where no mesh is in view, against the mesh axes the
        project declares (``mesh_axes`` beside its rule table, or ``mesh-axes``)."""
        from ..jaxapi.logical import LogicalResolution
        logical = getattr(ctx.config, "logical", None)
        declared = logical.mesh_axes if logical is not None else None
        if logical is None or not declared:
            return
        where = f"`mesh_axes` in {logical.source}" if logical.source else \
            "`mesh-axes` in [tool.shardcheck.logical]"
        seen = set()
        for node, fact in ctx.facts(LogicalResolution):
            if fact.mesh is not None and fact.mesh.names is not None:
                continue  # the spec is checked on that mesh (spec_uses)
            for entry in fact.entries:
                for axis in (entry,) if isinstance(entry, str) else \
                        entry if isinstance(entry, tuple) else ():
                    if axis in declared or (id(node), axis) in seen:
                        continue
                    if logical.discovered and axis in fact.unmatched:
                        # a name no rule of a *discovered* file maps (NNX passes it on as
                        # a mesh axis): another config of the project may hold its rule
                        # (maxdiffusion's Wan models run with base_wan_14b.yml, not the
                        # base14.yml discovery picks), so it is no proof; SC110 warns
                        continue
                    seen.add((id(node), axis))
                    by = [n for n, axes in fact.rules if n in fact.names and
                          (axes == axis or isinstance(axes, (tuple, list)) and axis in axes)]
                    rule = f" (the rule for {by[0]!r})" if by else ""
                    yield self.report(
                        node,
                        f"logical names {fact.names!r} in `{fact.api.rsplit('.', 1)[-1]}` resolve "
                        f"to mesh axis {axis!r}{rule}, but the mesh axes declared in {where} are "
                        f"{axes_str(declared)}{did_you_mean(axis, declared)}. On that mesh JAX "
                        f"raises ValueError (axis {axis!r} is not found in the mesh) where the "
                        "constraint applies. Fix the rule's mesh axis, or the declared axes.")


def _one_edit_apart(a: str, b: str) -> bool:
    """Whether one insertion, deletion or substitution turns ``a`` into ``b``."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) > len(b):
        a, b = b, a
    i = 0
    while i < len(a) and a[i] == b[i]:
        i += 1
    return a[i + (len(a) == len(b)):] == b[i + 1:]


def _unquoted(literal: Optional[str]) -> str:
    return literal.strip("'\"") if literal else ""


def _typo_fix(spec_node, axis: str, names) -> Tuple[Optional[cst.CSTNode], Optional[str]]:
    """(the string literal naming ``axis`` in the spec, the literal naming the one mesh
    axis one edit away) when exactly one is; (None, None) otherwise. Unsafe: the user
    may have meant another mesh."""
    close = [n for n in names if _one_edit_apart(axis, n)]
    if len(close) != 1 or spec_node is None:
        return None, None
    found: List[cst.SimpleString] = []

    class _Find(cst.CSTVisitor):
        def visit_SimpleString(self, node: cst.SimpleString) -> None:
            if node.evaluated_value == axis and not node.prefix:
                found.append(node)

    spec_node.visit(_Find())
    if len(found) != 1:
        return None, None
    quote = found[0].quote
    return found[0], f"{quote}{close[0]}{quote}"
