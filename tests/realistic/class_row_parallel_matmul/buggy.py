"""An inference wrapper class that holds the mesh and the weights of a tensor-parallel
MLP; its forward pass chooses the output sharding of the row-parallel matmul."""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P


class TensorParallelMLP:
    def __init__(self, d_model=32, d_ff=128, seed=0):
        self.mesh = jax.make_mesh((2, 4), ("data", "model"))
        k1, k2 = jax.random.split(jax.random.key(seed))
        with jax.set_mesh(self.mesh):
            # column-parallel then row-parallel (Megatron)
            self.w_up = jax.random.normal(k1, (d_model, d_ff), out_sharding=P(None, "model")) * 0.02
            self.w_down = jax.random.normal(k2, (d_ff, d_model), out_sharding=P("model", None)) * 0.02
        self._forward = jax.jit(self.forward)

    def forward(self, x):
        h = jax.nn.gelu(x @ self.w_up)  # [batch@data, d_ff@model]
        return jnp.matmul(h, self.w_down)

    def __call__(self, x):
        with jax.set_mesh(self.mesh):
            x = jax.sharding.reshard(x, P("data", None))
            return self._forward(x)

    @property
    def num_params(self):
        return self.w_up.size + self.w_down.size

    def score(self, batches):
        """Mean squared activation over a stream of batches."""
        total = 0.0
        for x in batches:
            total += float(jnp.mean(self(x) ** 2))
        return total / len(batches)


def main():
    mlp = TensorParallelMLP()
    batches = [jnp.full((8, 32), 0.1 * i) for i in range(3)]
    print(mlp.num_params, mlp.score(batches))


if __name__ == "__main__":
    main()
