"""A small trainer hierarchy: the base class builds the mesh and places every parameter
by a per-parameter spec that subclasses choose; the tensor-parallel subclass shards
kernels by column and biases by their only dim."""

import jax
import jax.numpy as jnp
import optax
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P


class BaseTrainer:
    mesh_shape = (8,)
    axis_names = ("data",)

    def __init__(self, params, learning_rate=1e-2):
        self.mesh = jax.make_mesh(self.mesh_shape, self.axis_names,
                                  axis_types=(AxisType.Auto,) * len(self.axis_names))
        self.params = {k: jax.device_put(v, NamedSharding(self.mesh, self.spec_for(k, v)))
                       for k, v in params.items()}
        self.tx = optax.adam(learning_rate)
        self.opt_state = self.tx.init(self.params)

    def spec_for(self, name, value):
        return P()

    def loss(self, params, x, y):
        h = jnp.tanh(x @ params["kernel"] + params["bias"])
        return jnp.mean((h.sum(-1) - y) ** 2)

    def step(self, x, y):
        loss, grads = jax.jit(jax.value_and_grad(self.loss))(self.params, x, y)
        updates, self.opt_state = self.tx.update(grads, self.opt_state)
        self.params = optax.apply_updates(self.params, updates)
        return float(loss)


class TensorParallelTrainer(BaseTrainer):
    mesh_shape = (2, 4)
    axis_names = ("data", "model")

    def __init__(self, params):
        super().__init__(params, learning_rate=3e-3)

    def spec_for(self, name, value):
        if name == "kernel":
            return P(None, "model")
        return P("model")


def main():
    params = {"kernel": jnp.ones((16, 32)) * 0.1, "bias": jnp.zeros((32,))}
    trainer = TensorParallelTrainer(params)
    x = jax.device_put(jnp.ones((8, 16)), NamedSharding(trainer.mesh, P("data", None)))
    print("loss", trainer.step(x, jnp.zeros((8,))))


if __name__ == "__main__":
    main()
