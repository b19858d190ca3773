"""A Linen decoder whose parameters are created directly sharded: the abstract
variables' logical specs become NamedShardings for a jitted init (the Flax pjit guide)."""

import functools

import jax
import jax.numpy as jnp
from flax import linen as nn
from jax.experimental import mesh_utils
from jax.sharding import Mesh

VOCAB_SIZE = 512
EMBED_DIM = 32
RULES = (("batch", "data"), ("vocab", "model"), ("embed", None), ("mlp", "model"))


class Decoder(nn.Module):
    vocab_size: int
    embed_dim: int

    @nn.compact
    def __call__(self, tokens):
        embed = nn.Embed(self.vocab_size, self.embed_dim,
                         embedding_init=nn.with_logical_partitioning(
                             nn.initializers.normal(0.02), ("vocab", "embed")))
        x = embed(tokens)
        x = nn.with_logical_constraint(x, ("batch", None, "embed"))
        h = nn.Dense(4 * self.embed_dim, kernel_init=nn.with_logical_partitioning(
            nn.initializers.lecun_normal(), ("embed", "mlp")))(x)
        x = x + nn.Dense(self.embed_dim, kernel_init=nn.with_logical_partitioning(
            nn.initializers.lecun_normal(), ("mlp", "embed")))(nn.gelu(h))
        return embed.attend(x)


def init_fn(model, rng, tokens):
    return model.init(rng, tokens)


def main():
    mesh = Mesh(mesh_utils.create_device_mesh((2, 4)), ("data", "model"))
    model = Decoder(VOCAB_SIZE, EMBED_DIM)
    tokens = jnp.zeros((8, 16), jnp.int32)
    rng = jax.random.key(0)
    with jax.set_mesh(mesh), nn.logical_axis_rules(RULES):
        abstract = jax.eval_shape(functools.partial(init_fn, model), rng, tokens)
        logical_specs = nn.get_partition_spec(abstract)
        shardings = nn.logical_to_mesh_sharding(logical_specs, mesh, RULES)
        init = jax.jit(init_fn, static_argnums=0, out_shardings=shardings)
        variables = init(model, rng, tokens)
        logits = jax.jit(model.apply)(variables, tokens)
    print(logits.shape, variables["params"]["Embed_0"]["embedding"].value.sharding.spec)


if __name__ == "__main__":
    main()
