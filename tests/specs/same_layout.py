"""An array placed "as another one is": `x.sharding` of a concrete array, and
`jax.typeof(x).sharding` (`.spec`), which traced code uses (a tracer has no `.sharding`),
at the top level, in a helper and in a jitted function; on Explicit and Auto axes."""
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Explicit,) * 2)
x = jax.device_put(jnp.zeros((8, 16)), NamedSharding(mesh, P("data")))
t = jax.device_put(jnp.zeros((8, 16)), NamedSharding(mesh, P(None, ("data", "model"))))
like_x = jax.device_put(jnp.ones((8, 16)), x.sharding)
like_t = jax.device_put(jnp.ones((8, 16)), t.sharding)
with jax.set_mesh(mesh):
    as_typed = jax.reshard(jnp.ones((8, 16)), jax.typeof(x).sharding.spec)
    as_typed_t = jax.reshard(jnp.ones((8, 16)), jax.typeof(t).sharding.spec)


def follow(a, b):
    return jax.reshard(b, jax.typeof(a).sharding.spec)


with jax.set_mesh(mesh):
    followed = follow(t, jnp.ones((8, 16)))


@jax.jit
def doubled(a):
    return jax.reshard(a * 2, jax.typeof(a).sharding)


with jax.set_mesh(mesh):
    twice = doubled(x)

auto = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
xa = jax.device_put(jnp.zeros((8, 16)), NamedSharding(auto, P("data")))
with jax.set_mesh(auto):
    as_typed_auto = jax.lax.with_sharding_constraint(jnp.ones((8, 16)), jax.typeof(xa).sharding.spec)
