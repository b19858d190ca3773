"""optax (``analyzer/jaxapi/optax.py``): the state ``tx.init(params)`` builds, its updates,
and Flax's ``TrainState``, each held against optax 0.2.8 and JAX on 8 CPU devices.

``test_state_is_optax_s`` compares the state the analyzer knows, tree for tree and leaf
for leaf, with the one optax builds; the programs below are checked (``# <- CODE`` marks
each expected finding) and run under JAX (``test_jax_agrees``): a program with a finding
raises there with the message named, every other runs to its end."""

from __future__ import annotations


import libcst as cst
from marked_programs import case_tests

from shardcheck.analyzer.config import Config
from shardcheck.analyzer.engine import analyze
from shardcheck.analyzer.jaxapi.pytrees import PyTreeNodeVal
from shardcheck.analyzer.values import UNKNOWN, ArrayVal, DictVal, TupleVal

# the transformations whose state the analyzer builds (``sched``: a schedule, a callable
# learning rate, whose transformation keeps a count)
TRANSFORMS = [
    "optax.adam(1e-3)", "optax.adam(sched)", "optax.adam(lambda count: 1e-3)",
    "optax.adamw(1e-3)", "optax.adamw(sched, weight_decay=1e-4)", "optax.nadam(1e-3)",
    "optax.sgd(0.1)", "optax.sgd(sched)", "optax.sgd(0.1, momentum=0.9)", "optax.sgd(0.1, 0.9)",
    "optax.sgd(0.1, momentum=None)", "optax.lion(1e-4)", "optax.adagrad(1e-2)",
    "optax.rmsprop(1e-3)", "optax.adabelief(1e-3)", "optax.lamb(1e-3)",
    "optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(sched))",
    "optax.chain(optax.clip(1.0), optax.scale_by_adam(), optax.add_decayed_weights(1e-4), "
    "optax.scale_by_learning_rate(1e-3))",
    "optax.chain(optax.trace(0.9), optax.scale_by_schedule(sched), optax.scale(-1.0), "
    "optax.identity())",
]
# keywords that change the state's structure: the state is unknown
UNKNOWN_STATES = ["optax.adamw(1e-3, mask=lambda p: p)", "optax.adam(1e-3, mu_dtype=jnp.bfloat16)",
                  "optax.rmsprop(1e-3, momentum=0.9)", "optax.chain(*parts)"]

PARAMS = """\
import jax
import jax.numpy as jnp
import optax
sched = optax.warmup_cosine_decay_schedule(0.0, 1e-3, 10, 100)
parts = [optax.sgd(0.1)]
params = {"w": jnp.zeros((4, 6)), "b": jnp.zeros((6,)), "scale": jnp.ones(())}
"""


def _analysed(tx: str):
    src = PARAMS + f"state = {tx}.init(params)\n"
    return analyze(cst.parse_module(src), "", Config()).module_scope().lookup("state")


def _signature(v) -> str:
    """The state as optax prints it, with each leaf as jax.typeof gives its type."""
    if isinstance(v, PyTreeNodeVal):
        return f"{v.short}(" + ", ".join(f"{k}={_signature(x)}" for k, x in v.children) + ")"
    if isinstance(v, TupleVal):
        return "(" + ", ".join(_signature(x) for x in v.items) + ")"
    if isinstance(v, DictVal):
        return "{" + ", ".join(f"{k}: {_signature(x)}" for k, x in sorted(v.items)) + "}"
    if isinstance(v, ArrayVal) and v.shape is not None and None not in v.shape:
        return f"{v.dtype}[{','.join(map(str, v.shape))}]"
    return "?"


_JAX_SIGNATURE = """
def signature(v):
    if isinstance(v, tuple) and hasattr(v, "_fields"):
        return type(v).__name__ + "(" + ", ".join(
            f"{k}={signature(getattr(v, k))}" for k in v._fields) + ")"
    if isinstance(v, tuple):
        return "(" + ", ".join(signature(x) for x in v) + ")"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {signature(v[k])}" for k in sorted(v)) + "}"
    return str(jax.typeof(v))
"""


def test_the_state_is_known_for_each_transformation():
    for tx in TRANSFORMS:
        assert "?" not in _signature(_analysed(tx)), tx


def test_a_keyword_that_changes_the_state_leaves_it_unknown():
    for tx in UNKNOWN_STATES:
        assert _analysed(tx) is UNKNOWN, tx


def test_state_is_optax_s():
    from jax_snippets import run_snippets
    code = PARAMS + _JAX_SIGNATURE + "RESULT = [signature(tx.init(params)) for tx in [" + \
        ", ".join(TRANSFORMS) + "]]\n"
    res = run_snippets([code])[0]
    assert res["status"] == "ok", res
    assert res["result"] == [_signature(_analysed(tx)) for tx in TRANSFORMS]


