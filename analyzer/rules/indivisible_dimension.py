from ..ftypes import Invalid, Valid
from ..rule import ShardRule
from .spec_rank_mismatch import _shape


class IndivisibleDimension(ShardRule):
    """
    ## What it does
    Flags an array dimension sharded over mesh axes whose total size does not divide it.

    ## Why is this bad?
    Sharding splits a dim evenly: a dim of 6 over an axis of size 4 cannot be split.
    JAX raises `ValueError: Sharding spec ('model',) implies that array axis 0 is
    partitioned 4 times, but does not evenly divide the dimension size 6` (or
    `IndivisibleError` from `jax.jit`). The classic case is code that works on 8 test
    devices and fails on the production mesh: declare that mesh in `[tool.shardcheck]`
    (`[tool.shardcheck.meshes.production] data = 64`) and shardcheck checks the dims
    against it wherever the source's mesh shape comes from the device count.

    ## Example
    ```python
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    w = jax.device_put(jnp.zeros((6, 16)), NamedSharding(mesh, P("model", None)))
    ```

    Use instead:
    ```python
    w = jax.device_put(jnp.zeros((8, 16)), NamedSharding(mesh, P("model", None)))  # pad 6 -> 8
    ```
    """

    CODE = "SC104"
    NAME = "indivisible-dimension"
    JAX_FACTS = ("sharding.indivisible",)
    VALID = [Valid("""import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ("data", "model"))
w = jax.device_put(jnp.zeros((8, 6)), NamedSharding(mesh, P("model", None)))
""")]
    INVALID = [
        Invalid("""import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ("data", "model"))
w = jax.device_put(jnp.zeros((6, 16)), NamedSharding(mesh, P("model", None)))
""", line=5, message="6 is not divisible by 4", jax_error="evenly divide"),
        Invalid("""import jax
import jax.numpy as jnp
from jax import P
mesh = jax.make_mesh((2, 4), ("data", "model"))
with jax.set_mesh(mesh):
    h = jnp.zeros((12, 16), out_sharding=P(("data", "model"), None))
""", line=6, message="12 is not divisible by 8", jax_error="evenly divide"),
        # a parameter dim and the mesh axes its Flax logical name resolves to
        Invalid("""import jax
import jax.numpy as jnp
from flax import nnx
from jax.sharding import AxisType
RULES = [("embed", "data"), ("mlp", "model")]
mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
with jax.set_mesh(mesh), nnx.logical_axis_rules(RULES):
    w = nnx.Param(jnp.zeros((16, 6)), out_sharding=("embed", "mlp"))
""", line=8, message="6 is not divisible by 4", jax_error="evenly divide"),
    ]

    def check(self, ctx):
        for use in ctx.events.spec_uses:
            spec, shape, mesh = use.spec, use.shape, use.mesh
            if shape is None or mesh is None or not spec.complete or len(spec.entries) > len(shape):
                continue
            for i, entry in enumerate(spec.entries):
                if not isinstance(entry, tuple) or shape[i] is None:
                    continue
                sizes = [mesh.size_of(a) if isinstance(a, str) else None for a in entry]
                if None in sizes:
                    continue
                n = 1
                for s in sizes:
                    n *= s or 0  # an unknown or empty axis: no divisibility to check
                if n and shape[i] % n:
                    axes = entry[0] if len(entry) == 1 else entry
                    src = (" (the production mesh of --mesh)" if mesh.origin == "scale"
                           else f" (sizes from the declared mesh {mesh.origin[7:]})"
                           if mesh.origin.startswith("config:") else "")
                    yield self.report(
                        spec.node or use.node,
                        f"dim {i} of shape {_shape(shape)} has size {shape[i]}, which "
                        f"`{spec.describe()}` splits {n} ways over {axes!r} on {mesh.describe()}"
                        f"{src}: {shape[i]} is not divisible by {n}. JAX raises ValueError "
                        f"(does not evenly divide). Pad the dim to a multiple of {n}, or shard it "
                        "over axes whose sizes divide it.")
