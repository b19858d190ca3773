"""The DotReluDot block of Flax's NNX GSPMD guide, run on an Explicit mesh: the hidden
activation is brought back to a batch-only sharding before the second matmul."""

import jax
import jax.numpy as jnp
import optax
from flax import nnx
from jax.sharding import PartitionSpec as P


class DotReluDot(nnx.Module):
    def __init__(self, depth: int, rngs: nnx.Rngs):
        init_fn = nnx.initializers.lecun_normal()
        self.dot1 = nnx.Linear(depth, depth, use_bias=False, rngs=rngs,
                               kernel_init=nnx.with_partitioning(init_fn, (None, "model")))
        self.w2 = nnx.Param(nnx.with_partitioning(init_fn, ("model", None))(
            rngs.params(), (depth, depth)))

    def __call__(self, x: jax.Array):
        y = self.dot1(x)
        y = jax.nn.relu(y)
        # all-gather the hidden features: the second matmul runs data-parallel
        y = jax.lax.with_sharding_constraint(y, P("data", None))
        w2 = jax.sharding.reshard(self.w2[...], P())
        return jnp.dot(y, w2)


@nnx.jit
def train_step(model, optimizer, x, y):
    def loss_fn(model):
        return ((model(x) - y) ** 2).mean()

    loss, grads = nnx.value_and_grad(loss_fn)(model)
    optimizer.update(model, grads)
    return loss


def main():
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    with jax.set_mesh(mesh):
        model = DotReluDot(32, rngs=nnx.Rngs(0))
        optimizer = nnx.Optimizer(model, optax.adam(1e-3), wrt=nnx.Param)
        x = jax.random.normal(jax.random.key(1), (8, 32), out_sharding=P("data", None))
        y = jax.random.normal(jax.random.key(2), (8, 32), out_sharding=P("data", None))
        for _ in range(2):
            loss = train_step(model, optimizer, x, y)
    print("loss", float(loss))


if __name__ == "__main__":
    main()
