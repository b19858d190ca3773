"""A MaxText-shaped script: the run's config object is made from configs/base.yml (the
test writes it) by a loader not in view, passed around as ``config`` (``self.config``)."""
import jax
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P


def create_mesh(config):
    return jax.make_mesh(tuple(config.mesh_shape), tuple(config.mesh_axes))


def shard_batch(config, batch):
    mesh = create_mesh(config)
    data_sharding = NamedSharding(mesh, P(*config.data_sharding))
    return jax.device_put(batch, data_sharding)


class Trainer:
    def __init__(self, config):
        self.config = config

    def place_embedding(self, table):
        mesh = create_mesh(self.config)
        return jax.device_put(table, NamedSharding(mesh, P(*self.config.embed_sharding)))


class HyperParameters:
    """The loader's config object: its keys are read through ``__getattr__``."""

    def __init__(self, values):
        self._values = values

    def __getattr__(self, key):
        return self._values[key]


CONFIG = None  # the loader sets it when the run starts


def shard_tokens(config: HyperParameters, tokens):
    mesh = create_mesh(config)
    return jax.device_put(tokens, NamedSharding(mesh, P(*config.data_sharding)))


def main(tokens):
    return shard_tokens(CONFIG, tokens)
