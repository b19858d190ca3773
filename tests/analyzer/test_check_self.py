"""``check`` in a method: ``self.mesh`` as the class's set-up stores it (``__init__``,
unittest's ``setUp``), where nothing else can have stored another. Each program is run
under JAX too: a finding is where JAX raises, and a program left alone runs."""

from __future__ import annotations

import pytest

from shardcheck.analyzer.engine import check_source

HEAD = """\
import unittest
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
"""

# (program, the rows of its SC101 findings); each runs to the end or raises where found
CASES = {
    "set_up": ("""
class T(unittest.TestCase):
    def setUp(self):
        super().setUp()
        self.mesh = jax.make_mesh((2, 4), ("data", "model"))

    def test_place(self):
        return jax.device_put(jnp.zeros((8, 16)), NamedSharding(self.mesh, P("data", "modle")))

t = T("test_place")
t.setUp()
t.test_place()
""", [12]),
    "init_and_context": ("""
class Trainer:
    def __init__(self, steps):
        self.steps = steps
        self.mesh = jax.make_mesh((2, 4), ("data", "model"))

    def run(self, x):
        with jax.set_mesh(self.mesh):
            return jax.device_put(x, P("dat"))

Trainer(3).run(jnp.zeros((8, 16)))
""", [13]),
    "a_subclass_stores_another": ("""
class Base:
    def __init__(self):
        self.mesh = jax.make_mesh((2, 4), ("data", "model"))

    def place(self, x):
        return jax.device_put(x, NamedSharding(self.mesh, P("batch")))

class Sub(Base):
    def __init__(self):
        self.mesh = jax.make_mesh((8,), ("batch",))

Sub().place(jnp.zeros(8))
""", []),
    "a_base_of_the_project": ("""
class Base:
    def __init__(self):
        self.__dict__["mesh"] = jax.make_mesh((8,), ("batch",))

class Trainer(Base):
    def __init__(self):
        self.mesh = jax.make_mesh((2, 4), ("data", "model"))
        super().__init__()

    def place(self, x):
        return jax.device_put(x, NamedSharding(self.mesh, P("batch")))

Trainer().place(jnp.zeros(8))
""", []),
    "stored_on_a_branch_of_one_line": ("""
class Trainer:
    def __init__(self, batch):
        self.mesh = jax.make_mesh((2, 4), ("data", "model"))
        if batch: self.mesh = jax.make_mesh((8,), ("batch",))

    def place(self, x):
        return jax.device_put(x, NamedSharding(self.mesh, P("batch")))

Trainer(True).place(jnp.zeros(8))
""", []),
    "given_by_the_caller": ("""
class Trainer:
    def __init__(self, mesh):
        self.mesh = mesh

    def place(self, x):
        return jax.device_put(x, NamedSharding(self.mesh, P("batch")))

Trainer(jax.make_mesh((8,), ("batch",))).place(jnp.zeros(8))
""", []),
    "set_by_name": ("""
class Trainer:
    def __init__(self):
        self.mesh = jax.make_mesh((2, 4), ("data", "model"))

    def place(self, x):
        return jax.device_put(x, NamedSharding(self.mesh, P("batch")))

t = Trainer()
setattr(t, "mesh", jax.make_mesh((8,), ("batch",)))
t.place(jnp.zeros(8))
""", []),
    "a_static_method": ("""
class Trainer:
    def __init__(self):
        self.mesh = jax.make_mesh((2, 4), ("data", "model"))

    @staticmethod
    def place(self, x):
        return jax.device_put(x, NamedSharding(self.mesh, P("batch")))

class Holder:
    mesh = jax.make_mesh((8,), ("batch",))

Trainer.place(Holder(), jnp.zeros(8))
""", []),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_set_up_mesh_in_check(name):
    program, rows = CASES[name]
    found = [(f.code, f.row) for f in check_source(HEAD + program, "m.py")
             if f.severity == "error"]
    assert found == [("SC101", r) for r in rows]


def test_jax_agrees():
    from jax_snippets import run_snippets
    names = sorted(CASES)
    results = run_snippets([HEAD + CASES[n][0] for n in names])
    for name, res in zip(names, results):
        if CASES[name][1]:
            assert res["status"] == "error" and "not found in mesh" in res["error"], (name, res)
        else:
            assert res["status"] == "ok", (name, res)

