"""Functional NNX training: the model is split into a graphdef and a state, and the
state's shardings (from its logical annotations) are given to jax.jit."""

import jax
import jax.numpy as jnp
from flax import nnx
from jax.sharding import NamedSharding, PartitionSpec as P

RULES = (("embed", None), ("mlp", "model"), ("batch", "data"))


class Encoder(nnx.Module):
    def __init__(self, rngs: nnx.Rngs):
        init = nnx.initializers.lecun_normal()
        self.w_in = nnx.Linear(8, 32, rngs=rngs, use_bias=False,
                               kernel_init=nnx.with_partitioning(init, ("embed", "mlp")))
        self.w_out = nnx.Linear(32, 8, rngs=rngs, use_bias=False,
                                kernel_init=nnx.with_partitioning(init, ("mlp", "embed")))

    def __call__(self, x):
        return self.w_out(nnx.relu(self.w_in(x)), out_sharding=P("data", None))


def build(mesh):
    with jax.set_mesh(mesh), nnx.logical_axis_rules(RULES):
        model = Encoder(nnx.Rngs(0))
        graphdef, state = nnx.split(model)
        state_shardings = nnx.get_named_sharding(state, mesh)
    return graphdef, state, state_shardings


def sgd_step(graphdef, state, x):
    def loss_fn(state):
        model = nnx.merge(graphdef, state)
        return jnp.mean(model(x) ** 2)

    loss, grads = jax.value_and_grad(loss_fn)(state)
    state = jax.tree.map(lambda p, g: p - 0.1 * g, state, grads)
    return state, loss


def main():
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    graphdef, state, state_shardings = build(mesh)
    x_sharding = NamedSharding(mesh, P("data", None))
    step = jax.jit(sgd_step, static_argnums=0,
                   in_shardings=(state_shardings, x_sharding),
                   out_shardings=state_shardings)
    with jax.set_mesh(mesh):
        x = jax.device_put(jnp.ones((8, 8)), x_sharding)
        for _ in range(2):
            state, loss = step(graphdef, state, x)
    print("loss", float(loss))


if __name__ == "__main__":
    main()
