from .. import facts
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

    Linen parameters count too: `self.param(name, nn.with_logical_partitioning(init,
    names), shape)` under the logical rules in force, on the mesh in context (or
    `default-mesh`). Flax applies that spec when the parameter is created, and JAX raises
    `IndivisibleError` (a `ValueError`) when the module is initialised: outside jit, and
    under `jax.jit(init, out_shardings=nn.logical_to_mesh_sharding(...))`. Checked on
    flax 0.12.8 / JAX 0.10.2.

    A `with_sharding_constraint` (and a Linen or NNX parameter's sharding) on axes that
    are not all Explicit is a hint: JAX raises `IndivisibleError` for it eagerly, but under
    `jax.jit` the compiler pads the dim, so there it is flagged only where the code
    provably runs eagerly.

    Inside `shard_map`, the collectives that split a dim of the local block over an
    axis count too: `psum_scatter(x, axis, scatter_dimension=d)` and `all_to_all(x, axis,
    split_axis=d, ...)`. Tiled (`tiled=True`) the dim must divide by the axis size;
    untiled it must equal it (one slice per device, and the dim goes). JAX raises
    `ValueError` when it traces the body ("tiled reduce_scatter operand scatter dimension
    size 6 must be divisible by shard_count 4", "all_to_all requires the size of the mapped
    axis axis_name to equal x.shape[split_axis]"; JAX 0.10.2 and 0.12.0.1).

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
    JAX_FACTS = ("sharding.indivisible", "collective.split_size")
    VALID = [Valid("""import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((4, 2), ("data", "model"))


def scatter_grads(g):
    return jax.lax.psum_scatter(g, "data", scatter_dimension=1, tiled=True)


g = jax.device_put(jnp.ones((8, 8)), NamedSharding(mesh, P("data", None)))
out = jax.shard_map(scatter_grads, mesh=mesh, in_specs=P("data", None), out_specs=P("data"))(g)
"""), Valid("""import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ("data", "model"))
w = jax.device_put(jnp.zeros((8, 6)), NamedSharding(mesh, P("model", None)))
pos = jnp.arange(8, device=NamedSharding(mesh, P("model")))
cache = jnp.zeros((8, 6), device=NamedSharding(mesh, P("model")))
"""), Valid("""import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))
SPECS = {"embed": P("model", None), "proj": P(None, "model")}
params = {"embed": jnp.zeros((52, 16)), "proj": jnp.zeros((16, 8))}
placed = {k: jax.device_put(v, NamedSharding(mesh, SPECS[k])) for k, v in params.items()}
"""), Valid("""import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))
params = {"w": jnp.zeros((16, 8)), "b": jnp.zeros((8,))}
specs = {"w": P("model", None), "b": P("model")}
placed = jax.tree.map(lambda x, s: jax.device_put(x, NamedSharding(mesh, s)), params, specs)
"""), Valid("""import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))


def last_dim_spec(x):
    return P(*([None] * (x.ndim - 1)), "model")


x = jnp.zeros((6, 8))
y = jax.device_put(x, NamedSharding(mesh, last_dim_spec(x)))
"""), Valid("""import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))
split = jax.jit(lambda x: x.reshape(6, 16), out_shardings=NamedSharding(mesh, P("data", None)))
y = split(jnp.ones((96,)))
"""), Valid("""import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))


@jax.jit
def init():
    return jnp.zeros((6, 16))


init_sharded = jax.jit(init, out_shardings=NamedSharding(mesh, P("data", None)))
state = init_sharded()
"""), Valid("""import jax
import jax.numpy as jnp
from jax import P

VOCAB = 50304
mesh = jax.make_mesh((2, 4), ("data", "model"))
with jax.set_mesh(mesh):
    embed = jax.device_put(jnp.zeros((VOCAB, 64)), P("model", None))
"""), Valid("""import jax
import jax.numpy as jnp
from jax.sharding import AxisType, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto, AxisType.Auto))


def per_shard_loss(b):
    return (b ** 2).sum(keepdims=True)


def loss(batch):
    return jax.shard_map(per_shard_loss, mesh=mesh, in_specs=P("model"), out_specs=P("model"))(batch)


total = loss(jnp.ones((8, 16))).sum()
"""), Valid("""import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))
SPECS = {"embed": P("model", None), "proj": P(None, "model")}


def place(params):
    out = {}
    for name, value in params.items():
        out[name] = jax.device_put(value, NamedSharding(mesh, SPECS[name]))
    return out


placed = place({"embed": jnp.zeros((52, 16)), "proj": jnp.zeros((16, 8))})
"""), Valid("""import jax
import jax.numpy as jnp
from jax.sharding import AxisType, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto, AxisType.Auto))


@jax.jit
def pooled(x):
    # a hint on Auto axes: under jit XLA pads the indivisible dim
    return jax.lax.with_sharding_constraint(x.mean(0, keepdims=True), P("data", None))


with jax.set_mesh(mesh):
    out = pooled(jnp.ones((8, 16)))
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
        Invalid("""import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ("data", "model"))
pos = jnp.arange(6, device=NamedSharding(mesh, P("model")))
""", line=5, message="6 is not divisible by 4", jax_error="evenly divide"),
        Invalid("""import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ("data", "model"))
cache = jnp.zeros((6, 16), device=NamedSharding(mesh, P("model")))
""", line=5, message="6 is not divisible by 4", jax_error="evenly divide"),
        Invalid("""import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))
