from ..ftypes import Invalid, Valid
from ..rule import ShardRule

_INVALID = '''import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

_STATE = {}


def setup_mesh():
    _STATE["mesh"] = jax.make_mesh((2, 4), ("data", "model"))


def shard_batch(batch):
    return jax.device_put(batch, NamedSharding(_STATE["mesh"], P("batch", None)))


setup_mesh()
shard_batch(jnp.zeros((8, 16)))
'''

_INVALID_SHARD_MAP = '''from functools import partial

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

MESH_AXES = ("data", "tensor")
MESH = None


def loss(x):
    @partial(jax.shard_map, mesh=MESH, in_specs=P("dta"), out_specs=P())
    def per_shard(x):
        return jax.lax.psum(x.sum(), "data")
    return per_shard(x)


def main():
    global MESH
    MESH = jax.make_mesh((4, 2), MESH_AXES, axis_types=(jax.sharding.AxisType.Auto,) * 2)
    return loss(jnp.ones((8,)))


main()
'''


_INVALID_COLLECTIVE = '''from functools import partial

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

MESH_AXES = ("data", "tensor")
MESH = None


def all_reduce(x):
    return jax.lax.psum(x, ("data", "tensr"))


def loss(x):
    @partial(jax.shard_map, mesh=MESH, in_specs=P("data"), out_specs=P())
    def per_shard(x):
        return all_reduce(x.sum())
    return per_shard(x)


def main():
    global MESH
    MESH = jax.make_mesh((4, 2), MESH_AXES, axis_types=(jax.sharding.AxisType.Auto,) * 2)
    return loss(jnp.ones((8,)))


main()
'''


class AxisInNoProjectMesh(ShardRule):
    """
    ## What it does
    Flags a `PartitionSpec` naming an axis that no mesh of the whole project has,
    where the project's meshes are all known: every `jax.make_mesh`, `Mesh` and
    `AbstractMesh` call of the project names its axes with literals, names bound to
    literals, or a YAML config's `mesh_axes`.

    It reads the specs JAX reads as mesh axis names: a `NamedSharding`'s spec,
    `shard_map`'s `in_specs`/`out_specs`, `with_sharding_constraint`, `reshard`,
    `device_put`, `jit`'s `in_shardings`/`out_shardings` and `out_sharding=`, written
    there or bound to a name used there; and the axis names of `jax.lax`'s collectives
    (`psum`, `all_gather`, `ppermute`, `axis_index`, ...), where every axis name the
    project's `vmap`/`pmap` (any `axis_name=`) bind is known too: a name one of them
    binds is not a mesh's. It catches the specs whose mesh the analysis
    cannot follow (a mesh kept in a global, a registry, another module's object), which
    `unknown-mesh-axis` (SC101) checks where the mesh is in view; a spec SC101 already
    reports is not reported again.

    Where the mesh is built from a config field (`jax.make_mesh(shape,
    config.mesh_axes)`), its names are every value the project writes for the field:
    class defaults, assignments, keyword arguments, and each YAML/JSON config's
    `mesh_axes`. An axis only some of those values have is a warning naming the configs
    without it: the spec fails when the program runs under one of them.

    Nothing is reported when a mesh of the project has names not known statically (a
    parameter, a helper of another package that builds the mesh, `jtu.create_mesh`):
    a library's specs name the axes of meshes its users build. A spec of Flax logical
    names (`nn.logical_to_mesh_axes(P("batch", "embed"))`) is not a mesh spec.

    ## Why is this bad?
    The spec can only be used with one of the project's meshes, and none has the axis:
    JAX raises `ValueError: Resource axis: batch of PartitionSpec('batch', None) is not
    found in mesh: ('data', 'model')` wherever the spec shards a value, typically a
    typo, or an axis renamed in the mesh and not in the specs written for it.

    ## Example
    ```python
    _STATE = {}

    def setup_mesh():
        _STATE["mesh"] = jax.make_mesh((2, 4), ("data", "model"))

    def shard_batch(batch):
        return jax.device_put(batch, NamedSharding(_STATE["mesh"], P("batch", None)))
    ```

    Use instead:
    ```python
    def shard_batch(batch):
        return jax.device_put(batch, NamedSharding(_STATE["mesh"], P("data", None)))
    ```
    """

    CODE = "SC114"
    NAME = "axis-in-no-project-mesh"
    PROJECT = True
    JAX_FACTS = ("mesh.axis_not_found",)
    VALID = [Valid(_INVALID.replace('P("batch", None)', 'P("data", None)')),
             Valid(_INVALID_SHARD_MAP.replace('P("dta")', 'P("data")')),
             Valid(_INVALID_COLLECTIVE.replace('("data", "tensr")', '"data"'))]
    INVALID = [
        Invalid(_INVALID, line=13, message="names mesh axis 'batch', which no mesh of the project",
                jax_error="batch.*not found in mesh|not found in mesh.*batch"),
        Invalid(_INVALID_SHARD_MAP, line=12, message="Did you mean 'data'?",
                jax_error="dta"),
        Invalid(_INVALID_COLLECTIVE, line=12, message="communicates over axis 'tensr'",
                jax_error="tensr"),
    ]
