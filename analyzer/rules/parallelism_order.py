from ..ftypes import WARNING, Invalid, Valid
from ..rule import ShardRule

_INVALID = '''import dataclasses

import jax


@dataclasses.dataclass
class MeshConfig:
    mesh_axes: tuple = ("data", "fsdp", "tensor")
    ici_data_parallelism: int = 2
    ici_fsdp_parallelism: int = 4
    ici_tensor_parallelism: int = 1


def create_mesh(config):
    ici_parallelism = [
        config.ici_data_parallelism,
        config.ici_tensor_parallelism,
        config.ici_fsdp_parallelism,
    ]
    return jax.make_mesh(tuple(ici_parallelism), config.mesh_axes)


mesh = create_mesh(MeshConfig())
'''

_FIXED = _INVALID.replace('''        config.ici_tensor_parallelism,
        config.ici_fsdp_parallelism,''', '''        config.ici_fsdp_parallelism,
        config.ici_tensor_parallelism,''')


class ParallelismOrder(ShardRule):
    """
    ## What it does
    Flags a list of mesh sizes made of config fields named after their axes
    (`[config.ici_data_parallelism, config.ici_tensor_parallelism, ...]`, also `dcn_`)
    that names the same axes as a `mesh_axes` the project writes (a YAML/JSON config's,
    a config class's default, an assignment) in another order. The list is compared with
    each value of `mesh_axes` that has exactly its axes; a value with other axes belongs
    to another branch of the code and is not compared.

    ## Why is this bad?
    The mesh is built from the two lists side by side (`jax.make_mesh(shape, axes)`,
    `mesh_utils.create_device_mesh(shape)` then `Mesh(devices, axes)`): each axis gets
    the size written for another. Nothing raises while the sizes multiply to the device
    count. The program trains with the wrong parallelism (a model sharded 4 ways where 1
    was asked, a batch split 1 way where 4 were): more memory per device, other
    collectives, other numbers of steps per second, and a checkpoint whose layout is not
    the one intended.

    ## Example
    ```python
    def create_mesh(config):  # config.mesh_axes == ("data", "fsdp", "tensor")
        ici_parallelism = [
            config.ici_data_parallelism,
            config.ici_tensor_parallelism,
            config.ici_fsdp_parallelism,
        ]
        return jax.make_mesh(tuple(ici_parallelism), config.mesh_axes)
    ```

    Use instead:
    ```python
    def create_mesh(config):
        ici_parallelism = [
            config.ici_data_parallelism,
            config.ici_fsdp_parallelism,
            config.ici_tensor_parallelism,
        ]
        return jax.make_mesh(tuple(ici_parallelism), config.mesh_axes)
    ```
    """

    CODE = "SC115"
    NAME = "parallelism-order"
    SEVERITY = WARNING
    PROJECT = True
    JAX_SINCE = None
    VALID = [Valid(_FIXED)]
    INVALID = [
        Invalid(_INVALID, line=15, message="orders the same axes ('data', 'fsdp', 'tensor')",
                jax_outcome="wrong-result",
                witness='assert dict(mesh.shape) == {"data": 2, "fsdp": 4, "tensor": 1}, '
                        'dict(mesh.shape)'),
    ]
