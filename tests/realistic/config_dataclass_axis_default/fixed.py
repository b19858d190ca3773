"""A tensor-parallel MLP whose mesh and axis roles come from a dataclass config; the
config's defaults are what a run without overrides uses."""

import dataclasses
from typing import Tuple

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P


@dataclasses.dataclass
class ParallelConfig:
    mesh_shape: Tuple[int, ...] = (2, 4)
    mesh_axes: Tuple[str, ...] = ("data", "model")
    data_axis: str = "data"
    tensor_axis: str = "model"


@dataclasses.dataclass
class TrainConfig:
    d_model: int = 32
    d_ff: int = 128
    batch_size: int = 16
    parallel: ParallelConfig = dataclasses.field(default_factory=ParallelConfig)


def create_mesh(pcfg: ParallelConfig):
    return jax.make_mesh(pcfg.mesh_shape, pcfg.mesh_axes)


def init_weights(cfg: TrainConfig, mesh):
    k1, k2 = jax.random.split(jax.random.key(0))
    tp = cfg.parallel.tensor_axis
    w_in = jax.random.normal(k1, (cfg.d_model, cfg.d_ff)) * 0.02
    w_out = jax.random.normal(k2, (cfg.d_ff, cfg.d_model)) * 0.02
    return {"w_in": jax.device_put(w_in, NamedSharding(mesh, P(None, tp))),
            "w_out": jax.device_put(w_out, NamedSharding(mesh, P(tp, None)))}


@jax.jit
def mlp(weights, x):
    h = jax.nn.relu(x @ weights["w_in"])
    return jnp.einsum("bf,fd->bd", h, weights["w_out"], out_sharding=P("data", None))


def main():
    cfg = TrainConfig()
    mesh = create_mesh(cfg.parallel)
    weights = init_weights(cfg, mesh)
    x = jax.device_put(jnp.ones((cfg.batch_size, cfg.d_model)),
                       NamedSharding(mesh, P(cfg.parallel.data_axis, None)))
    with jax.set_mesh(mesh):
        y = mlp(weights, x)
    print(jax.typeof(y))


if __name__ == "__main__":
    main()
