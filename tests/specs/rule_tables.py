"""EasyLM-style regex partition rules: a parameter tree sharded by the first pattern that
matches each leaf's path (the helper is recognised by its shape, not its name)."""
import re

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as PS


def named_tree_map(f, tree, sep="/"):
    return jax.tree_util.tree_map_with_path(
        lambda path, x: f(sep.join(str(getattr(k, "key", k)) for k in path), x), tree)


def match_partition_rules(rules, params):
    def get_partition_spec(name, leaf):
        if len(leaf.shape) == 0:
            return PS()
        for rule, ps in rules:
            if re.search(rule, name) is not None:
                return ps
        raise ValueError(f"no partition rule for {name}")
    return named_tree_map(get_partition_spec, params, sep="/")


class Configurator:
    @staticmethod
    def get_partition_rules():
        return (
            ("embedding", PS("model", None)),
            ("attention/(wq|wk)", PS(None, "model")),
            ("mlp/w1", PS("data", "model")),
            (".*", PS(None)),
        )


def init(key):
    return {"embedding": jnp.zeros((16, 8)), "norm": jnp.ones((8,)),
            "attention": {"wq": jnp.zeros((8, 16)), "wk": jnp.zeros((8, 16)),
                          "wo": jnp.zeros((16, 8))},
            "mlp": {"w1": jnp.zeros((8, 32)), "w2": jnp.zeros((32, 8))}}


mesh = jax.make_mesh((2, 4), ("data", "model"))
shapes = jax.eval_shape(init, jax.random.key(0))
partition = match_partition_rules(Configurator.get_partition_rules(), shapes)
with jax.set_mesh(mesh):
    params = jax.jit(init, out_shardings=partition)(jax.random.key(0))
