"""The training script: the config arrives from an absl flag, so no call is in view."""

import os

import jax
import jax.numpy as jnp
import ml_collections
from jax.sharding import NamedSharding, PartitionSpec as P


def train_and_evaluate(config: ml_collections.ConfigDict, workdir: str):
  vocab_path = config.vocab_path
  if vocab_path is None:
    vocab_path = os.path.join(workdir, "vocab")
    config.vocab_path = vocab_path  # set on one path only: unknown after the if
  mesh = jax.make_mesh(config.mesh_shape, config.mesh_axes)
  data_sharding = NamedSharding(mesh, P(config.data_sharding))
  batch = jax.device_put(jnp.zeros((8, config.emb_dim)), data_sharding)
  hidden = jax.device_put(jnp.zeros((8, config.mlp_dim)), NamedSharding(mesh, P(None, 'model')))
  return batch, hidden, vocab_path
