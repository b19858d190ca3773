"""What a set-up method stores on `self`, read by the other methods: unittest's `setUp`
(JetStream's and JAX's tests), and an `__init__` that builds its mesh from locals. An
attribute that another method assigns too stays unknown."""
import unittest

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P


class ShardingTest(unittest.TestCase):
    def setUp(self):
        super().setUp()
        devices = np.array(jax.devices()[:8]).reshape(2, 4)
        self.mesh = Mesh(devices, ("data", "model"))
        self.spec = P("data", None)

    def test_placement(self):
        x = jax.device_put(jnp.zeros((8, 16)), NamedSharding(self.mesh, self.spec))
        return x


class Engine:
    def __init__(self, batch_axis: str = "data"):
        self.mesh = jax.make_mesh((2, 4), ("data", "model"))
        self.batch_axis = batch_axis
        self.layout = P("model")

    def reconfigure(self):
        self.layout = P("data")

    def place(self, x):
        return jax.device_put(x, NamedSharding(self.mesh, P(None, "model")))

    def place_layout(self, x):
        return jax.device_put(x, NamedSharding(self.mesh, self.layout))


case = ShardingTest()
case.setUp()
placed = case.test_placement()
engine = Engine()
by_engine = engine.place(jnp.zeros((8, 16)))
