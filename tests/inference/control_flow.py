"""Structured control flow: scan, fori_loop, while_loop, cond and switch results, under
jit on an Explicit mesh and inside shard_map (carries keep their type; ys are stacked)."""
import jax
import jax.numpy as jnp
from jax import P


def step(c, row):
    return c + row, row * 2


def shard_body(xb):
    init = jnp.zeros_like(xb[0])
    carry, ys = jax.lax.scan(step, init, xb)
    acc = jax.lax.fori_loop(0, 2, lambda i, c: c * 2, init)
    picked = jax.lax.cond(xb.sum() > 0, lambda v: v * 2, lambda v: v - 1, xb)
    return carry + acc + ys[0] + picked[0]


@jax.jit
def loops(x):
    init = jnp.zeros_like(x[0])
    carry, ys = jax.lax.scan(step, init, x)
    total = jax.lax.fori_loop(0, 3, lambda i, c: c + x, jnp.zeros_like(x))
    n, last = jax.lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2), (0, x))  # unknown: int n
    either = jax.lax.cond(x.sum() > 0, lambda: x * 2, lambda: x + 1)
    which = jax.lax.switch(1, [lambda v: v, lambda v: v * 3], x)
    return carry, ys, total, last, either, which


def main():
    mesh = jax.make_mesh((2, 4), ("x", "y"))
    with jax.set_mesh(mesh):
        x = jax.device_put(jnp.ones((8, 16)), P("x", "y"))
        rows = jax.device_put(jnp.ones((8, 16)), P(None, "y"))
        outs = loops(rows)
        y = jax.shard_map(shard_body, in_specs=P("x", "y"), out_specs=P(("x", "y")))(x)
    return outs, y


if __name__ == "__main__":
    main()
