"""Attention weights placed head-parallel from an ml_collections config; the config is
made by get_config(), as a --config flag file would make it."""

import jax
import jax.numpy as jnp
import ml_collections
from jax.sharding import NamedSharding, PartitionSpec as P


def get_config():
    config = ml_collections.ConfigDict()
    config.model = ml_collections.ConfigDict()
    config.model.emb_dim = 64
    config.model.num_heads = 6
    config.model.head_dim = 8
    config.mesh = ml_collections.ConfigDict()
    config.mesh.shape = (2, 4)
    config.mesh.axes = ("data", "model")
    config.batch_size = 4
    config.seq_len = 16
    return config


def init_attention(config, mesh):
    m = config.model
    keys = jax.random.split(jax.random.key(0), 4)
    head_sharded = NamedSharding(mesh, P(None, "model", None))
    params = {}
    for name, key in zip(("query", "key", "value"), keys[:3]):
        w = jax.random.normal(key, (m.emb_dim, m.num_heads, m.head_dim)) / jnp.sqrt(m.emb_dim)
        params[name] = jax.device_put(w, head_sharded)
    out = jax.random.normal(keys[3], (m.num_heads, m.head_dim, m.emb_dim))
    params["out"] = jax.device_put(out, NamedSharding(mesh, P("model", None, None)))
    return params


@jax.jit
def attention(params, x):
    q = jnp.einsum("bte,ehd->bthd", x, params["query"])
    k = jnp.einsum("bte,ehd->bthd", x, params["key"])
    v = jnp.einsum("bte,ehd->bthd", x, params["value"])
    probs = jax.nn.softmax(jnp.einsum("bqhd,bkhd->bhqk", q, k), axis=-1)
    ctx = jnp.einsum("bhqk,bkhd->bqhd", probs, v)
    return jnp.einsum("bqhd,hde->bqe", ctx, params["out"], out_sharding=P("data", None, None))


def main():
    config = get_config()
    mesh = jax.make_mesh(config.mesh.shape, config.mesh.axes)
    params = init_attention(config, mesh)
    x = jax.device_put(jnp.ones((config.batch_size, config.seq_len, config.model.emb_dim)),
                       NamedSharding(mesh, P("data", None, None)))
    with jax.set_mesh(mesh):
        y = attention(params, x)
    print(jax.typeof(y))


if __name__ == "__main__":
    main()
