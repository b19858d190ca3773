"""A Trainer that owns its mesh: __init__ builds the mesh from the visible devices and
places a vocab-parallel embedding table and an output head on it."""

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


class Trainer:
    def __init__(self, vocab_size: int, d_model: int, tp: int = 4):
        devices = np.array(jax.devices()).reshape(-1, tp)
        self.mesh = Mesh(devices, ("data", "model"))
        k1, k2 = jax.random.split(jax.random.key(0))
        embed = jax.random.normal(k1, (vocab_size, d_model)) * 0.02
        head = jax.random.normal(k2, (d_model, vocab_size)) * 0.02
        self.params = {
            "embed": jax.device_put(embed, NamedSharding(self.mesh, P("model", None))),
            "head": jax.device_put(head, NamedSharding(self.mesh, P(None, "model"))),
        }
        self.tx = optax.sgd(0.5)
        self.opt_state = self.tx.init(self.params)
        self._step = jax.jit(self._train_step)

    def _train_step(self, params, opt_state, tokens):
        def loss_fn(p):
            x = jnp.take(p["embed"], tokens[:, :-1], axis=0)
            logits = x @ p["head"]
            return optax.softmax_cross_entropy_with_integer_labels(logits, tokens[:, 1:]).mean()

        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = self.tx.update(grads, opt_state)
        return optax.apply_updates(params, updates), opt_state, loss

    def fit(self, tokens, steps: int = 2):
        tokens = jax.device_put(tokens, NamedSharding(self.mesh, P("data", None)))
        for _ in range(steps):
            self.params, self.opt_state, loss = self._step(self.params, self.opt_state, tokens)
        return float(loss)


def main():
    trainer = Trainer(vocab_size=257, d_model=32)
    tokens = jnp.asarray(np.random.default_rng(0).integers(0, 256, (8, 9)), jnp.int32)
    print("loss", trainer.fit(tokens))


if __name__ == "__main__":
    main()
