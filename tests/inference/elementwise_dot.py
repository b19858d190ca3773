"""Elementwise ops, broadcasting, scalars, dtypes and contractions on an Explicit mesh."""
import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P


def main():
    mesh = jax.make_mesh((2, 4), ("x", "y"))
    with jax.set_mesh(mesh):
        a = jax.device_put(jnp.zeros((8, 16)), P("x", None))
        b = jax.device_put(jnp.ones((8, 16)), P(None, "y"))
        r = jax.device_put(jnp.zeros((8, 16)), P())
        v = jax.device_put(jnp.zeros((16,)), P("y"))
        one = jax.device_put(jnp.zeros((1, 16)), P(None, "y"))
        t = jax.device_put(jnp.zeros((8, 16)), P(("x", "y"), None))
        i = jax.device_put(jnp.arange(8), P("x"))
        add = a + b
        add_r = a + r
        bc = a + v
        bc1 = a + one
        tt = t * t
        sc = a * 2
        sc_f = i * 2.0
        i2 = i + 1
        cmp = a > 0
        neg = -a
        div_i = i / 2
        pw = a ** 2
        mx = jnp.maximum(a, b)
        ex = jnp.exp(i)
        rl = jax.nn.relu(b)
        gl = jax.nn.gelu(a)
        sq = jnp.sqrt(8)
        w = jax.device_put(jnp.zeros((16, 32)), P(None, "y"))
        w_r = jax.device_put(jnp.zeros((16, 32)), P("y", None))
        ab = jax.device_put(jnp.zeros((8, 16)), P("x", "y"))
        mm = a @ w
        one_side = a @ w_r
        one_side_l = ab @ jnp.zeros((16, 32))
        out = jnp.dot(ab, w_r, out_sharding=P("x", None))
        unred = jnp.dot(ab, w_r, out_sharding=P("x", None, unreduced={"y"}))
        vec = a @ jnp.zeros((16,))
        vec_l = v @ jnp.zeros((16, 32))
        x3 = jax.device_put(jnp.zeros((2, 8, 16)), P("x", None, None))
        y3 = jax.device_put(jnp.zeros((2, 16, 32)), P("x", None, "y"))
        e3 = jnp.einsum("bij,bjk->bik", x3, y3)
        mm3 = x3 @ w
        outer = jnp.einsum("i,j->ij", i.astype(jnp.float32), v)
        red = jnp.einsum("ij->i", ab)
        tr_e = jnp.einsum("ij->ji", ab)
        bf = a.astype(jnp.bfloat16)
        mixed = bf + a
        bf_mm = bf @ w
        dg = jax.lax.dot_general(a, w, (((1,), (0,)), ((), ())))
        arr = jnp.array([1.0, 2.0])
        arr_i = jnp.array([[1, 2], [3, 4]])
        scal = jnp.asarray(1.0)
        z = jnp.zeros((8, 16), out_sharding=P("x"))
        zl = jnp.zeros_like(a)
        keys = jax.random.split(jax.random.key(0), 3)
        nrm = jax.random.normal(keys[0], (4, 4), dtype=jnp.bfloat16)
        ri = jax.random.randint(keys[1], (4,), 0, 10)
    return add, out, unred


if __name__ == "__main__":
    main()
