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

    ## Example
    ```python
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    x = jax.device_put(jnp.zeros((8, 16)), NamedSharding(mesh, P("batch", None)))
    ```

    Use instead:
    ```python
    x = jax.device_put(jnp.zeros((8, 16)), NamedSharding(mesh, P("data", None)))
    ```
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
    ]
    INVALID = [
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
                yield self.report(
                    spec.node or use.node,
                    f"`{spec.describe()}` in {use.where} names mesh axis {axis!r}, but {where} "
                    f"{mesh.describe()} has axes {axes_str(mesh.names)}{did_you_mean(axis, mesh.names)}. "
                    f"JAX raises ValueError (axis {axis!r} is not found in the mesh). Use one of "
                    f"the mesh's axes, or shard this value on the mesh that has {axis!r}.")
