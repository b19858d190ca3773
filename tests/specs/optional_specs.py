"""A spec given only when a value is there: quantized attention's scales
(`None if k_scale is None else spec`, as jax-llm-examples writes its in_specs)."""
from functools import partial

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))
SEEN = []


def attend(q, k, k_scale=None):
    in_specs = (P("data", "model"), P("data", "model"),
                None if k_scale is None else P("data"))

    @partial(jax.shard_map, mesh=mesh, in_specs=in_specs, out_specs=P("data", "model"))
    def body(q, k, k_scale):
        SEEN.append(None if k_scale is None else k_scale.shape)
        return q + k if k_scale is None else q + k * k_scale[:, None]

    return body(q, k, k_scale)


def scale_sharding(scale):
    return P("model") if scale is not None else None


with jax.set_mesh(mesh):
    q = jax.device_put(jnp.ones((8, 16)), P("data", "model"))
    plain = attend(q, q)
    scaled = attend(q, q, jax.device_put(jnp.ones((8,)), P("data")))
    s = jax.device_put(jnp.ones((16,)), scale_sharding(jnp.ones((16,))))