SPECS = {"embed": P("model", None), "proj": P(None, "model")}
params = {"embed": jnp.zeros((50, 16)), "proj": jnp.zeros((16, 8))}
placed = {k: jax.device_put(v, NamedSharding(mesh, SPECS[k])) for k, v in params.items()}
""", line=6, message='50 is not divisible by 4',
                jax_error='evenly divide'),
        Invalid("""import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))
params = {"w": jnp.zeros((16, 8)), "b": jnp.zeros((6,))}
specs = {"w": P("model", None), "b": P("model")}
placed = jax.tree.map(lambda x, s: jax.device_put(x, NamedSharding(mesh, s)), params, specs)
""", line=7, message='6 is not divisible by 4',
                jax_error='evenly divide'),
        Invalid("""import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))


def last_dim_spec(x):
    return P(*([None] * (x.ndim - 1)), "model")


x = jnp.zeros((8, 6))
y = jax.device_put(x, NamedSharding(mesh, last_dim_spec(x)))
""", line=13, message='6 is not divisible by 4',
                jax_error='evenly divide'),
        Invalid("""import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))
split = jax.jit(lambda x: x.reshape(6, 16), out_shardings=NamedSharding(mesh, P("model", None)))
y = split(jnp.ones((96,)))
""", line=6, message='6 is not divisible by 4',
                jax_error='evenly divide'),
        Invalid("""import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))


@jax.jit
def init():
    return jnp.zeros((6, 16))


init_sharded = jax.jit(init, out_shardings=NamedSharding(mesh, P("model", None)))
state = init_sharded()
""", line=13, message='6 is not divisible by 4',
                jax_error='evenly divide'),
        Invalid("""import jax
import jax.numpy as jnp
from jax import P

VOCAB = 50257
mesh = jax.make_mesh((2, 4), ("data", "model"))
with jax.set_mesh(mesh):
    embed = jax.device_put(jnp.zeros((VOCAB, 64)), P("model", None))
""", line=8, message='50257 is not divisible by 4',
                jax_error='evenly divide'),
        Invalid("""import jax
import jax.numpy as jnp
from jax.sharding import AxisType, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto, AxisType.Auto))


def per_shard_loss(b):
    return (b ** 2).sum(keepdims=True)


def loss(batch):
    return jax.shard_map(per_shard_loss, mesh=mesh, in_specs=P("model"), out_specs=P("model"))(batch)


total = loss(jnp.ones((6, 16))).sum()
""", line=13, message='6 is not divisible by 4',
                jax_error='evenly divisible'),
        Invalid("""import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))
SPECS = {"embed": P("model", None), "proj": P(None, "model")}


def place(params):
    out = {}
    for name, value in params.items():
        out[name] = jax.device_put(value, NamedSharding(mesh, SPECS[name]))
    return out


placed = place({"embed": jnp.zeros((50, 16)), "proj": jnp.zeros((16, 8))})
""", line=6, message='50 is not divisible by 4',
                jax_error='evenly divide'),
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
        # a sharding a constructor stores, applied by a method: reported where the
        # method places the batch (JAX's traceback), noting the constructor's spec
        Invalid("""import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P


