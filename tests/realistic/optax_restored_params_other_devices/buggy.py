"""Fine-tuning from a restored checkpoint: the parameters are placed for the training
mesh before the first call of a step jitted with in_shardings over that mesh."""

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def restore_checkpoint():
    """Stands in for a checkpoint reader: host arrays of the saved parameters."""
    rng = np.random.default_rng(0)
    return {"embed": rng.normal(size=(64, 16)).astype(np.float32),
            "head": rng.normal(size=(16, 8)).astype(np.float32)}


def place(tree, mesh, specs):
    return jax.tree.map(lambda x, s: jax.device_put(x, NamedSharding(mesh, s)), tree, specs)


SPECS = {"embed": P("model", None), "head": P(None, "model")}
tx = optax.adamw(1e-4)


def train_step(params, opt_state, ids, labels):
    def loss_fn(p):
        h = jnp.take(p["embed"], ids, axis=0).mean(axis=1)
        logits = h @ p["head"]
        return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()

    loss, grads = jax.value_and_grad(loss_fn)(params)
    updates, opt_state = tx.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


def main():
    devices = np.array(jax.devices())
    train_mesh = Mesh(devices.reshape(2, 4), ("data", "model"))
    param_sh = jax.tree.map(lambda s: NamedSharding(train_mesh, s), SPECS)
    data_sh = NamedSharding(train_mesh, P("data"))
    params = place(restore_checkpoint(), Mesh(devices[:4].reshape(1, 4), ("data", "model")), SPECS)
    opt_state = tx.init(params)
    step = jax.jit(train_step, in_shardings=(param_sh, None, NamedSharding(train_mesh, P("data", None)), data_sh),
                   out_shardings=(param_sh, None, NamedSharding(train_mesh, P())))
    ids = jnp.zeros((8, 5), jnp.int32)
    labels = jnp.zeros((8,), jnp.int32)
    params, opt_state, loss = step(params, opt_state, ids, labels)
    print("loss", float(loss))


if __name__ == "__main__":
    main()
