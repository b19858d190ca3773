from ..ftypes import WARNING, Invalid, Valid
from ..rule import ShardRule

# Runs a MaxText-style config as the code reads it: the mesh from `mesh_axes`, the batch
# sharded by `data_sharding`, a parameter's logical names resolved by the rules
_DRIVER = """import yaml
import jax
jax.config.update("jax_num_cpu_devices", 8)
import flax.linen as nn
from jax.sharding import NamedSharding, PartitionSpec as P
cfg = yaml.safe_load(CONFIG)
axes = tuple(cfg["mesh_axes"])
mesh = jax.make_mesh((2, 2, 2) + (1,) * (len(axes) - 3), axes)
batch = NamedSharding(mesh, P(*cfg["data_sharding"]))
kernel = nn.logical_to_mesh_sharding(P("embed", "heads"), mesh, cfg["logical_axis_rules"])
"""

# builds the mesh from the config's sizes and axes, side by side
_SHAPE_DRIVER = """import yaml
import jax
jax.config.update("jax_num_cpu_devices", 8)
cfg = yaml.safe_load(CONFIG)
mesh = jax.make_mesh(tuple(cfg["ici_mesh_shape"]), tuple(cfg["mesh_axes"]))
"""

# a MaxText-style base config: tests/analyzer/test_config_checks.py builds its cases on it
BASE_CONFIG = """\
mesh_axes: ['data', 'fsdp', 'tensor']
logical_axis_rules: [
  ['batch', ['data', 'fsdp']],
  ['embed', 'fsdp'],
  ['heads', 'tensor'],
]
data_sharding: [['data', 'fsdp', 'tensor']]
"""


class ConfigMeshAxes(ShardRule):
    """
    ## What it does
    Reads a project's YAML/JSON sharding configs (MaxText style: `mesh_axes`,
    `logical_axis_rules`, `data_sharding`, a variant's `base_config` and
    `override_logical_axis_rules`) and flags, in the file that wrote the value to
    change:
    - a logical axis rule that maps a name to a mesh axis `mesh_axes` does not have (a
      typo, or an axis renamed in one place);
    - a variant whose own `mesh_axes` drops an axis the rules or the `data_sharding` it
      inherits still name;
    - a `data_sharding` that names an axis `mesh_axes` lacks;
    - a variant that replaces its base's `logical_axis_rules` wholesale and maps no rule
      for logical names its base maps and the project's code uses (in
      `nn.with_logical_constraint`, `nn.with_logical_partitioning`,
      `nn.logical_to_mesh_axes`, `nnx.with_partitioning`, `param_with_axes`), with the
      code's first use of each noted; a name no config maps is not reported (Linen
      replicates an unmatched name, which may be meant);
    - a mesh axis listed twice, and a rule entry that is no `[name, axis or axes]` pair;
    - a list of mesh sizes (`ici_mesh_shape`, `dcn_mesh_shape`, `ici_parallelism`,
      `dcn_parallelism`, `mesh_shape`) with another length than `mesh_axes`, in the file
      that sets the list (or, for a variant whose own `mesh_axes` no longer fits the
      sizes it inherits, at its `mesh_axes`).

    `shardcheck check` reads the configs it is given (pre-commit passes the staged
    ones) and those under the directories it checks that hold one of these keys.

    ## Why is this bad?
    The code builds the mesh from `mesh_axes` and resolves logical names with the
    rules: where it uses the name, the sharding names an axis the mesh lacks, and JAX
    raises `ValueError: Resource axis: fsdpp of P(('data', 'fsdp'), 'fsdpp') is not
    found in mesh` (JAX 0.10.2 with flax 0.12.8, on 8 CPU devices), at the first
    sharding built for that parameter or batch, usually minutes into a job's start-up.
    A variant whose own rules leave out a name the code uses gets no error at all under
    Linen: the dim is silently replicated (every device holds it whole, the memory the
    rule was written to save); under NNX the name is read as a mesh axis the mesh lacks.
    These are warnings: whether a name is used depends on the code and the model.

    ## Example
    ```yaml
    mesh_axes: ['data', 'fsdp', 'tensor']
    logical_axis_rules: [
      ['batch', ['data', 'fsdp']],
      ['embed', 'fsdpp'],
      ['heads', 'tensor'],
    ]
    ```

    Use instead:
    ```yaml
    mesh_axes: ['data', 'fsdp', 'tensor']
    logical_axis_rules: [
      ['batch', ['data', 'fsdp']],
      ['embed', 'fsdp'],
      ['heads', 'tensor'],
    ]
    ```
    """

    CODE = "SC113"
    NAME = "config-mesh-axes"
    SEVERITY = WARNING
    CONFIG = True
    JAX_FACTS = ("mesh.axis_not_found",)
    VALID = [Valid(BASE_CONFIG, driver=_DRIVER),
             Valid(BASE_CONFIG + "ici_mesh_shape: [2, 2, 2]\n", driver=_SHAPE_DRIVER)]
    INVALID = [
        Invalid(BASE_CONFIG.replace("['embed', 'fsdp']", "['embed', 'fsdpp']"), line=4,
                message="'embed' -> 'fsdpp'", jax_error="is not found in mesh", driver=_DRIVER),
        Invalid(BASE_CONFIG.replace("[['data', 'fsdp', 'tensor']]", "[['data', 'fsdp', 'model']]"),
                line=7, message="`data_sharding` names 'model'", jax_error="is not found in mesh",
                driver=_DRIVER),
        Invalid(BASE_CONFIG + "ici_mesh_shape: [2, 4]\n", line=8,
                message="`ici_mesh_shape` lists 2 sizes, but `mesh_axes` (line 1) names 3",
                jax_error="ndim of its first argument", driver=_SHAPE_DRIVER),
    ]
