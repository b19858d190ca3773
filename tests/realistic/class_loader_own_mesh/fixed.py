"""A model class and a data class, each built from a shared mesh: the loader places
batches on the mesh the model's parameters live on."""

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P


class ShardedLinearModel:
    def __init__(self, mesh, d_in=16, d_out=8):
        self.mesh = mesh
        w = np.random.default_rng(0).normal(size=(d_in, d_out)).astype(np.float32)
        self.w = jax.device_put(w, NamedSharding(mesh, P(None, "model")))

    def predict(self, x):
        return jnp.tanh(x @ self.w)


class BatchLoader:
    def __init__(self, mesh, batch_size=16, d_in=16):
        self.sharding = NamedSharding(mesh, P("data", None))
        self.batch_size, self.d_in = batch_size, d_in

    def __iter__(self):
        rng = np.random.default_rng(1)
        for _ in range(2):
            yield jax.device_put(rng.normal(size=(self.batch_size, self.d_in)).astype(np.float32),
                                 self.sharding)


@jax.jit
def score(w, x):
    return jnp.tanh(x @ w).mean()


def main():
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    model = ShardedLinearModel(mesh)
    loader = BatchLoader(mesh)
    for batch in loader:
        print(float(score(model.w, batch)))


if __name__ == "__main__":
    main()
