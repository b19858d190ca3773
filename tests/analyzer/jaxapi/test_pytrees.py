"""Pytrees (``analyzer/jaxapi/pytrees.py``): ``jax.tree.map`` over the trees check
follows (dicts, tuples, library nodes such as optax's states), and what jit and
device_put see of such trees. Each program is checked (``# <- CODE`` marks each
expected finding) and run under JAX on 8 CPU devices (``test_jax_agrees``): a program
with a finding raises there with the message named, every other runs to its end."""

from __future__ import annotations


from marked_programs import case_tests


HEAD = """\
import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
"""

OTHER_DEVICES = "Sharding passed to jit does not match the sharding on the respective arg"
INDIVISIBLE = "partitioned 8 times, but the dimension size is 10"
PREFIX = "pytree structure error"

# name -> (program, the message JAX raises with, or None where the program runs)
CASES = {
    "restored_tree_placed_on_another_mesh": ("""
def restore():
    rng = np.random.default_rng(0)
    return {"embed": rng.normal(size=(64, 16)).astype(np.float32),
            "head": rng.normal(size=(16, 8)).astype(np.float32)}

def place(tree, mesh, specs):
    return jax.tree.map(lambda x, s: jax.device_put(x, NamedSharding(mesh, s)), tree, specs)

SPECS = {"embed": P("model", None), "head": P(None, "model")}
devices = np.array(jax.devices())
mesh = Mesh(devices.reshape(2, 4), ("data", "model"))
params = place(restore(), Mesh(devices[:4].reshape(1, 4), ("data", "model")), SPECS)
shardings = jax.tree.map(lambda s: NamedSharding(mesh, s), SPECS)
jax.jit(lambda p: p, in_shardings=(shardings,))(params)  # <- SC308
""", OTHER_DEVICES),
    "restored_tree_placed_on_the_jit_mesh": ("""
def restore():
    rng = np.random.default_rng(0)
    return {"embed": rng.normal(size=(64, 16)).astype(np.float32),
            "head": rng.normal(size=(16, 8)).astype(np.float32)}

def place(tree, mesh, specs):
    return jax.tree.map(lambda x, s: jax.device_put(x, NamedSharding(mesh, s)), tree, specs)

SPECS = {"embed": P("model", None), "head": P(None, "model")}
devices = np.array(jax.devices())
mesh = Mesh(devices.reshape(2, 4), ("data", "model"))
params = place(restore(), mesh, SPECS)
shardings = jax.tree.map(lambda s: NamedSharding(mesh, s), SPECS)
jax.jit(lambda p: p, in_shardings=(shardings,))(params)
""", None),
    "mapped_shardings_split_a_bias_of_ten": ("""
mesh = jax.make_mesh((8,), ("fsdp",))
params = {"w": jnp.zeros((24, 64)), "b": jnp.zeros((10,))}
shardings = jax.tree.map(lambda x: NamedSharding(mesh, P("fsdp")), params)  # <- SC104
jax.jit(lambda p: p, in_shardings=(shardings,))(params)
""", INDIVISIBLE),
    "mapped_shardings_keep_the_bias_whole": ("""
mesh = jax.make_mesh((8,), ("fsdp",))
params = {"w": jnp.zeros((24, 64)), "b": jnp.zeros((10,))}
shardings = jax.tree.map(lambda x: NamedSharding(mesh, P("fsdp") if x.shape[0] % 8 == 0 else P()),
                         params)
jax.jit(lambda p: p, in_shardings=(shardings,))(params)
""", None),
    "out_shardings_give_the_params_tree_for_the_state": ("""
tx = optax.adam(1e-3)
mesh = jax.make_mesh((8,), ("data",))
params = {"w": jnp.zeros((16, 8))}
param_sh = jax.tree.map(lambda _: NamedSharding(mesh, P()), params)

def init(params):
    return params, tx.init(params)

jax.jit(init, out_shardings=(param_sh, param_sh))(params)  # <- SC310
""", PREFIX),
    "python_scalar_leaf_split": ("""
mesh = jax.make_mesh((8,), ("data",))
tree = {"step": 0, "w": jnp.zeros((16, 8))}
placed = jax.device_put(tree, jax.tree.map(lambda _: NamedSharding(mesh, P("data")), tree))  # <- SC103
""", "compat:spec.longer_than_rank_sharded_last"),
}


test_check_follows_the_tree, test_every_case_with_a_finding_expects_jax_to_raise, test_jax_agrees = \
    case_tests(HEAD, CASES)
