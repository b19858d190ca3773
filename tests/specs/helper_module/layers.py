"""A model layer that calls a helper imported from another module of the project with
names it stores in ``__init__``, and declares its parameters' shardings as NNX metadata
(``out_sharding=``, and ``sharding=`` as flax before 0.12 spelled it)."""
from typing import Any

import jax.numpy as jnp
from flax import nnx
from shard_utils import maybe_shard_with_logical


class MlpBlock(nnx.Module):
    def __init__(self, config: Any, mesh, *, rngs: nnx.Rngs):
        self.config = config
        self.mesh = mesh
        self.activation_axis_names = ("activation_batch", "activation_length", "activation_embed")
        self.wi = nnx.Param(jnp.zeros((config.emb_dim, 4 * config.emb_dim)), out_sharding=("embed", "mlp"))
        self.wo = nnx.Param(jnp.zeros((4 * config.emb_dim, config.emb_dim)), sharding=("mlp", "embed"))

    def shard_in(self, x):
        return maybe_shard_with_logical(x, self.activation_axis_names, self.mesh, self.config.shard_mode)

    def __call__(self, x):
        return self.shard_in(x) @ self.wi @ self.wo


class Einsum(nnx.Module):
    def __init__(self, shape, *, sharding):
        self.w = nnx.Param(jnp.zeros(shape), out_sharding=sharding)


class Attention(nnx.Module):
    """Its parameters' shardings are passed to the module that declares them."""

    def __init__(self, config: Any):
        self.q = Einsum((config.emb_dim, 4), sharding=("embed", None))
        self.o = Einsum((4, config.emb_dim), sharding=(None, "embed"))
