"""A mesh factory that picks its device order per platform, as JetStream's
`create_device_mesh` does: both branches return `Mesh(devices, axis_names)` with the
same axis names, so the mesh's names (and its `axis_names`, read back by the caller) are
known whichever runs; its sizes are not."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import mesh_utils
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P


def create_device_mesh(devices, shape):
    axis_names = ("x", "y")
    if devices[0].platform in ("gpu", "cpu"):
        devices = mesh_utils.create_device_mesh(mesh_shape=shape, devices=devices)
        return Mesh(devices=devices, axis_names=axis_names)
    devices = np.reshape(devices[::2] + devices[1::2][::-1], shape)
    return Mesh(devices=devices, axis_names=axis_names)


devices = jax.devices()
mesh = create_device_mesh(devices, (len(devices), 1))
axis_names = mesh.axis_names
w = jax.device_put(jnp.zeros((32, 16)), NamedSharding(mesh, P(None, axis_names)))
