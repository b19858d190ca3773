"""Array constructors placed with ``device=``, dtypes they default to or are told, and
indexing under jit (JAX 0.10.2: eager device= places the result, a traced zeros/ones/
full/empty ignores it, arange keeps it in both); host arrays NumPy's Generator draws,
through a generator function into device_put; the builtin ``bool`` as a dtype."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P


def made(dtype):
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    s = NamedSharding(mesh, P("x", "y"))
    rows = NamedSharding(mesh, P("x"))
    z = jnp.zeros((8, 16), device=s)
    o = jnp.ones((8, 16), dtype=jnp.bfloat16, device=s)
    f = jnp.full((8, 16), 2, device=rows)
    e = jnp.empty((8, 16), device=NamedSharding(mesh, P(None, "y")))
    r = jnp.arange(16, device=rows)
    r3 = jnp.arange(0, 16, 2, device=NamedSharding(mesh, P("y")))
    rf = jnp.arange(16, dtype=jnp.float32, device=rows)
    ri = jnp.arange(16)
    told = jnp.zeros((4, 8), dtype=dtype)
    told_full = jnp.full((4, 8), 1.0, dtype=dtype)
    one = jnp.full((8, 16), 2, device=jax.devices()[0])  # unknown
    zl = jnp.zeros_like(z, device=rows)
    ol = jnp.ones_like(z, device=s)
    with jax.set_mesh(mesh):
        zm = jnp.zeros((8, 16), device=s)
        rm = jnp.arange(8, device=rows)
        plain = jnp.zeros((8, 16))
        listed = jnp.array([1, 2, 3, 4, 5, 6, 7, 8], device=rows)  # unknown
        converted = jnp.asarray(ri, device=rows)  # unknown
    return z, o, f, e, r, r3, rf, ri, told, told_full, zl, ol, zm, rm, plain, one, listed, converted


def loose(dtype):
    """Called with a dtype the analyzer cannot resolve: the dtypes stay unknown."""
    z = jnp.zeros((4, 8), dtype=dtype)  # unknown
    f = jnp.full((4, 8), 1.0, dtype=dtype)  # unknown
    k = jax.random.normal(jax.random.key(0), (4, 8), dtype=dtype)  # unknown
    r = jnp.arange(0, 8, 1, dtype)  # unknown
    return z, f, k, r


@jax.jit
def traced(a):
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    rows = NamedSharding(mesh, P("x"))
    r = jnp.arange(16, device=rows)
    z = jnp.zeros((8, 16), device=rows)  # unknown
    f = jnp.full((8, 16), 2, device=rows)  # unknown
    head = a[:4]
    cols = a[:, 2:6]
    return r, head, cols


def host_batches(steps):
    """A data loader: NumPy's Generator draws host arrays, sliced into a batch dict."""
    rng = np.random.default_rng(0)
    for _ in range(steps):
        tokens = rng.integers(0, 64, size=(8, 9), dtype=np.int32)
        yield {"inputs": tokens[:, :-1], "targets": tokens[:, 1:]}


def loaded():
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    rows = NamedSharding(mesh, P("x", None))
    for _step, batch in enumerate(host_batches(2)):
        placed = jax.device_put(batch, rows)
        inputs = placed["inputs"]
    draws = jnp.asarray(np.random.default_rng(1).integers(0, 9, (4, 6)), jnp.int32)
    mask = jnp.tril(jnp.ones((4, 4), bool))
    spread = jnp.broadcast_to(jnp.where(mask, 0.0, -1e9), (2, 4, 4))
    return inputs, draws, spread


def main():
    loaded()
    made(jnp.int8)
    loose(getattr(jnp, "float" + "16"))
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    with jax.set_mesh(mesh):
        a = jax.device_put(jnp.zeros((8, 16)), P("x", "y"))
        r, head, cols = traced(a)


main()
