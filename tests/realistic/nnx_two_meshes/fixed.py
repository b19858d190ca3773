"""An NNX model built on a 2-D ("data", "model") mesh and an input pipeline that
places batches on a mesh of its own; the eval step runs under the model's mesh."""

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx
from jax.sharding import NamedSharding, PartitionSpec as P


class Scorer(nnx.Module):
    def __init__(self, features: int, rngs: nnx.Rngs):
        init = nnx.initializers.lecun_normal()
        self.proj = nnx.Linear(features, 32, rngs=rngs,
                               kernel_init=nnx.with_partitioning(init, (None, "model")),
                               bias_init=nnx.with_partitioning(nnx.initializers.zeros, ("model",)))
        self.score = nnx.Linear(32, 1, rngs=rngs,
                                kernel_init=nnx.with_partitioning(init, ("model", None)))

    def __call__(self, x):
        h = nnx.tanh(self.proj(x))
        return self.score(h, out_sharding=P("data", None))[:, 0]


class InputPipeline:
    def __init__(self, mesh, batch_size: int, features: int):
        self.sharding = NamedSharding(mesh, P("data", None))
        self.batch_size, self.features = batch_size, features

    def __iter__(self):
        rng = np.random.default_rng(0)
        for _ in range(2):
            x = rng.normal(size=(self.batch_size, self.features)).astype(np.float32)
            yield jax.device_put(x, self.sharding)


@nnx.jit
def eval_step(model, x):
    return jnp.mean(model(x))


def main():
    model_mesh = jax.make_mesh((2, 4), ("data", "model"))
    pipeline = InputPipeline(model_mesh, batch_size=16, features=8)
    with jax.set_mesh(model_mesh):
        model = Scorer(8, nnx.Rngs(0))
        for x in pipeline:
            print(float(eval_step(model, x)))


if __name__ == "__main__":
    main()
