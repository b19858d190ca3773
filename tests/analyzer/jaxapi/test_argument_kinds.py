"""Arguments of the wrong kind (analyzer/jaxapi/argument_kinds.py, SC311), in the shapes
real code gives them: helpers that take the mesh, a mesh shape read from a config, a
train step's shardings flattened or built from shapes. Each case lists the SC311 lines it
must give; every case also runs under JAX on 8 CPU devices, and a buggy case must raise
the error JAX gives, its correct twin must run cleanly.
"""

import re

import pytest

from shardcheck.analyzer.engine import check_source

HEAD = """import dataclasses
import jax
import jax.numpy as jnp
from jax.experimental import mesh_utils
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
"""  # 5 lines; a case's first line is line 6

# id -> (code after HEAD, SC311 lines, JAX: "ok" or a regex of its error)
CASES = {
    # jax-ml/jax#18856: a flat device list for a 2-D mesh (it used to fail an assert)
    "mesh-of-the-flat-device-list": ("""\
import numpy as np

def create_mesh(dp, tp):
    return Mesh(np.array(jax.devices()), ("data", "model"))

def create_mesh_fixed(dp, tp):
    return Mesh(np.array(jax.devices()).reshape(dp, tp), ("data", "model"))

good = create_mesh_fixed(4, 2)
mesh = create_mesh(4, 2)
""", {9}, "Mesh requires the ndim of its first argument"),
    "mesh-of-the-device-list-call": ("""\
mesh = Mesh(jax.devices(), ("data", "model"))
""", {6}, "Mesh requires the ndim of its first argument"),
    # the list kept in a name first, as a training script does before building its mesh
    "mesh-of-the-device-list-in-a-name": ("""\
devices = jax.devices()
mesh = Mesh(devices, ("data", "model"))
""", {7}, "Mesh requires the ndim of its first argument"),
    "mesh-of-the-device-list-in-a-function's-name": ("""\
def build_mesh():
    devices = jax.devices()
    return Mesh(devices, ("data", "model"))

mesh = build_mesh()
""", {8}, "Mesh requires the ndim of its first argument"),
    # a parameter a caller may give (here an array of the right rank), and a name bound
    # again before the mesh: neither is the flat list
    "mesh-of-devices-a-caller-gives-or-a-name-rebinds": ("""\
def build(names, devices=None):
    if devices is None:
        devices = jax.devices()
    return Mesh(devices, names)

def build_reshaped():
    devices = jax.devices()
    devices = mesh_utils.create_device_mesh((4, 2))
    return Mesh(devices, ("data", "model"))

mesh = build(("data", "model"), mesh_utils.create_device_mesh((4, 2)))
other = build_reshaped()
""", set(), "ok"),
    # the module's name is the flat list; the factory's parameter of the same name is not
    "mesh-factory-whose-parameter-shadows-the-device-list": ("""\
devices = jax.devices()

def create_mesh(devices, names):
    return Mesh(devices, names)

mesh = create_mesh(mesh_utils.create_device_mesh((4, 2)), ("data", "model"))
""", set(), "ok"),
    "mesh-with-a-name-too-many": ("""\
def build(names=("data", "model", "seq")):
    return Mesh(mesh_utils.create_device_mesh((4, 2)), names)

mesh = build()
""", {7}, "Mesh requires the ndim of its first argument"),
    "mesh-of-devices-reshaped-by-a-starred-shape": ("""\
import numpy as np
mesh_shape = (4, 2)
devices = np.asarray(jax.devices()).reshape(*mesh_shape)
mesh = Mesh(devices, ("x", "y"))
""", set(), "ok"),
    "mesh-with-one-name-per-dim": ("""\
mesh = Mesh(mesh_utils.create_device_mesh((4, 2)), ("data", "model"))
flat = Mesh(jax.devices(), ("data",))
""", set(), "ok"),
    "config-axis-types-strings": ("""\
@dataclasses.dataclass
class MeshConfig:
    shape: tuple = (2, 2, 2)
    names: tuple = ("data", "fsdp", "tensor")

def build_mesh(cfg):
    return jax.make_mesh(cfg.shape, cfg.names, axis_types=("explicit",) * len(cfg.names))

mesh = build_mesh(MeshConfig())
""", {12}, "must be of type `jax.sharding.AxisType`"),
    "config-axis-types-members": ("""\
@dataclasses.dataclass
class MeshConfig:
    shape: tuple = (2, 2, 2)
    names: tuple = ("data", "fsdp", "tensor")

def build_mesh(cfg):
    explicit = jax.sharding.AxisType.Explicit
    return jax.make_mesh(cfg.shape, cfg.names, axis_types=(explicit,) * len(cfg.names))

mesh = build_mesh(MeshConfig())
""", set(), "ok"),
    "axis-types-from-the-module-that-defines-them": ("""\
from jax._src.mesh import AxisType
explicit, auto = AxisType.Explicit, AxisType.Auto
mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(explicit, auto))
one = jax.sharding.AbstractMesh((8,), ("data",), axis_types=auto)
""", set(), "ok"),
    "abstract-mesh-one-axis-type-for-two-names": ("""\
def abstract_mesh(shape, names):
    return jax.sharding.AbstractMesh(shape, names, axis_types=jax.sharding.AxisType.Auto)

mesh = abstract_mesh((2, 4), ("data", "model"))
""", {7}, "Number of axis names should match the number of axis_types"),
    "mesh-axis-types-list": ("""\
from jax.sharding import AxisType
devices = mesh_utils.create_device_mesh((2, 4))
mesh = Mesh(devices, ("data", "model"), axis_types=[AxisType.Explicit, AxisType.Auto])
""", {8}, "must be of type `jax.sharding.AxisType`"),
    "config-mesh-shape-int": ("""\
@dataclasses.dataclass
class MeshConfig:
    data: int = 8

def build_mesh(cfg):
    devices = mesh_utils.create_device_mesh(cfg.data)
    return Mesh(devices, ("data",))

mesh = build_mesh(MeshConfig())
""", {11}, "'int' object is not iterable"),
    "config-mesh-shape-tuple": ("""\
@dataclasses.dataclass
class MeshConfig:
    data: int = 8

def build_mesh(cfg):
    devices = mesh_utils.create_device_mesh((cfg.data,))
    return Mesh(devices, ("data",))

mesh = build_mesh(MeshConfig())
""", set(), "ok"),
    "helper-swaps-named-sharding": ("""\
class Sharder:
    def __init__(self, mesh):
        self.mesh = mesh

    def rows(self):
        return NamedSharding(P("data", None), self.mesh)

sharder = Sharder(jax.make_mesh((8,), ("data",)))
x = jax.device_put(jnp.ones((16, 4)), sharder.rows())
""", {11}, "object has no attribute"),
    "helper-named-sharding-in-order": ("""\
class Sharder:
    def __init__(self, mesh):
        self.mesh = mesh

    def rows(self):
        return NamedSharding(self.mesh, P("data", None))

sharder = Sharder(jax.make_mesh((8,), ("data",)))
x = jax.device_put(jnp.ones((16, 4)), sharder.rows())
""", set(), "ok"),
    "device-array-as-mesh": ("""\
devices = mesh_utils.create_device_mesh((8,))
rows = NamedSharding(devices, P("data"))
""", {7}, "has no attribute"),
    "names-as-spec": ("""\
mesh = jax.make_mesh((8,), ("data",))

def shard_batch(batch, names=("data", None)):
    return jax.device_put(batch, NamedSharding(mesh, names))

x = shard_batch(jnp.ones((16, 4)))
""", {9}, "'tuple' object has no attribute 'partitions'"),
    "flattened-param-shardings": ("""\
mesh = jax.make_mesh((8,), ("data",))
params = {"w": jnp.ones((16, 4)), "b": jnp.ones((4,))}
param_sh = jax.tree.map(lambda _: NamedSharding(mesh, P()), params)
batch_sh = NamedSharding(mesh, P("data", None))

def train_step(p, x):
    return jax.tree.map(lambda a: a - 0.1 * (x.sum() * a), p)

flat_sh, treedef = jax.tree_util.tree_flatten(param_sh)
step = jax.jit(train_step, in_shardings=(treedef, batch_sh), out_shardings=param_sh)
""", {15}, "leaf specifications are expected to be PartitionSpec instances or None"),
    "rebuilt-param-shardings": ("""\
mesh = jax.make_mesh((8,), ("data",))
params = {"w": jnp.ones((16, 4)), "b": jnp.ones((4,))}
param_sh = jax.tree.map(lambda _: NamedSharding(mesh, P()), params)
batch_sh = NamedSharding(mesh, P("data", None))

def train_step(p, x):
    return jax.tree.map(lambda a: a - 0.1 * (x.sum() * a), p)

flat_sh, treedef = jax.tree_util.tree_flatten(param_sh)
step = jax.jit(train_step, in_shardings=(jax.tree_util.tree_unflatten(treedef, flat_sh),
                                         batch_sh), out_shardings=param_sh)
new = step(params, jnp.ones((16, 4)))
""", set(), "ok"),
    "shape-tree-as-out-shardings": ("""\
mesh = jax.make_mesh((8,), ("data",))

def init(key):
    return {"embed": jax.random.normal(key, (64, 16)), "head": jnp.zeros((16, 8))}

shapes = jax.tree.map(lambda a: a.shape, init(jax.random.key(1)))
params = jax.jit(init, out_shardings=shapes)(jax.random.key(0))
""", {12}, "leaf specifications are expected to be PartitionSpec instances or None"),
    "names-in-constraint": ("""\
mesh = jax.make_mesh((8,), ("data",), axis_types=(jax.sharding.AxisType.Auto,))

@jax.jit
def forward(x):
    return jax.lax.with_sharding_constraint(x * 2, ("data", None))

with jax.set_mesh(mesh):
    y = forward(jnp.ones((16, 4)))
""", {10}, "leaf specifications are expected to be PartitionSpec instances or None"),
    "spec-in-constraint": ("""\
mesh = jax.make_mesh((8,), ("data",), axis_types=(jax.sharding.AxisType.Auto,))

@jax.jit
def forward(x):
    return jax.lax.with_sharding_constraint(x * 2, P("data", None))

with jax.set_mesh(mesh):
    y = forward(jnp.ones((16, 4)))
""", set(), "ok"),
    "mesh-to-device-put": ("""\
mesh = jax.make_mesh((8,), ("data",))
x = jax.device_put(jnp.ones((16, 4)), mesh)
""", {7}, "only accepts"),
    "number-of-devices-as-mesh-devices": ("""\
mesh = Mesh(jax.device_count(), ("data",))
""", set(), "Mesh requires the ndim"),  # the count is not known statically: silent
    "branch-not-run-for-these-arguments": ("""\
mesh = jax.make_mesh((8,), ("data",), axis_types=(jax.sharding.AxisType.Auto,))

def constrain(x, spec, mesh=None):
    if mesh is not None and spec is not None:
        return jax.lax.with_sharding_constraint(x, NamedSharding(mesh, spec))
    return x

y = constrain(jnp.ones((16, 4)), None, mesh=mesh)
""", set(), "ok"),  # flax.linen.spmd's shape: `spec is not None` is false for this call
    "lambda-in-branch-not-run": ("""\
def reshard_to(tree, mesh=None):
    if mesh is not None and len(tree) > 0:
        shardings = jax.tree.map(lambda x: NamedSharding(mesh, P()), tree)
        tree = jax.device_put(tree, shardings)
    return tree

params = reshard_to({"w": jnp.ones((16, 4))})
""", set(), "ok"),  # tunix's reshard_model_to_mesh: the lambda never runs with mesh None
    "branch-run-for-these-arguments": ("""\
mesh = jax.make_mesh((8,), ("data",), axis_types=(jax.sharding.AxisType.Auto,))

def constrain(x, spec, mesh=None):
    if mesh is not None or spec is not None:
        return jax.lax.with_sharding_constraint(x, NamedSharding(mesh, spec))
    return x

y = constrain(jnp.ones((16, 4)), ("data", None), mesh=mesh)
""", {10}, "'tuple' object has no attribute 'partitions'"),
    "unset-mesh-default-is-not-a-finding": ("""\
def rows(mesh=None):
    return NamedSharding(mesh, P("data", None))
""", set(), "ok"),
}


