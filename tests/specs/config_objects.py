"""Meshes and specs kept in config objects, with no caller in view: the map reads their
fields as the defaults the classes declare, and says which (``check`` never does)."""
import dataclasses

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P


@dataclasses.dataclass(frozen=True)
class MeshConfig:
    shape: tuple = (2, 4)
    axes: tuple = ("data", "model")


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    mesh: MeshConfig = MeshConfig()
    data_sharding: tuple = ("data",)
    hidden: tuple = (None, "model")

    @property
    def hidden_spec(self):
        return P(*self.hidden)


def place_batch(config: TrainConfig, batch):
    mesh = jax.make_mesh(config.mesh.shape, config.mesh.axes)
    return jax.device_put(batch, NamedSharding(mesh, P(config.data_sharding)))


class Layer:
    config: TrainConfig  # a field with no default: an instance of its annotated class

    def place(self, w):
        mesh = jax.make_mesh(self.config.mesh.shape, self.config.mesh.axes)
        return jax.device_put(w, NamedSharding(mesh, self.config.hidden_spec))


class Holder:
    def __init__(self, spec):
        self.spec = spec  # set per instance: the class cannot say what it holds

    def place(self, mesh, x):
        return jax.device_put(x, NamedSharding(mesh, self.spec))


explicit = TrainConfig(data_sharding=("model",))
mesh = jax.make_mesh((2, 4), ("data", "model"))
moved = jax.device_put(jnp.zeros((8, 8)), NamedSharding(mesh, P(explicit.data_sharding)))
