"""Flax NNX (``analyzer/jaxapi/flax_nnx.py``): variables placed by their sharding
metadata, the built-in layers (``nnx.Linear``, ``nnx.LinearGeneral``, ``nnx.Embed``) and
their calls, ``nnx.jit``/``nnx.value_and_grad`` running a module's code, and the State
trees of ``nnx.split``/``nnx.get_named_sharding``.

Each program runs under JAX and flax too (``test_jax_agrees``): a program with an
expected finding raises there (the message named), every other one runs to its end, and
where it sets ``RESULT`` to ``str(jax.typeof(y))`` that is the type ``check`` infers for
the last assignment of ``y``. The line of each expected finding is marked ``# <- CODE``."""

from __future__ import annotations

from typing import Dict, Optional, Tuple

from marked_programs import case_tests

from shardcheck.analyzer.inferred_types import infer_types

HEAD = """\
import jax
import jax.numpy as jnp
from flax import nnx
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ("data", "model"))
"""

# name -> (program, the message JAX raises with, or None where the program runs)
CASES: Dict[str, Tuple[str, Optional[str]]] = {
    "linear_general_heads_indivisible": ("""
class Attention(nnx.Module):
    def __init__(self, d_model, heads, rngs):
        init = nnx.with_partitioning(nnx.initializers.lecun_normal(), (None, "model", None))
        self.qkv = nnx.LinearGeneral(d_model, (heads, 24), kernel_init=init,  # <- SC104
                                     use_bias=False, rngs=rngs)

with jax.set_mesh(mesh):
    Attention(48, 6, nnx.Rngs(0))
""", "does not evenly divide the dimension size 6"),
    "partitioned_linear_under_legacy_with_mesh": ("""
import warnings
warnings.simplefilter("ignore", DeprecationWarning)

class Model(nnx.Module):
    def __init__(self, rngs):
        init = nnx.with_partitioning(nnx.initializers.lecun_normal(), (None, "model"))
        self.linear = nnx.Linear(16, 8, kernel_init=init, rngs=rngs)  # <- SC107

with mesh:  # NNX reads the mesh jax.set_mesh sets; this sets none for it
    Model(nnx.Rngs(0))
""", "An auto mesh context or metadata is required"),
    "partitioned_linear_under_set_mesh": ("""
class Model(nnx.Module):
    def __init__(self, rngs):
        init = nnx.with_partitioning(nnx.initializers.lecun_normal(), (None, "model"))
        self.linear = nnx.Linear(16, 8, kernel_init=init, rngs=rngs)

with jax.set_mesh(mesh):
    Model(nnx.Rngs(0))
""", None),
    "partitioned_param_with_mesh_metadata": ("""
w = nnx.Param(jnp.ones((16, 8)), out_sharding=(None, "model"), mesh=mesh)
""", None),
    "param_indivisible": ("""
with jax.set_mesh(mesh):
    w = nnx.Param(nnx.with_partitioning(nnx.initializers.zeros, ("model", None))(  # <- SC104
        jax.random.key(0), (6, 8)))
""", "does not evenly divide the dimension size 6"),
    "row_parallel_needs_out_sharding": ("""
class FeedForward(nnx.Module):
    def __init__(self, rngs):
        init = nnx.initializers.lecun_normal()
        self.up = nnx.Linear(16, 64, rngs=rngs, kernel_init=nnx.with_partitioning(init, (None, "model")),
                             bias_init=nnx.with_partitioning(nnx.initializers.zeros, ("model",)))
        self.down = nnx.Linear(64, 16, use_bias=False, rngs=rngs,
                               kernel_init=nnx.with_partitioning(init, ("model", None)))

    def __call__(self, x):
        return self.down(nnx.relu(self.up(x)))  # <- SC301

@nnx.jit
def step(model, x):
    return nnx.value_and_grad(lambda m: (m(x) ** 2).mean())(model)[0]

with jax.set_mesh(mesh):
    step(FeedForward(nnx.Rngs(0)), jax.random.normal(jax.random.key(1), (8, 16), out_sharding=P("data", None)))
""", "Contracting dimensions are sharded"),
    "row_parallel_out_sharding_types": ("""
class FeedForward(nnx.Module):
    def __init__(self, rngs):
        init = nnx.initializers.lecun_normal()
        self.up = nnx.Linear(16, 64, rngs=rngs, kernel_init=nnx.with_partitioning(init, (None, "model")),
                             bias_init=nnx.with_partitioning(nnx.initializers.zeros, ("model",)))
        self.down = nnx.Linear(64, 16, use_bias=False, rngs=rngs,
                               kernel_init=nnx.with_partitioning(init, ("model", None)))

    def __call__(self, x):
        h = nnx.relu(self.up(x))
        y = self.down(h, out_sharding=P("data", None))
        return h, y

with jax.set_mesh(mesh):
    model = FeedForward(nnx.Rngs(0))
    x = jax.random.normal(jax.random.key(1), (8, 16), out_sharding=P("data", None))
    h, y = nnx.jit(lambda m, x: m(x))(model, x)
    RESULT = (str(jax.typeof(h)), str(jax.typeof(y)))
""", None),
    "rules_resolve_kernel_names": ("""
RULES = (("embed", None), ("mlp", "model"))

class Mlp(nnx.Module):
    def __init__(self, rngs):
        self.w = nnx.Linear(8, 32, use_bias=False, rngs=rngs, kernel_init=nnx.with_partitioning(
            nnx.initializers.lecun_normal(), ("embed", "mlp")))

with jax.set_mesh(mesh), nnx.logical_axis_rules(RULES):
    model = Mlp(nnx.Rngs(0))
    x = jax.random.normal(jax.random.key(1), (8, 8), out_sharding=P("data", None))
    y = model.w(x)
    RESULT = (str(jax.typeof(y)),)
""", None),
    "default_init_is_replicated": ("""
with jax.set_mesh(mesh):
    layer = nnx.Linear(16, 8, rngs=nnx.Rngs(0))
    x = jax.random.normal(jax.random.key(1), (8, 16), out_sharding=P("data", None))
    y = layer(x)
    RESULT = (str(jax.typeof(y)),)
""", None),
    "constraint_after_linear_asserts": ("""
class Block(nnx.Module):
    def __init__(self, rngs):
        self.dot = nnx.Linear(32, 32, use_bias=False, rngs=rngs, kernel_init=nnx.with_partitioning(
            nnx.initializers.lecun_normal(), (None, "model")))

    def __call__(self, x):
        y = jax.nn.relu(self.dot(x))
        return jax.lax.with_sharding_constraint(y, P("data", None))  # <- SC309

with jax.set_mesh(mesh):
    nnx.jit(lambda m, x: m(x))(Block(nnx.Rngs(0)),
                               jax.random.normal(jax.random.key(1), (8, 32), out_sharding=P("data", None)))
""", "acts as an assert"),
    "embed_lookup_with_sharded_ids": ("""
class Decoder(nnx.Module):
    def __init__(self, rngs):
        self.embed = nnx.Embed(32, 16, rngs=rngs, embedding_init=nnx.with_partitioning(
            nnx.initializers.normal(0.02), ("model", None)))

    def __call__(self, tokens):
        return self.embed.attend(self.embed(tokens), out_sharding=P("data", None, None))  # <- SC306

with jax.set_mesh(mesh):
    tokens = jax.random.randint(jax.random.key(0), (4, 8), 0, 32, out_sharding=P("data", None))
    nnx.jit(lambda m, t: m(t))(Decoder(nnx.Rngs(0)), tokens)
""", "Use `.at[...].get(out_sharding=)`"),
    "embed_lookup_out_sharding_types": ("""
class Decoder(nnx.Module):
    def __init__(self, rngs):
        self.embed = nnx.Embed(32, 16, rngs=rngs, embedding_init=nnx.with_partitioning(
            nnx.initializers.normal(0.02), ("model", None)))

    def __call__(self, tokens):
        x = self.embed(tokens, out_sharding=P("data", None, None))
        y = self.embed.attend(x, out_sharding=P("data", None, "model"))
        return y

with jax.set_mesh(mesh):
    tokens = jax.random.randint(jax.random.key(0), (4, 8), 0, 32, out_sharding=P("data", None))
    y = nnx.jit(lambda m, t: m(t))(Decoder(nnx.Rngs(0)), tokens)
    RESULT = (str(jax.typeof(y)),)
""", None),
    "split_state_out_shardings_not_prefix": ("""
class Encoder(nnx.Module):
    def __init__(self, rngs):
        self.w = nnx.Linear(8, 8, use_bias=False, rngs=rngs, kernel_init=nnx.with_partitioning(
            nnx.initializers.lecun_normal(), (None, "model")))

def step(graphdef, state, x):
    loss = jnp.mean(nnx.merge(graphdef, state).w(x) ** 2)
    return state, loss

with jax.set_mesh(mesh):
    graphdef, state = nnx.split(Encoder(nnx.Rngs(0)))
    shardings = nnx.get_named_sharding(state, mesh)
    jitted = jax.jit(step, static_argnums=0, out_shardings=shardings)  # <- SC310
    jitted(graphdef, state, jnp.ones((8, 8)))
""", "the prefix pytree pjit out_shardings has a subtree of type"),
    # on Auto axes a variable's sharding is a constraint: an indivisible dim raises
    # IndivisibleError eagerly, not under nnx.jit (flax's nnx_toy_examples/10_fsdp...)
    "auto_param_indivisible_eagerly": ("""
from jax.sharding import AxisType
auto = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)

class Head(nnx.Module):
    def __init__(self, rngs):
        self.w = nnx.Param(nnx.initializers.lecun_normal()(rngs.params(), (32, 1)),
                           out_sharding=(None, "model"))  # <- SC104

with jax.set_mesh(auto):
    Head(nnx.Rngs(0))
""", "per-dimension tiling factors"),
    "auto_param_indivisible_under_jit": ("""
from jax.sharding import AxisType
auto = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)

class Head(nnx.Module):
    def __init__(self, rngs):
        self.w = nnx.Param(nnx.initializers.lecun_normal()(rngs.params(), (32, 1)),
                           out_sharding=(None, "model"))

@nnx.jit
def create():
    return Head(rngs=nnx.Rngs(0))

with jax.set_mesh(auto):
    create()
""", None),
    "split_state_out_shardings_per_output": ("""
class Encoder(nnx.Module):
    def __init__(self, rngs):
        self.w = nnx.Linear(8, 8, use_bias=False, rngs=rngs, kernel_init=nnx.with_partitioning(
            nnx.initializers.lecun_normal(), (None, "model")))

def step(graphdef, state, x):
    loss = jnp.mean(nnx.merge(graphdef, state).w(x) ** 2)
    return state, loss

with jax.set_mesh(mesh):
    graphdef, state = nnx.split(Encoder(nnx.Rngs(0)))
    shardings = nnx.get_named_sharding(nnx.state(nnx.merge(graphdef, state)), mesh)
    jitted = jax.jit(step, static_argnums=0, out_shardings=(shardings, NamedSharding(mesh, P())))
    jitted(graphdef, state, jnp.ones((8, 8)))
""", None),
}


