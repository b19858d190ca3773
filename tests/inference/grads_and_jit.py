"""value_and_grad with has_aux, grad of closures, and the outputs of jitted functions
used further on, on an Explicit mesh; and a function jitted with in_shardings whose
arguments are uncommitted (made with no mesh in force): its trace sees their own types."""
import jax
import jax.numpy as jnp
from jax import P
from jax.sharding import NamedSharding


def loss_aux(w, x):
    y = x @ w
    return (y ** 2).sum(), y


@jax.jit
def forward(w, x):
    return jnp.tanh(x @ w)


def main():
    mesh = jax.make_mesh((2, 4), ("x", "y"))
    with jax.set_mesh(mesh):
        w = jax.device_put(jnp.ones((16, 8)), P(None, "y"))
        x = jax.device_put(jnp.ones((8, 16)), P("x", None))
        (loss, y), g = jax.value_and_grad(loss_aux, has_aux=True)(w, x)
        g2, aux = jax.grad(loss_aux, has_aux=True)(w, x)
        out = forward(w, x)
        total = out.sum(axis=0)
        scaled = out * 2.0
        gc = jax.grad(lambda v: (x @ v).sum())(w)
        step = w - 0.1 * gc
        gs = jax.grad(lambda a, b: (a @ b).sum(), argnums=(0, 1))(x, w)
        gx = gs[0]
        return loss, y, g, g2, aux, total, scaled, step, gx


def placed_step(x, w):
    h = x @ w
    g = jax.grad(lambda v: (x @ v).sum())(w)
    return h, w - 0.1 * g


def uncommitted():
    mesh = jax.make_mesh((2, 4), ("x", "y"))
    x = jnp.ones((32, 16))
    w = jnp.ones((16, 8))
    step = jax.jit(placed_step, in_shardings=(NamedSharding(mesh, P("x", None)),
                                              NamedSharding(mesh, P())))
    h, w2 = step(x, w)  # unknown: the compiler places the outputs
    return h, w2


main()
uncommitted()
