"""A hand-written two-layer network trained with optax.adam under jax.jit with explicit
in/out shardings: one tree for the params, one for the optimizer state, one for the batch."""

import jax
import jax.numpy as jnp
import optax
from jax.sharding import NamedSharding, PartitionSpec as P


def init_params(key, sizes=(16, 32, 4)):
    params = {}
    for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        key, sub = jax.random.split(key)
        params[f"layer{i}"] = {"w": jax.random.normal(sub, (n_in, n_out)) / jnp.sqrt(n_in),
                               "b": jnp.zeros((n_out,))}
    return params


def forward(params, x):
    h = jax.nn.relu(x @ params["layer0"]["w"] + params["layer0"]["b"])
    return h @ params["layer1"]["w"] + params["layer1"]["b"]


tx = optax.adam(learning_rate=1e-2)


def train_step(params, opt_state, batch):
    def loss_fn(p):
        return jnp.mean((forward(p, batch["x"]) - batch["y"]) ** 2)

    loss, grads = jax.value_and_grad(loss_fn)(params)
    updates, opt_state = tx.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


def main():
    mesh = jax.make_mesh((8,), ("data",))
    replicated = NamedSharding(mesh, P())
    params = init_params(jax.random.key(0))
    opt_state = tx.init(params)
    param_sh = jax.tree.map(lambda _: replicated, params)
    opt_sh = jax.tree.map(lambda _: replicated, opt_state)
    batch_sh = {"x": NamedSharding(mesh, P("data", None)), "y": NamedSharding(mesh, P("data", None))}
    step = jax.jit(train_step, in_shardings=(param_sh, param_sh, batch_sh),
                   out_shardings=(param_sh, opt_sh, replicated))
    batch = {"x": jnp.ones((32, 16)), "y": jnp.zeros((32, 4))}
    for _ in range(3):
        params, opt_state, loss = step(params, opt_state, batch)
    print("loss", float(loss))


if __name__ == "__main__":
    main()
