"""An input pipeline that shards each global batch over the data-parallel axes named
in a flax.struct config; the batch size must split evenly over them."""

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct
from jax.sharding import NamedSharding, PartitionSpec as P


@struct.dataclass
class DataConfig:
    global_batch_size: int = 12
    seq_len: int = 32
    vocab_size: int = 256
    data_axes: tuple = struct.field(pytree_node=False, default=("data", "fsdp"))


@struct.dataclass
class MeshConfig:
    shape: tuple = struct.field(pytree_node=False, default=(2, 4, 1))
    axes: tuple = struct.field(pytree_node=False, default=("data", "fsdp", "model"))


class TokenLoader:
    def __init__(self, cfg: DataConfig, mesh):
        self.cfg = cfg
        self.sharding = NamedSharding(mesh, P(cfg.data_axes, None))
        self.rng = np.random.default_rng(0)

    def next_batch(self):
        tokens = self.rng.integers(0, self.cfg.vocab_size,
                                   size=(self.cfg.global_batch_size, self.cfg.seq_len))
        return jax.device_put(tokens.astype(np.int32), self.sharding)


@jax.jit
def token_histogram(tokens):
    return jnp.zeros((256,), jnp.int32).at[tokens.reshape(-1)].add(1, out_sharding=jax.P())


def main():
    mesh_cfg, data_cfg = MeshConfig(), DataConfig()
    mesh = jax.make_mesh(mesh_cfg.shape, mesh_cfg.axes)
    loader = TokenLoader(data_cfg, mesh)
    with jax.set_mesh(mesh):
        for _ in range(2):
            counts = token_histogram(loader.next_batch())
    print(int(counts.sum()))


if __name__ == "__main__":
    main()
