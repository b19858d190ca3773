"""A decoding KV cache held in a dataclass: __post_init__ allocates the per-layer key
and value buffers on the serving mesh, sharded over the kv heads (grouped-query
attention), and a jitted method writes one position per step."""

import dataclasses

import jax
import jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


@dataclasses.dataclass
class KVCache:
    mesh: Mesh
    layers: int = 2
    batch: int = 2
    max_len: int = 16
    kv_heads: int = 4
    head_dim: int = 8

    def __post_init__(self):
        shape = (self.layers, self.batch, self.max_len, self.kv_heads, self.head_dim)
        sharding = NamedSharding(self.mesh, P(None, "data", None, "model", None))
        self.keys = jax.device_put(jnp.zeros(shape, jnp.bfloat16), sharding)
        self.values = jax.device_put(jnp.zeros(shape, jnp.bfloat16), sharding)
        self.pos = 0

    @staticmethod
    @jax.jit
    def _write(buf, new, pos):
        # new: [layers, batch, kv_heads, head_dim] for one position
        return jax.lax.dynamic_update_slice_in_dim(buf, new[:, :, None], pos, axis=2)

    def append(self, new_keys, new_values):
        self.keys = self._write(self.keys, new_keys.astype(self.keys.dtype), self.pos)
        self.values = self._write(self.values, new_values.astype(self.values.dtype), self.pos)
        self.pos += 1


def main():
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    cache = KVCache(mesh)
    step_spec = NamedSharding(mesh, P(None, "data", "model", None))
    for _ in range(3):
        k = jax.device_put(jnp.ones((cache.layers, cache.batch, cache.kv_heads, cache.head_dim)),
                           step_spec)
        cache.append(k, k)
    print(cache.pos, jax.typeof(cache.keys))


if __name__ == "__main__":
    main()
