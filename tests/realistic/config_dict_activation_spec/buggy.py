"""A sequence-parallel layer norm + MLP whose shardings are read from a nested dict
config (as loaded from YAML); each spec in it must match its array's rank."""

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

CONFIG = {
    "mesh": {"shape": (2, 4), "axes": ("data", "seq")},
    "model": {"d_model": 16, "d_ff": 32},
    "sharding": {
        "activations": ("data", "seq", None),
        "weights": (None, None),
        "norm_scale": (None, None),
    },
}


def spec(cfg, name):
    return P(*cfg["sharding"][name])


def init(cfg, mesh):
    d, f = cfg["model"]["d_model"], cfg["model"]["d_ff"]
    k1, k2 = jax.random.split(jax.random.key(0))
    w = NamedSharding(mesh, spec(cfg, "weights"))
    return {"scale": jax.device_put(jnp.ones((d,)), NamedSharding(mesh, spec(cfg, "norm_scale"))),
            "w1": jax.device_put(jax.random.normal(k1, (d, f)) * 0.1, w),
            "w2": jax.device_put(jax.random.normal(k2, (f, d)) * 0.1, w)}


def layer(params, x):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    h = (x - mu) * jax.lax.rsqrt(var + 1e-6) * params["scale"]
    return x + jax.nn.gelu(h @ params["w1"]) @ params["w2"]


def main(cfg=CONFIG):
    mesh = jax.make_mesh(cfg["mesh"]["shape"], cfg["mesh"]["axes"])
    params = init(cfg, mesh)
    x = jax.device_put(jnp.ones((4, 8, cfg["model"]["d_model"])),
                       NamedSharding(mesh, spec(cfg, "activations")))
    with jax.set_mesh(mesh):
        y = jax.jit(layer)(params, x)
    print(jax.typeof(y))


if __name__ == "__main__":
    main()