# JAX's side is this module's own test_jax_agrees (it compares the types too)
test_check_follows_nnx, test_every_case_with_a_finding_expects_jax_to_raise, _ = \
    case_tests(HEAD, CASES)


def _inferred(program: str, names: Tuple[str, ...]) -> Tuple[Optional[str], ...]:
    """The type ``check`` infers for the last assignment of each of ``names``."""
    last: Dict[str, Optional[str]] = {}
    for t in infer_types(HEAD + program, "m.py"):
        last[t.name] = t.type
    return tuple(last.get(n) for n in names)


TYPED = {"row_parallel_out_sharding_types": ("h", "y"), "rules_resolve_kernel_names": ("y",),
         "default_init_is_replicated": ("y",), "embed_lookup_out_sharding_types": ("y",)}


def test_jax_agrees():
    from jax_snippets import run_snippets
    names = sorted(CASES)
    results = run_snippets([HEAD + CASES[n][0] for n in names])
    for name, res in zip(names, results):
        message = CASES[name][1]
        if message is not None:
            assert res["status"] == "error" and message in res["error"], (name, res)
            continue
        assert res["status"] == "ok", (name, res)
        if name in TYPED:
            assert _inferred(CASES[name][0], TYPED[name]) == tuple(res["result"]), (name, res)
