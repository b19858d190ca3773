"""An evaluation harness class: it holds the mesh and a parameter sharding, and a
method places each incoming batch before calling the jitted forward pass."""

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P


class Evaluator:
    def __init__(self, params, mesh_shape=(4, 2)):
        self.mesh = jax.make_mesh(mesh_shape, ("data", "model"))
        self.params = jax.device_put(params, self.param_sharding)
        self._forward = jax.jit(self._apply)

    @property
    def param_sharding(self):
        return {"w": NamedSharding(self.mesh, P(None, "model")),
                "b": NamedSharding(self.mesh, P("model"))}

    def batch_sharding(self):
        return NamedSharding(self.mesh, P("batch", None))

    @staticmethod
    def _apply(params, x):
        return jax.nn.log_softmax(x @ params["w"] + params["b"])

    def evaluate(self, batches):
        total, count = 0.0, 0
        for x, labels in batches:
            x = jax.device_put(x, self.batch_sharding())
            with jax.set_mesh(self.mesh):
                logp = self._forward(self.params, x)
            total += float(jnp.sum(logp * jax.nn.one_hot(labels, logp.shape[-1])))
            count += x.shape[0]
        return -total / count


def main():
    params = {"w": jnp.ones((16, 8)) * 0.1, "b": jnp.zeros((8,))}
    evaluator = Evaluator(params)
    batches = [(jnp.ones((8, 16)), jnp.arange(8) % 8) for _ in range(2)]
    print("nll", evaluator.evaluate(batches))


if __name__ == "__main__":
    main()
