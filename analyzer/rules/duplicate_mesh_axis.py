from ..ftypes import Invalid, Valid
from ..rule import ShardRule


class DuplicateMeshAxis(ShardRule):
    """
    ## What it does
    Flags a mesh axis used twice: in one `PartitionSpec` (`P("x", "x")`,
    `P(("x", "y"), "x")`), or in the axis names of a mesh (`("x", "x")`).

    ## Why is this bad?
    A mesh axis can shard at most one dimension of an array: JAX raises
    `DuplicateSpecError` ("A single NamedSharding spec specification can map every mesh
    axis to at most one positional dimension"). For mesh names it is worse:
    `jax.make_mesh((2, 4), ("x", "x"))` does not fail, it silently builds a mesh whose
    shape is `{'x': 4}`, so every later spec shards over the wrong number of devices.

    ## Example
    ```python
    mesh = jax.make_mesh((2, 4), ("data", "data"))
    spec = P("data", "data")
    ```

    Use instead:
    ```python
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    spec = P("data", "model")      # or P(("data", "model"), None) to split one dim 8 ways
    ```
    """

    CODE = "SC102"
    NAME = "duplicate-mesh-axis"
    JAX_FACTS = ("spec.duplicate_axis", "make_mesh_rejects_repeated_names")
    VALID = [Valid("""import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ("data", "model"))
x = jax.device_put(jnp.zeros((8, 16)), NamedSharding(mesh, P(("data", "model"), None)))
""")]
    INVALID = [
        Invalid("""import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ("data", "model"))
x = jax.device_put(jnp.zeros((8, 16)), NamedSharding(mesh, P("data", "data")))
""", line=5, message="'data'", jax_error="duplicate"),
        Invalid("""import jax
mesh = jax.make_mesh((2, 4), ("data", "data"))
""", line=2, message="silently", jax_outcome="wrong-result",
                witness="assert dict(mesh.shape) == {'data': 2, 'model': 4}, dict(mesh.shape)"),
        # two NNX logical names whose rules share a mesh axis (NNX does not skip it)
        Invalid("""import jax
import jax.numpy as jnp
from flax import nnx
from jax.sharding import AxisType
RULES = [("embed", "data"), ("vocab", ("model", "data"))]
mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
with jax.set_mesh(mesh), nnx.logical_axis_rules(RULES):
    w = nnx.Param(jnp.zeros((16, 64)), out_sharding=("embed", "vocab"))
""", line=8, message="'data'", jax_error="duplicate"),
    ]

    def check(self, ctx):
        seen_specs = set()
        for use in ctx.events.spec_uses:
            spec = use.spec
            if id(spec) in seen_specs:
                continue
            seen_specs.add(id(spec))
            names = spec.axis_names()
            dups = [a for i, a in enumerate(names) if a in names[:i]]
            for axis in dict.fromkeys(dups):
                yield self.report(
                    spec.node or use.node,
                    f"`{spec.describe()}` uses mesh axis {axis!r} more than once; a mesh axis can "
                    "shard at most one dimension. JAX raises DuplicateSpecError. Shard one dim "
                    f"over {axis!r} and leave the other replicated (None), or use another axis.",
                    fails_at=use.at)
        for made in ctx.events.meshes:
            names = made.mesh.names or ()
            dups = [a for i, a in enumerate(names) if a in names[:i]]
            for axis in dict.fromkeys(dups):
                yield self.report(
                    made.names_node or made.node,
                    f"mesh axis names {tuple(names)} repeat {axis!r}. In JAX 0.10.2 "
                    f"`{made.api.rsplit('.', 1)[-1]}` does not reject this: it silently builds a "
                    f"mesh with one {axis!r} axis, so specs shard over the wrong devices. Give "
                    "each axis its own name.")