class Loader:
    def __init__(self, mesh, batch_size):
        self.batch_size = batch_size
        self.sharding = NamedSharding(mesh, P(("data", "model"), None))

    def next_batch(self):
        return jax.device_put(jnp.zeros((self.batch_size, 16)), self.sharding)


loader = Loader(jax.make_mesh((2, 4), ("data", "model")), 12)
batch = loader.next_batch()
""", line=12, message="12 is not divisible by 8", jax_error="evenly divide"),
        # a reduce-scatter of the local gradient over a dim the axis size does not divide
        Invalid("""import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((4, 2), ("data", "model"))


def scatter_grads(g):
    return jax.lax.psum_scatter(g, "data", scatter_dimension=1, tiled=True)


g = jax.device_put(jnp.ones((8, 6)), NamedSharding(mesh, P("data", None)))
out = jax.shard_map(scatter_grads, mesh=mesh, in_specs=P("data", None), out_specs=P("data"))(g)
""", line=9, message="its size 6 must divide by 4", jax_error="must be divisible by shard_count"),
        Invalid("""import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((4, 2), ("data", "model"))


def exchange(x):
    return jax.lax.all_to_all(x, "data", 1, 0)


x = jax.device_put(jnp.ones((8, 6)), NamedSharding(mesh, P("data", None)))
out = jax.shard_map(exchange, mesh=mesh, in_specs=P("data", None), out_specs=P("data"))(x)
""", line=9, message="must equal 4", jax_error="all_to_all requires the size of the mapped axis"),
    ]

    def check(self, ctx):
        for node, fact in ctx.facts(facts.CollectiveSplitSize):
            yield self._split(node, fact)
        for use in ctx.events.spec_uses:
            if use.padded:
                continue
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
                    effect = ("JAX raises ValueError (does not evenly divide)"
                              if not use.where.startswith("Linen param") else
                              f"Flax applies it to the {use.where}: initialising the module "
                              "raises ValueError (IndivisibleError), outside jit and under "
                              "`jax.jit(init, out_shardings=nn.logical_to_mesh_sharding(...))` "
                              "alike")
                    at, related = ctx.spec_place(spec.node or use.node, use.at)
                    yield self.report(
                        at,
                        f"dim {i} of shape {_shape(shape)} has size {shape[i]}, which "
                        f"`{spec.describe()}` splits {n} ways over {axes!r} on {mesh.describe()}"
                        f"{src}: {shape[i]} is not divisible by {n}. {effect}. Pad the dim to a "
                        f"multiple of {n}, or shard it over axes whose sizes divide it.",
                        related=related, fails_at=use.at)

    def _split(self, node, f):
        axes = f.axes[0] if len(f.axes) == 1 else f.axes
        where = (f"`{f.api}` over {axes!r} ({f.axis_size} devices) splits dim {f.dim} of "
                 f"the local block {f.array}")
        if f.tiled:
            why = f"tiled, its size {f.size} must divide by {f.axis_size}, and it does not"
            fix = (f"pad dim {f.dim} to a multiple of {f.axis_size}, or split a dim the axis "
                   "size divides")
        else:
            why = (f"untiled, its size {f.size} must equal {f.axis_size} (one slice per "
                   "device, and the dim goes)")
            fix = (f"pass `tiled=True` to split it into {f.axis_size} blocks (its size must "
                   f"then divide by {f.axis_size}), or split a dim of size {f.axis_size}")
        error = {  # JAX 0.10.2's and 0.12.0.1's words
            ("psum_scatter", True): f"tiled reduce_scatter operand scatter dimension size "
                                    f"{f.size} must be divisible by shard_count {f.axis_size}",
            ("psum_scatter", False): f"reduce_scatter operand scatter dimension size {f.size} "
                                     f"must match shard count {f.axis_size}",
            ("all_to_all", True): f"The size of all_to_all split_axis ({f.size}) has to be "
                                  f"divisible by the size of the named axis",
            ("all_to_all", False): "all_to_all requires the size of the mapped axis axis_name "
                                   "to equal x.shape[split_axis]",
        }[(f.api, f.tiled)]
        return self.report(node, f"{where}: {why}. JAX raises ValueError (\"{error}\") when "
                                 f"it traces the body. Fix: {fix}.")
