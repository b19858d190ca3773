"""Trees of specs built with `dict(...)` and `**` splices (issue 13's pytrees)."""
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Explicit,) * 2)
BASE = dict(w=P(None, "model"), b=P("model"))
SPECS = dict(BASE, b=P())
PAIRS = dict([("w", P("data", None)), ("b", P("data"))])
SPLICED = {**BASE, "w": P("model", None)}
params = {"w": jnp.zeros((8, 16)), "b": jnp.zeros((16,))}
placed = jax.device_put(params, jax.tree.map(lambda s: NamedSharding(mesh, s), SPECS))
paired = jax.device_put(params, jax.tree.map(lambda s: NamedSharding(mesh, s), PAIRS))
spliced = jax.device_put(params, jax.tree.map(lambda s: NamedSharding(mesh, s), SPLICED))
BASE_SHARDINGS = jax.tree.map(lambda s: NamedSharding(mesh, s), BASE)
copied = jax.device_put(params, dict(**BASE_SHARDINGS))
