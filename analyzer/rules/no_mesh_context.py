from ..ftypes import Invalid, Valid
from ..rule import ShardRule


class NoMeshContext(ShardRule):
    """
    ## What it does
    Flags a bare `PartitionSpec` (or a `shard_map` without `mesh=`, or a Flax NNX
    variable made with sharding names and no `mesh=` metadata, or an `nnx.Optimizer` /
    `nnx.ModelAndOptimizer` whose optax transformation keeps moments of such variables)
    used where provably no mesh is set: no `jax.set_mesh(mesh)` before it and no `with jax.set_mesh(mesh):`
    around it, at module level or in a script's entry point. `jax.set_mesh(mesh)` sets the
    mesh when it is called (JAX 0.10-0.12), also where the context manager it returns is
    assigned and never entered (`_ = jax.set_mesh(mesh)`).

    ## Why is this bad?
    A bare spec means "on the context mesh". With none set, JAX raises `ValueError:
    Please set a mesh via jax.set_mesh if a PartitionSpec is passed to device_put`
    (similar errors for `jax.jit` shardings, `with_sharding_constraint`,
    `out_sharding=` and `shard_map`). Flax NNX (0.12.8) shards a variable made with
    sharding names (`nnx.with_partitioning`, `out_sharding=`) when it is made, on the
    mesh `jax.set_mesh` sets, and raises `ValueError: An auto mesh context or metadata
    is required if creating a variable with annotation out_sharding=...` without one;
    the legacy `with mesh:` sets no mesh it reads. An optimizer made after the model,
    outside its `with jax.set_mesh(mesh):`, raises the same: adam's `mu` and `nu` (any
    moment, trace or sum of squares) are variables that copy their parameter's
    metadata (flax 0.12.8 and 0.12.12, optax 0.2.8). shardcheck reports this only where it
    can see every caller; in library code whose callers it cannot see, it stays silent.

    ## Example
    ```python
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    x = jax.device_put(jnp.zeros((8, 16)), P("data", None))
    ```

    Use instead:
    ```python
    with jax.set_mesh(mesh):
        x = jax.device_put(jnp.zeros((8, 16)), P("data", None))
    # or: jax.device_put(..., NamedSharding(mesh, P("data", None)))
    ```
    """

    CODE = "SC107"
    NAME = "no-mesh-context"
    JAX_FACTS = ("mesh.unset_device_put", "mesh.context_empty")
    VALID = [
        Valid("""import jax
import jax.numpy as jnp
from jax import P
mesh = jax.make_mesh((2, 4), ("data", "model"))
jax.set_mesh(mesh)
x = jax.device_put(jnp.zeros((8, 16)), P("data", None))
"""),
        Valid("""import jax
import jax.numpy as jnp
from jax import P

def main():
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    with jax.set_mesh(mesh):
        x = jax.device_put(jnp.zeros((8, 16)), P("data", None))

if __name__ == "__main__":
    main()
"""),
        # jax.set_mesh sets the mesh when called; the context manager it returns may be
        # dropped (Flax's NNX examples: `_ = jax.set_mesh(...)`), and helpers see it too
        Valid("""import jax
import jax.numpy as jnp
from jax import P
_ = jax.set_mesh(jax.make_mesh((2, 4), ("data", "model")))

def place(x):
    return jax.device_put(x, P("data", None))

y = place(jnp.zeros((8, 16)))
"""),
        # another array's layout: its NamedSharding names the mesh; the bare spec of its
        # type needs one set
        Valid("""import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ("data", "model"))
x = jax.device_put(jnp.zeros((8, 16)), NamedSharding(mesh, P("data")))
y = jax.device_put(jnp.ones((8, 16)), x.sharding)
with jax.set_mesh(mesh):
    z = jax.reshard(jnp.ones((8, 16)), jax.typeof(x).sharding.spec)
"""),
    ]
    INVALID = [
        Invalid("""import jax
import jax.numpy as jnp
from jax import P
mesh = jax.make_mesh((2, 4), ("data", "model"))
x = jax.device_put(jnp.zeros((8, 16)), P("data", None))
""", line=5, message="no mesh is set", jax_error="set a mesh"),
        Invalid("""import jax
import jax.numpy as jnp
from jax import P

def double(x):
    return jax.shard_map(lambda b: 2 * b, in_specs=P("data"), out_specs=P("data"))(x)

def main():
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    x = jnp.zeros((8,))
    return double(x)

if __name__ == "__main__":
    main()
""", line=6, message="no mesh is set", jax_error="context mesh cannot be empty"),
        Invalid("""import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ("data", "model"))
x = jax.device_put(jnp.zeros((8, 16)), NamedSharding(mesh, P("data")))
z = jax.reshard(jnp.ones((8, 16)), jax.typeof(x).sharding.spec)
""", line=6, message="no mesh is set", jax_error="not under a mesh context"),
        Invalid("""import jax
from flax import nnx

class Model(nnx.Module):
    def __init__(self, rngs):
        init = nnx.with_partitioning(nnx.initializers.lecun_normal(), (None, "model"))
        self.linear = nnx.Linear(16, 8, kernel_init=init, rngs=rngs)

mesh = jax.make_mesh((2, 4), ("data", "model"))
model = Model(nnx.Rngs(0))
""", line=7, message="Flax NNX raises", jax_error="An auto mesh context or metadata is required"),
        Invalid("""import jax
import optax
from flax import nnx

class Model(nnx.Module):
    def __init__(self, rngs):
        init = nnx.with_partitioning(nnx.initializers.lecun_normal(), (None, "model"))
        self.linear = nnx.Linear(16, 8, kernel_init=init, rngs=rngs)

mesh = jax.make_mesh((2, 4), ("data", "model"))
with jax.set_mesh(mesh):
    model = Model(nnx.Rngs(0))
optimizer = nnx.Optimizer(model, optax.adamw(3e-4), wrt=nnx.Param)
""", line=13, message="optimizer's moments", jax_error="An auto mesh context or metadata is required"),
    ]

    def check(self, ctx):
        for need in ctx.events.needs_mesh:
            if not (need.ctx.known and need.ctx.mesh is None):
                continue
            yield self.report(
                need.node,
                f"{need.what}, but no mesh is set here (no `jax.set_mesh(mesh)` before it and "
                f"no `with jax.set_mesh(mesh):` around it or its callers). {need.raises}. Wrap "
                "the code in `with jax.set_mesh(mesh):`, or name the mesh: NamedSharding(mesh, "
                "spec) / shard_map(..., mesh=mesh).")
