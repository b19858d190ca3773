"""An ml_collections config as Flax's examples write them (lm1b, wmt)."""

import ml_collections


def get_config():
  config = ml_collections.ConfigDict()
  config.emb_dim = 16
  config.mlp_dim = 32
  config.mesh_shape = (2, 4)
  config.mesh_axes = ['data', 'model']
  config.logical_axis_rules = [
      ['batch', 'data'],
      ['mlp', 'model'],
      ['embed', None],
  ]
  config.data_sharding = ['data']
  config.vocab_path = None
  return config
