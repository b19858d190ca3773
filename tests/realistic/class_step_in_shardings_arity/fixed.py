"""A Trainer that builds its jitted step in __init__ with in_shardings and
out_shardings for every argument and result of the step method."""

import jax
import jax.numpy as jnp
import optax
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P


class Trainer:
    def __init__(self, d_in=8, d_out=4, lr=0.05):
        self.mesh = jax.make_mesh((8,), ("data",), axis_types=(AxisType.Auto,))
        self.tx = optax.sgd(lr, momentum=0.9)
        self.params = {"w": jnp.zeros((d_in, d_out)), "b": jnp.zeros((d_out,))}
        self.opt_state = self.tx.init(self.params)
        replicated = NamedSharding(self.mesh, P())
        self.param_sharding = jax.tree.map(lambda _: replicated, self.params)
        self.opt_sharding = jax.tree.map(lambda _: replicated, self.opt_state)
        self.data_sharding = NamedSharding(self.mesh, P("data"))
        self.train_step = jax.jit(
            self._train_step,
            in_shardings=(self.param_sharding, self.opt_sharding,
                          self.data_sharding, self.data_sharding),
            out_shardings=(self.param_sharding, self.opt_sharding, replicated))

    def _train_step(self, params, opt_state, x, y):
        def loss_fn(p):
            return optax.l2_loss(x @ p["w"] + p["b"], y).mean()

        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = self.tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    def run(self, x, y, steps=3):
        for _ in range(steps):
            self.params, self.opt_state, loss = self.train_step(self.params, self.opt_state, x, y)
        return float(loss)


def main():
    trainer = Trainer()
    x, y = jnp.ones((32, 8)), jnp.ones((32, 4))
    print("loss", trainer.run(x, y))


if __name__ == "__main__":
    main()
