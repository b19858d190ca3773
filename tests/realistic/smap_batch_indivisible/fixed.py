"""Per-example gradient norms for DP-SGD computed in a shard_map over the batch: each
device clips its examples' gradients and the clipped sum is reduced over "data"."""

import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

CLIP = 1.0


def per_example_loss(w, x, y):
    return (jnp.dot(x, w) - y) ** 2


def clipped_grad_sum(w, xs, ys):
    grads = jax.vmap(jax.grad(per_example_loss), in_axes=(None, 0, 0))(w, xs, ys)
    norms = jnp.linalg.norm(grads, axis=-1, keepdims=True)
    clipped = grads * jnp.minimum(1.0, CLIP / (norms + 1e-6))
    return jax.lax.psum(clipped.sum(0), "data")


def dp_sgd_step(mesh, w, xs, ys, lr=0.1, noise=0.01):
    g = jax.shard_map(clipped_grad_sum, mesh=mesh,
                      in_specs=(P(), P("data", None), P("data")), out_specs=P())(w, xs, ys)
    g = g + noise * jax.random.normal(jax.random.key(0), g.shape)
    return w - lr * g / xs.shape[0]


def main():
    mesh = jax.make_mesh((4,), ("data",), axis_types=(AxisType.Auto,), devices=jax.devices()[:4])
    batch_size, dim = 16, 8
    xs = jax.random.normal(jax.random.key(1), (batch_size, dim))
    ys = xs @ jnp.arange(dim, dtype=jnp.float32)
    w = jax.device_put(jnp.zeros((dim,)), NamedSharding(mesh, P()))
    step = jax.jit(dp_sgd_step, static_argnums=0)
    for _ in range(3):
        w = step(mesh, w, xs, ys)
    print(w)


if __name__ == "__main__":
    main()
