"""shard_map bodies and collectives (local shapes, {V:...}), an Auto mesh, jit and grad."""
from functools import partial

import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P


def body(a, b, c):
    ag = jax.lax.all_gather(a, "y")
    agt = jax.lax.all_gather(a, "y", axis=1, tiled=True)
    ps = jax.lax.psum(a, "y")
    psxy = jax.lax.psum(a, ("x", "y"))
    pm = jax.lax.pmean(a, "x")
    sc = jax.lax.psum_scatter(a, "y", scatter_dimension=1, tiled=True)
    sc_nt = jax.lax.psum_scatter(b, "y", scatter_dimension=0)
    a2a = jax.lax.all_to_all(a, "y", 1, 0, tiled=True)
    idx = jax.lax.axis_index("y")
    pc = jax.lax.pcast(c, "y", to="varying")
    mixed = c + a
    local = a @ a.T
    red = a.sum(axis=0)
    rows = jax.lax.psum(a.shape[0], "y")  # a Python int: the rows of every shard
    share = jax.lax.psum(a.sum(0), "y") / rows
    return psxy


@jax.jit
def step(w, x):
    h = jnp.tanh(x @ w)
    return h.sum()


def loss(w, x):
    return jnp.mean((x @ w) ** 2)


def main():
    mesh = jax.make_mesh((2, 4), ("x", "y"))
    with jax.set_mesh(mesh):
        a = jax.device_put(jnp.zeros((8, 16)), P("x", "y"))
        b = jax.device_put(jnp.zeros((32, 8)), P(("x", "y"), None))
        c = jax.device_put(jnp.zeros((4, 4)), P())
        out = jax.shard_map(body, in_specs=(P("x", "y"), P(("x", "y")), P()),
                            out_specs=P())(a, b, c)
        w = jax.device_put(jnp.zeros((16, 4)), P())
        s = step(w, a)
        g = jax.grad(loss)(w, a)
        val, gr = jax.value_and_grad(loss)(w, a)
    auto = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto, AxisType.Auto))
    d = jax.device_put(jnp.zeros((8, 16)), NamedSharding(auto, P("x", "y")))
    e = d @ jnp.zeros((16, 4))
    f = d.sum(axis=0)
    with jax.set_mesh(auto):
        hinted = jax.jit(lambda v: jax.lax.with_sharding_constraint(v * 2, P("x", None)))(f[None])
        plain = jnp.ones((8, 4))
        kept = jax.lax.with_sharding_constraint(plain, P("x", "y"))
    return out, s, g, val, gr, e, f, hinted, kept


if __name__ == "__main__":
    main()
