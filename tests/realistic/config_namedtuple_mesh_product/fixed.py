"""A local debug run of a trainer whose mesh comes from a NamedTuple of parallelism
degrees (ICI x DCN per axis, as in MaxText-style configs), on 8 simulated CPU devices."""

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

jax.config.update("jax_num_cpu_devices", 8)


class Parallelism(NamedTuple):
    data: int = 1
    fsdp: int = 1
    tensor: int = 1


class MeshSpec(NamedTuple):
    ici: Parallelism
    dcn: Parallelism = Parallelism()
    axis_names: tuple = ("data", "fsdp", "tensor")

    def shape(self):
        return tuple(i * d for i, d in zip(self.ici, self.dcn))


DEBUG_CPU = MeshSpec(ici=Parallelism(data=2, fsdp=2, tensor=2))


def build_mesh(spec: MeshSpec):
    shape = spec.shape()
    print(f"mesh {dict(zip(spec.axis_names, shape))} on {math.prod(shape)} devices")
    return jax.make_mesh(shape, spec.axis_names)


@jax.jit
def fsdp_matmul(x, w):
    w = jax.sharding.reshard(w, P(None, "tensor"))  # all-gather the fsdp shards
    return x @ w


def main():
    mesh = build_mesh(DEBUG_CPU)
    with jax.set_mesh(mesh):
        x = jnp.ones((8, 16), out_sharding=P(("data", "fsdp"), None))
        w = jnp.ones((16, 32), out_sharding=P("fsdp", "tensor"))
        y = fsdp_matmul(x, w)
    print(jax.typeof(y))


if __name__ == "__main__":
    main()
