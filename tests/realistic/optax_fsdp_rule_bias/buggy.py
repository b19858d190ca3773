"""ZeRO-3 style training of a small MLP: each parameter and each Adam moment is split
over the "fsdp" axis along a dim the axis size divides; the rest are replicated."""

import jax
import jax.numpy as jnp
import optax
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

FSDP = 8


def fsdp_spec(shape):
    """Shard the largest dim that FSDP divides; replicate what cannot be split."""
    for dim in sorted(range(len(shape)), key=lambda d: -shape[d]):
        if shape[dim] > 1:
            return P(*[("fsdp" if d == dim else None) for d in range(len(shape))])
    return P()


def init(key):
    k1, k2 = jax.random.split(key)
    return {"w1": jax.random.normal(k1, (24, 64)) * 0.1, "b1": jnp.zeros((64,)),
            "w2": jax.random.normal(k2, (64, 10)) * 0.1, "b2": jnp.zeros((10,))}


def loss_fn(params, x, y):
    h = jax.nn.gelu(x @ params["w1"] + params["b1"])
    logits = h @ params["w2"] + params["b2"]
    return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()


def main():
    mesh = jax.make_mesh((FSDP,), ("fsdp",), axis_types=(AxisType.Auto,))
    tx = optax.adam(1e-3)
    params = init(jax.random.key(0))
    opt_state = tx.init(params)
    def shard(x):
        return NamedSharding(mesh, fsdp_spec(jnp.shape(x)))

    param_sh, opt_sh = jax.tree.map(shard, params), jax.tree.map(shard, opt_state)
    params, opt_state = jax.device_put((params, opt_state), (param_sh, opt_sh))

    @jax.jit
    def step(params, opt_state, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        updates, opt_state = tx.update(grads, opt_state)
        params = jax.lax.with_sharding_constraint(optax.apply_updates(params, updates), param_sh)
        return params, opt_state, loss

    x, y = jnp.ones((16, 24)), jnp.zeros((16,), jnp.int32)
    params, opt_state, loss = step(params, opt_state, x, y)
    print("loss", float(loss), params["w2"].sharding.spec, params["b2"].sharding.spec)


if __name__ == "__main__":
    main()
