"""Specs built with arithmetic: a spec plus a tuple and a tuple plus a spec (JAX's
``PartitionSpec.__add__``/``__radd__``), a spec's entries by index and by slice, and a
tuple of specs repeated and extended, `tuple`/`list` of a generator or a spec, and a
spec unpacked into names or iterated."""
import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Explicit,) * 2)
jax.set_mesh(mesh)
base = P("data", None)
x = jnp.zeros((8, 16, 4))
a = jax.device_put(x, base + ("model",))
b = jax.device_put(x, ("model",) + P(None, "data"))
c = jax.device_put(x, P(*(base[:-1] + (None, "model"))))
d = jax.device_put(x, P(base[0], "model"))
specs = 2 * (P("data"),)
specs += (P(None, "model"),)
trio = jax.device_put((x, x, x), specs)
pair = jax.device_put((x, x), tuple(P(n) for n in ("data", "model")))
e = jax.device_put(x, P(*list(base), "model"))
act = P("data", None, "model")
b_ax, t_ax, d_ax = act  # a spec unpacks to its entries (tunix: `shd_b, shd_t, ... = spec`)
f = jax.device_put(x, P(b_ax, d_ax, t_ax))
g = jax.device_put(x, P(*[ax for ax in act][::-1]))
