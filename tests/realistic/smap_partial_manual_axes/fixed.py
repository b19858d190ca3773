"""Pipeline-style microbatch accumulation: a shard_map manual over the "stage" axis only
(axis_names), leaving "data" to the compiler; its specs may name only the manual axis."""

import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P


def stage_forward(w, x):
    # w: this stage's weights [1, d, d]; x: the microbatches [m, b, d]
    stage = jax.lax.axis_index("stage")
    y = jnp.tanh(x @ w[0])
    # pass activations to the next stage (a one-step ring)
    n = jax.lax.psum(1, "stage")
    y = jax.lax.ppermute(y, "stage", [(i, (i + 1) % n) for i in range(n)])
    return jnp.where(stage == 0, x, y)[None]  # one slot per stage


def build(mesh):
    return jax.jit(jax.shard_map(stage_forward, mesh=mesh,
                                 in_specs=(P("stage"), P()),
                                 out_specs=P("stage"),
                                 axis_names={"stage"}))


def main():
    mesh = jax.make_mesh((4, 2), ("stage", "data"), axis_types=(AxisType.Auto,) * 2)
    forward = build(mesh)
    weights = jax.device_put(jnp.stack([jnp.eye(8) * (i + 1) for i in range(4)]),
                             NamedSharding(mesh, P("stage")))
    micro = jax.device_put(jnp.ones((2, 4, 8)), NamedSharding(mesh, P(None, "data")))
    out = forward(weights, micro)
    last = out[-1]  # what the last stage received
    print(out.shape, float(pipeline_loss(last, jnp.zeros_like(last))))


def pipeline_loss(outputs, targets):
    """Mean squared error over every microbatch."""
    per_micro = jnp.mean((outputs - targets) ** 2, axis=(1, 2))
    return per_micro.mean()


if __name__ == "__main__":
    main()
