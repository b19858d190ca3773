"""A Flax NNX transformer MLP block whose kernels carry logical axis names; a rule
table maps them onto a ("data", "model") mesh while the model is built."""

import jax
import jax.numpy as jnp
import optax
from flax import nnx
from jax.sharding import NamedSharding, PartitionSpec as P

EMBED, HIDDEN, BATCH = 16, 64, 8

# logical name -> mesh axis, as a t5x/MaxText-style table
LOGICAL_RULES = (
    ("batch", "data"),
    ("embed", None),
    ("mlp", "model"),
)


class MlpBlock(nnx.Module):
    def __init__(self, embed: int, hidden: int, *, rngs: nnx.Rngs):
        init = nnx.initializers.lecun_normal()
        self.wi = nnx.Linear(embed, hidden, use_bias=False, rngs=rngs,
                             kernel_init=nnx.with_partitioning(init, ("embed", "mlp")))
        self.wo = nnx.Linear(hidden, embed, use_bias=False, rngs=rngs,
                             kernel_init=nnx.with_partitioning(init, ("mlp", "embed")))
        self.norm = nnx.LayerNorm(embed, rngs=rngs)

    def __call__(self, x):
        h = jax.nn.gelu(self.wi(self.norm(x)))
        # row-parallel: the contraction over "mlp" is summed into a batch-sharded output
        return x + self.wo(h, out_sharding=P("data", None))


@nnx.jit
def train_step(model, optimizer, x, y):
    def loss_fn(model):
        return jnp.mean((model(x) - y) ** 2)

    loss, grads = nnx.value_and_grad(loss_fn)(model)
    optimizer.update(model, grads)
    return loss


def main():
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    with jax.set_mesh(mesh), nnx.logical_axis_rules(LOGICAL_RULES):
        model = MlpBlock(EMBED, HIDDEN, rngs=nnx.Rngs(0))
        optimizer = nnx.Optimizer(model, optax.adamw(1e-3), wrt=nnx.Param)
        specs = nnx.get_partition_spec(nnx.state(model, nnx.Param))
        print(jax.tree.leaves(specs))
        x = jax.device_put(jnp.ones((BATCH, EMBED)), NamedSharding(mesh, P("data", None)))
        y = jnp.zeros((BATCH, EMBED), out_sharding=P("data", None))
        for _ in range(2):
            loss = train_step(model, optimizer, x, y)
    print("loss", float(loss))


if __name__ == "__main__":
    main()
