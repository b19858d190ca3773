from sharding_types import format_spec

from ..facts import InShardingsConflict
from ..ftypes import Invalid, Valid
from ..rule import ShardRule

_HEAD = """import jax
import jax.numpy as jnp
from jax import P

mesh = jax.make_mesh((2, 4), ("x", "y"))
with jax.set_mesh(mesh):
"""


class JitInShardingsMismatch(ShardRule):
    """
    ## What it does
    Flags a call, outside any trace, of a function jitted with `in_shardings=` whose
    argument is committed to another sharding (or to another mesh) than
    `in_shardings` says.

    ## Why is this bad?
    An array is committed once it is placed on a mesh: by `jax.device_put(x, sharding)`,
    by a constructor (`jnp.zeros`, ...) under `jax.set_mesh`, or as a jit output. At a
    call outside any trace JAX compares a committed argument's sharding with
    `in_shardings` and raises `ValueError: Sharding passed to jit does not match the
    sharding on the respective arg`, on Auto axes as on Explicit ones (JAX 0.10.2 and
    0.12). Shardings that differ only by axes of size 1 match.

    Not flagged, because JAX accepts them: an uncommitted argument (made with no mesh
    set, or a NumPy array), which jit places as `in_shardings` says; and a call inside a
    jitted function (or a shard_map, grad or scan body), where the argument is a tracer
    and jit reshards it.

    ## Example
    ```python
    f = jax.jit(step, in_shardings=NamedSharding(mesh, P("model", None)))
    x = jax.device_put(x, NamedSharding(mesh, P("data", None)))
    f(x)
    ```

    Use instead:
    ```python
    f(jax.sharding.reshard(x, P("model", None)))   # under jax.set_mesh(mesh)
    ```
    or make `in_shardings` match the argument.
    """

    CODE = "SC308"
    NAME = "jit-in-shardings-mismatch"
    JAX_FACTS = ("jit.in_shardings_mismatch",)
    VALID = [Valid(_HEAD + """    x = jax.device_put(jnp.ones((8, 16)), P("x", None))
    z = jax.jit(lambda a: a, in_shardings=jax.NamedSharding(mesh, P("x", None)))(x)
"""), Valid("""import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ("x", "y"))
f = jax.jit(lambda a: a * 2, in_shardings=NamedSharding(mesh, P("y", None)))
y = f(jnp.ones((8, 16)))  # made with no mesh set: uncommitted, jit places it
g = jax.jit(lambda a: f(a) + 1)
z = g(jax.device_put(jnp.ones((8, 16)), NamedSharding(mesh, P("x", None))))  # a tracer in f
"""), Valid("""import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ("x", "y"))
rows = NamedSharding(mesh, P("x"))
step = jax.jit(lambda c: c + 1, in_shardings=rows)
cache = jnp.zeros((8, 16), device=rows)
cache = step(cache)
""")]
    INVALID = [
        Invalid(_HEAD + """    x = jax.device_put(jnp.ones((8, 16)), P("x", None))
    f = jax.jit(lambda a: a * 2, in_shardings=jax.NamedSharding(mesh, P("y", None)))
    z = f(x)
""", line=9, message="in_shardings", jax_error="does not match the sharding"),
        Invalid("""import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto, AxisType.Auto))
x = jax.device_put(jnp.ones((8, 16)), NamedSharding(mesh, P("x", None)))
f = jax.jit(lambda a: a * 2, in_shardings=NamedSharding(mesh, P("y", None)))
z = f(x)
""", line=7, message="placed with P('x', None)", jax_error="does not match the sharding"),
        Invalid("""import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ("x", "y"))
batch_mesh = jax.make_mesh((4, 2), ("x", "y"))
x = jax.device_put(jnp.ones((8, 16)), NamedSharding(batch_mesh, P("x", None)))
f = jax.jit(lambda a: a * 2, in_shardings=NamedSharding(mesh, P("x", None)))
z = f(x)
""", line=8, message="lives on Mesh('x': 4, 'y': 2)", jax_error="does not match the sharding"),
        Invalid("""import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ("x", "y"))
rows = NamedSharding(mesh, P("x"))
step = jax.jit(lambda c: c + 1, in_shardings=rows)
cache = jnp.zeros((8, 16), device=NamedSharding(mesh, P(None, "y")))
cache = step(cache)
""", line=8, message="committed as float32[8,16@y]",
                jax_error="does not match the sharding"),
    ]

    def check(self, ctx):
        for node, fact in ctx.facts(InShardingsConflict):
            yield self.report(node, self.message(fact))

    @staticmethod
    def message(f: InShardingsConflict) -> str:
        jax_says = ("JAX compares the two at the call and raises ValueError (\"Sharding passed "
                    "to jit does not match the sharding on the respective arg\")")
        if f.declared_mesh is not None:
            spec = f.declared_spec.describe() if f.declared_spec is not None else "its spec"
            here = f.inferred.mesh.describe() if f.inferred.mesh is not None else "another mesh"
            return (f"`jax.jit(in_shardings=)` declares {spec} on {f.declared_mesh.describe()}, "
                    f"but the argument passed here lives on {here}: {jax_says}. Put it on the "
                    f"jit's mesh first (`jax.device_put(x, NamedSharding(mesh, {spec}))`), or "
                    "build in_shardings on the argument's mesh.")
        if f.declared_spec is not None:
            spec = f.declared_spec.describe()
            placed = f.inferred.spec.describe() if f.inferred.spec is not None else "another spec"
            return (f"`jax.jit(in_shardings=)` declares {spec} for this argument, but it was "
                    f"placed with {placed} on the same mesh (Auto axes, so `jax.typeof` shows "
                    f"neither): {jax_says}. Place it with {spec}, or make in_shardings match it.")
        spec = format_spec(f.declared)
        return (f"`jax.jit(in_shardings=)` declares {spec} for this argument, but it is "
                f"committed as {f.inferred}: {jax_says}. Reshard it first "
                f"(`jax.sharding.reshard(x, {spec})`), or make in_shardings match it.")
