"""Mesh axis names kept as constants: a class's attributes, an enum's members' values
(haliax-style `ResourceAxis.DATA.value`, a project's `class ParallelAxis(enum.Enum):
    data = enum.auto()
    model = enum.auto()


class Axes: BATCH = "data"`) and
an enum's members' names (`ParallelAxis.X.name`, the members made by `enum.auto()`)."""
import enum

import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P


class ResourceAxis(str, enum.Enum):
    DATA = "data"
    MODEL = "model"


class ParallelAxis(enum.Enum):
    data = enum.auto()
    model = enum.auto()


class Axes:
    BATCH = "data"
    EMBED = ("data", "model")


mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Explicit,) * 2)
x = jnp.zeros((8, 8))
a = jax.device_put(x, NamedSharding(mesh, P(ResourceAxis.DATA.value, ResourceAxis.MODEL.value)))
b = jax.device_put(x, NamedSharding(mesh, P(Axes.BATCH, None)))
c = jax.device_put(x, NamedSharding(mesh, P(None, Axes.EMBED)))
d = jax.device_put(x, NamedSharding(mesh, P(ResourceAxis.MODEL.value)))
names = (ParallelAxis.data.name, ParallelAxis.model.name)
named = jax.make_mesh((2, 4), names, axis_types=(AxisType.Explicit,) * 2)
e = jax.device_put(x, NamedSharding(named, P(None, ParallelAxis.model.name)))