def _lines(code):
    return {f.row for f in check_source(code, "case.py") if f.code == "SC311"}


@pytest.mark.parametrize("case", list(CASES))
def test_findings(case):
    assert _lines(HEAD + CASES[case][0]) == CASES[case][1]


@pytest.fixture(scope="module")
def jax_runs(jax8):
    from jax_snippets import run_snippets
    return dict(zip(CASES, run_snippets([HEAD + body for body, _, _ in CASES.values()])))


@pytest.mark.parametrize("case", list(CASES))
def test_jax_agrees(case, jax_runs):
    _, lines, outcome = CASES[case]
    run = jax_runs[case]
    if outcome == "ok":
        assert run["status"] == "ok", run
    else:
        assert run["status"] == "error" and re.search(outcome, run["error"]), run


def test_flattened_leaves_are_in_jax_order():
    code = HEAD + """\
tree = {"b": jnp.ones((4,)), "a": jnp.ones((2, 3)), "c": None}
leaves, treedef = jax.tree_util.tree_flatten(tree)
first = leaves[0]
"""
    from shardcheck.analyzer.inferred_types import infer_types
    types = {t.name: t.type for t in infer_types(code, "case.py")}
    assert types["first"] == "float32[2,3]"  # 'a' sorts first, as JAX flattens dicts


def test_message_names_the_value_and_the_fix():
    code = HEAD + 'mesh = jax.make_mesh((8,), ("data",))\ns = NamedSharding(P("data"), mesh)\n'
    (f,) = [f for f in check_source(code, "case.py") if f.code == "SC311"]
    assert "is a PartitionSpec" in f.message and "NamedSharding(mesh, spec)" in f.message
