"""``check`` follows objects (``analyzer/interp/instances.py``): a class called in view
runs its constructor on the call's arguments, and its instances' attributes hold what
the constructor stored, where nothing else can have replaced it.

Each program runs under JAX too (``test_jax_agrees``): a program with an expected
finding raises there (the message named), and every other program runs to its end. The
line of each expected finding is marked ``# <- CODE`` in the program."""

from __future__ import annotations


from marked_programs import case_tests


HEAD = """\
import dataclasses
from typing import NamedTuple
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
"""

NOT_IN_MESH = "not found in mesh"
NOT_DIVISIBLE = "evenly divide"

# name -> (program, the message JAX raises with, or None where the program runs)
CASES = {
    "dataclass_default_axis": ("""
@dataclasses.dataclass
class Parallel:
    mesh_shape: tuple = (2, 4)
    axes: tuple = ("data", "model")
    tensor_axis: str = "tensor"

def main():
    cfg = Parallel()
    mesh = jax.make_mesh(cfg.mesh_shape, cfg.axes)
    w = jnp.zeros((16, 32))
    return jax.device_put(w, NamedSharding(mesh, P(None, cfg.tensor_axis)))  # <- SC101

main()
""", NOT_IN_MESH),
    "dataclass_default_factory": ("""
@dataclasses.dataclass
class Parallel:
    axes: tuple = ("data", "model")
    tensor_axis: str = "tensor"

@dataclasses.dataclass
class Train:
    batch: int = 16
    parallel: Parallel = dataclasses.field(default_factory=Parallel)

def place(cfg: Train):
    mesh = jax.make_mesh((2, 4), cfg.parallel.axes)
    return jax.device_put(jnp.zeros((cfg.batch, 8)),
                          NamedSharding(mesh, P(cfg.parallel.tensor_axis)))  # <- SC101

place(Train())
""", NOT_IN_MESH),
    "frozen_field_from_the_call": ("""
@dataclasses.dataclass(frozen=True)
class Model:
    vocab: int
    d_model: int = 32

def place(cfg, mesh):
    table = jnp.zeros((cfg.vocab, cfg.d_model))
    return jax.device_put(table, NamedSharding(mesh, P("model", None)))  # <- SC104

place(Model(vocab=257), jax.make_mesh((2, 4), ("data", "model")))
""", NOT_DIVISIBLE),
    "named_tuple_defaults": ("""
class MeshConfig(NamedTuple):
    data: int = 2
    model: int = 4

def build(cfg: MeshConfig):
    mesh = jax.make_mesh((cfg.data, cfg.model), ("data", "model"))
    return jax.device_put(jnp.zeros((6, 8)), NamedSharding(mesh, P("model", None)))  # <- SC104

build(MeshConfig())
""", NOT_DIVISIBLE),
    "named_tuple_iterates_over_its_fields": ("""
class Degrees(NamedTuple):
    data: int = 1
    model: int = 1

def mesh_shape(ici: Degrees, dcn: Degrees):
    return tuple(i * d for i, d in zip(ici, dcn))

mesh = jax.make_mesh(mesh_shape(Degrees(2, 2), Degrees(model=2)), ("data", "model"))
x = jax.device_put(jnp.zeros((6, 8)), NamedSharding(mesh, P(None, ("data", "model"))))
y = jax.device_put(jnp.zeros((8, 6)), NamedSharding(mesh, P(None, "model")))  # <- SC104
""", NOT_DIVISIBLE),
    "a_bound_method_under_value_and_grad": ("""
class Regression:
    def __init__(self, mesh):
        self.mesh = mesh

    def local_loss(self, w, x):
        return jnp.sum(x @ w)

    def grads(self, w, x):
        loss, g = jax.value_and_grad(self.local_loss)(w, x)
        return loss, g

    def step(self, w, x):
        f = jax.shard_map(self.grads, mesh=self.mesh, in_specs=(P(), P("data", None)),
                          out_specs=(P(), P()))  # <- SC201
        return f(w, x)

mesh = jax.make_mesh((8,), ("data",))
x = jax.device_put(jnp.ones((32, 8)), NamedSharding(mesh, P("data", None)))
Regression(mesh).step(jnp.zeros((8,)), x)
""", "out_specs"),
    "replace_changes_a_field": ("""
@dataclasses.dataclass(frozen=True)
class Config:
    batch_axis: str = "data"

def place(cfg):
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    return jax.device_put(jnp.zeros((8, 8)), NamedSharding(mesh, P(cfg.batch_axis)))  # <- SC101

place(dataclasses.replace(Config(), batch_axis="batch"))
""", NOT_IN_MESH),
    "init_stores_the_mesh": ("""
class Trainer:
    def __init__(self, tp):
        devices = np.array(jax.devices()).reshape(-1, tp)
        self.mesh = Mesh(devices, ("data", "model"))

    def place(self, x):
        return jax.device_put(x, NamedSharding(self.mesh, P("model", None)))  # <- SC104

Trainer(tp=4).place(jnp.zeros((257, 4)))
""", NOT_DIVISIBLE),
    "super_init_stores_the_mesh": ("""
class Base:
    def __init__(self, axes):
        self.mesh = jax.make_mesh((2, 4), axes)

class Trainer(Base):
    def __init__(self, axes, batch):
        super().__init__(axes)
        self.batch = batch

    def place(self):
        return jax.device_put(jnp.zeros((self.batch, 8)),
                              NamedSharding(self.mesh, P("data", None)))  # <- SC104

Trainer(("data", "model"), batch=7).place()
""", NOT_DIVISIBLE),
    "base_init_called_by_name": ("""
class Base:
    def __init__(self, axes):
        self.mesh = jax.make_mesh((2, 4), axes)

class Trainer(Base):
    def __init__(self):
        Base.__init__(self, ("data", "model"))

    def place(self, x):
        return jax.device_put(x, NamedSharding(self.mesh, P("batch")))  # <- SC101

Trainer().place(jnp.zeros(8))
""", NOT_IN_MESH),
    "a_method_init_calls_stores": ("""
class Trainer:
    def __init__(self, shape):
        self._build(shape)

    def _build(self, shape):
        self.mesh = jax.make_mesh(shape, ("data", "model"))

    def place(self, x):
        return jax.device_put(x, NamedSharding(self.mesh, P("batch")))  # <- SC101

Trainer((2, 4)).place(jnp.zeros(8))
""", NOT_IN_MESH),
    "a_property": ("""
class Config:
    def __init__(self, n):
        self.n = n

    @property
    def mesh(self):
        return jax.make_mesh((2, self.n), ("data", "model"))

def place(cfg):
    return jax.device_put(jnp.zeros((8, 6)), NamedSharding(cfg.mesh, P(None, "model")))  # <- SC104

place(Config(4))
""", NOT_DIVISIBLE),
    "a_callable_instance": ("""
class Placer:
    def __init__(self, mesh, spec):
        self.sharding = NamedSharding(mesh, spec)

    def __call__(self, x):
        return jax.device_put(x, self.sharding)

place = Placer(jax.make_mesh((2, 4), ("data", "model")), P("model"))  # <- SC104
place(jnp.zeros(6))
""", NOT_DIVISIBLE),
    "post_init_derives_a_field": ("""
@dataclasses.dataclass
class Cache:
    heads: int
    tp: int = 4

    def __post_init__(self):
        self.mesh = jax.make_mesh((8 // self.tp, self.tp), ("data", "model"))

    def alloc(self):
        return jax.device_put(jnp.zeros((self.heads, 16)),
                              NamedSharding(self.mesh, P("model", None)))  # <- SC104

Cache(heads=6).alloc()
""", NOT_DIVISIBLE),
    "a_one_line_branch_runs": ("""
def place(big):
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    if big: mesh = jax.make_mesh((8,), ("batch",))
    return jax.device_put(jnp.zeros(8), NamedSharding(mesh, P("batch")))

place(True)
""", None),
    "a_dict_entry_assigned": ("""
def place():
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    specs = {"w": P("data")}
    specs["w"] = P("modle")  # <- SC101
    return jax.device_put(jnp.zeros(8), NamedSharding(mesh, specs["w"]))

place()
""", NOT_IN_MESH),
    # what the analysis cannot know stays unknown: these run under JAX
    "replaced_by_another_method": ("""
class Trainer:
    def __init__(self):
        self.mesh = jax.make_mesh((2, 4), ("data", "model"))

    def use_batch_mesh(self):
        self.mesh = jax.make_mesh((8,), ("batch",))

    def place(self, x):
        return jax.device_put(x, NamedSharding(self.mesh, P("batch")))

def run(t):
    t.use_batch_mesh()

t = Trainer()
run(t)
t.place(jnp.zeros(8))
""", None),
    "replaced_by_a_function_given_it": ("""
class Trainer:
    def __init__(self):
        self.mesh = jax.make_mesh((2, 4), ("data", "model"))

    def place(self, x):
        return jax.device_put(x, NamedSharding(self.mesh, P("batch")))

def configure(t):
    t.mesh = jax.make_mesh((8,), ("batch",))

t = Trainer()
configure(t)
t.place(jnp.zeros(8))
""", None),
    "a_method_the_receiver_calls_replaces_it": ("""
class Trainer:
    def __init__(self):
        self.mesh = jax.make_mesh((2, 4), ("data", "model"))

    def reset(self):
        self.mesh = jax.make_mesh((8,), ("batch",))

    def place(self, x):
        return jax.device_put(x, NamedSharding(self.mesh, P("batch")))

t = Trainer()
t.reset()
t.place(jnp.zeros(8))
""", None),
    "a_class_decorator_that_replaces_it": ("""
class Batch:
    def __init__(self):
        self.mesh = jax.make_mesh((8,), ("batch",))

def swap(cls):
    return Batch

@swap
class Trainer:
    def __init__(self):
        self.mesh = jax.make_mesh((2, 4), ("data", "model"))

def place(t):
    return jax.device_put(jnp.zeros(8), NamedSharding(t.mesh, P("batch")))

place(Trainer())
""", None),
    "set_by_name": ("""
class Trainer:
    def __init__(self):
        self.mesh = jax.make_mesh((2, 4), ("data", "model"))

def place(t):
    return jax.device_put(jnp.zeros(8), NamedSharding(t.mesh, P("batch")))

t = Trainer()
setattr(t, "mesh", jax.make_mesh((8,), ("batch",)))
place(t)
""", None),
    # a factory called on the class (a classmethod's cls bound to it)
    "class_method_factory": ("""
class Trainer:
    def __init__(self, shape):
        self.mesh = jax.make_mesh(shape, ("data", "model"))

    @classmethod
    def from_shape(cls, shape):
        return cls(shape)

def place(t, n):
    return jax.device_put(jnp.zeros(n), NamedSharding(t.mesh, P("model")))  # <- SC104

place(Trainer.from_shape((2, 4)), 6)
""", NOT_DIVISIBLE),
    "static_method_factory": ("""
class Trainer:
    def __init__(self, shape):
        self.mesh = jax.make_mesh(shape, ("data", "model"))

    @staticmethod
    def default():
        return Trainer((2, 4))

def place(t, n):
    return jax.device_put(jnp.zeros(n), NamedSharding(t.mesh, P("model")))  # <- SC104

place(Trainer.default(), 6)
""", NOT_DIVISIBLE),
    # a setattr whose names the source tells leaves the other attributes read as stored
    # (analyzer/interp/set_by_name.py)
    "set_by_name_with_a_prefix": ("""
class Stack:
    def __init__(self, depth):
        self.mesh = jax.make_mesh((2, 4), ("data", "model"))
        for i in range(depth):
            setattr(self, f"layer_{i}", jnp.zeros((4, 4)))

def place(s):
    return jax.device_put(jnp.zeros(8), NamedSharding(s.mesh, P("batch")))  # <- SC101

place(Stack(2))
""", NOT_IN_MESH),
    "set_by_names_of_a_class_list": ("""
class Pipeline:
    _keys = ["encoder", "decoder"]

    def __init__(self):
        self.mesh = jax.make_mesh((2, 4), ("data", "model"))

    @classmethod
    def load(cls):
        pipeline = cls()
        for key, value in zip(cls._keys, (jnp.zeros(2), jnp.zeros(2))):
            setattr(pipeline, key, value)
        return pipeline

def place(p):
    return jax.device_put(jnp.zeros(8), NamedSharding(p.mesh, P("batch")))  # <- SC101

place(Pipeline.load())
""", NOT_IN_MESH),
    "set_by_a_prefix_the_name_starts_with": ("""
class Trainer:
    def __init__(self):
        self.mesh = jax.make_mesh((2, 4), ("data", "model"))

def place(t):
    return jax.device_put(jnp.zeros(8), NamedSharding(t.mesh, P("batch")))

t = Trainer()
suffix = "sh"
setattr(t, f"me{suffix}", jax.make_mesh((8,), ("batch",)))
place(t)
""", None),
    "set_by_names_from_elsewhere": ("""
class Trainer:
    def __init__(self, overrides):
        self.mesh = jax.make_mesh((2, 4), ("data", "model"))
        for key in overrides:
            setattr(self, key, overrides[key])

def place(t):
    return jax.device_put(jnp.zeros(8), NamedSharding(t.mesh, P("batch")))

place(Trainer({"mesh": jax.make_mesh((8,), ("batch",))}))
""", None),
}


test_check_follows_the_object, test_every_case_with_a_finding_expects_jax_to_raise, test_jax_agrees = \
    case_tests(HEAD, CASES)