HEAD = """\
import jax
import jax.numpy as jnp
import optax
from flax.training import train_state
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
"""

PREFIX = "pytree structure error"
RANK = "only valid for values of rank at least 1"

# name -> (program, the message JAX raises with, or None where the program runs)
CASES = {
    "opt_state_given_the_params_shardings": ("""
def init_params(key, sizes=(16, 32, 8)):
    params = {}
    for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        key, sub = jax.random.split(key)
        params[f"dense{i}"] = {"kernel": jax.random.normal(sub, (n_in, n_out)),
                               "bias": jnp.zeros((n_out,))}
    return params

def step(params, opt_state, x):
    grads = jax.grad(lambda p: jnp.sum(x @ p["dense0"]["kernel"]))(params)
    updates, opt_state = tx.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state

tx = optax.sgd(0.1, momentum=0.9)
mesh = jax.make_mesh((8,), ("data",))
params = init_params(jax.random.key(0))
opt_state = tx.init(params)
param_sh = jax.tree.map(lambda _: NamedSharding(mesh, P()), params)
x_sh = NamedSharding(mesh, P("data", None))
train = jax.jit(step, in_shardings=(param_sh, param_sh, x_sh))  # <- SC310
train(params, opt_state, jnp.ones((8, 16)))
""", PREFIX),
    "opt_state_given_its_own_shardings": ("""
def step(params, opt_state, x):
    grads = jax.grad(lambda p: jnp.sum(x @ p["w"]))(params)
    updates, opt_state = tx.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state

tx = optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(1e-3))
mesh = jax.make_mesh((8,), ("data",))
params = {"w": jnp.zeros((16, 8)), "b": jnp.zeros((8,))}
opt_state = tx.init(params)
param_sh = jax.tree.map(lambda _: NamedSharding(mesh, P()), params)
opt_sh = jax.tree.map(lambda _: NamedSharding(mesh, P()), opt_state)
train = jax.jit(step, in_shardings=(param_sh, opt_sh, NamedSharding(mesh, P("data"))),
                out_shardings=(param_sh, opt_sh))
params, opt_state = train(params, opt_state, jnp.ones((8, 16)))
""", None),
    "adam_state_given_a_tuple_per_moment": ("""
tx = optax.adam(1e-3)
mesh = jax.make_mesh((8,), ("data",))
params = {"w": jnp.zeros((16, 8))}
opt_state = tx.init(params)
rep = NamedSharding(mesh, P())
moments = {"w": NamedSharding(mesh, P("data", None))}
# optax's state is (ScaleByAdamState(count, mu, nu), EmptyState()): not a plain tuple
opt_sh = ((rep, moments, moments), rep)  # <- SC310
jax.jit(lambda s: s, in_shardings=(opt_sh,))(opt_state)
""", PREFIX),
    "fsdp_rule_given_the_scalar_step": ("""
params = {"w": jnp.zeros((16, 8)), "b": jnp.zeros((8,))}
state = train_state.TrainState.create(apply_fn=None, params=params, tx=optax.adamw(1e-3))
mesh = jax.make_mesh((8,), ("data",), axis_types=(AxisType.Auto,))

def leaf_sharding(x):
    return NamedSharding(mesh, P("data"))

state = jax.device_put(state, jax.tree.map(leaf_sharding, state))  # <- SC103
""", RANK),
    "fsdp_rule_that_replicates_scalars": ("""
params = {"w": jnp.zeros((16, 8)), "b": jnp.zeros((8,))}
state = train_state.TrainState.create(apply_fn=None, params=params, tx=optax.adamw(1e-3))
mesh = jax.make_mesh((8,), ("data",), axis_types=(AxisType.Auto,))

def leaf_sharding(x):
    return NamedSharding(mesh, P("data") if jnp.ndim(x) else P())

state_sh = jax.tree.map(leaf_sharding, state)
state = jax.device_put(state, state_sh)

def train_step(state, x):
    grads = jax.grad(lambda p: jnp.sum(x @ p["w"] + p["b"]))(state.params)
    return state.apply_gradients(grads=grads)

state = jax.jit(train_step, in_shardings=(state_sh, NamedSharding(mesh, P("data"))),
                out_shardings=state_sh)(state, jnp.ones((8, 16)))
""", None),
    "moment_leaf_placed_with_too_long_a_spec": ("""
mesh = jax.make_mesh((2, 4), ("data", "model"))
params = {"embed": jnp.zeros((64, 16)), "norm": jnp.ones((16,))}
mu = optax.scale_by_adam().init(params).mu
jax.device_put(mu["norm"], NamedSharding(mesh, P(None, "model")))  # <- SC103
""", "compat:spec.longer_than_rank_sharded_last"),
}


test_check_follows_the_optimizer, test_every_case_with_a_finding_expects_jax_to_raise, test_jax_agrees = \
    case_tests(HEAD, CASES)
