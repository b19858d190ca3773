"""Flax Linen (``analyzer/jaxapi/flax_linen.py``): ``model.init``/``model.apply`` run the
module's ``__call__`` where they are called (eagerly, under ``jax.jit`` and
``jax.eval_shape``), the built-in layers' outputs (``nn.Dense``, ``nn.Embed``) and their
parameters boxed by ``nn.with_logical_partitioning``, unboxed under the rules in force
where the layer first runs.

Each program runs under JAX and flax too (``test_jax_agrees``): a program with an
expected finding raises there (the message named), every other one runs to its end. The
line of each expected finding is marked ``# <- CODE``."""

from __future__ import annotations

from typing import Dict, Optional, Tuple

from marked_programs import case_tests

HEAD = """\
import jax
import jax.numpy as jnp
from flax import linen as nn
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
"""

CLASSIFIER = """
class Classifier(nn.Module):
    vocab: int = 100
    embed: int = 32

    @nn.compact
    def __call__(self, tokens):
        x = nn.Embed(self.vocab, self.embed)(tokens)
        x = nn.with_logical_constraint(x, ("batch", None, "embed"))
        pooled = jnp.mean(nn.Dense(self.embed)(nn.gelu(x)), axis=1)
        return nn.with_logical_constraint(pooled, {names}){marker}
"""

SQUARE = """
class Block(nn.Module):
    @nn.compact
    def __call__(self, x):
        kernel = self.param("kernel", nn.with_logical_partitioning(
            nn.initializers.orthogonal(),
            {names}
            (32, 32))
        return x @ kernel
"""

FEED_FORWARD = """
class FeedForward(nn.Module):
    def setup(self):
        init = nn.initializers.xavier_uniform()
        self.wi = nn.Dense(64, use_bias=False,
                           kernel_init=nn.with_logical_partitioning(init, ("embed", "mlp")))

    def __call__(self, x):
        return nn.relu(self.wi(x)){marker}
"""

EMBED = """
class Embedder(nn.Module):
    vocab: int

    def setup(self):
        self.table = nn.Embed(self.vocab, 32, embedding_init=nn.with_logical_partitioning(
            nn.initializers.normal(0.02), ("vocab", "embed")))

    def __call__(self, tokens):
        return self.table(tokens){marker}
"""

RULES = 'RULES = (("batch", "data"), ("vocab", "model"), ("embed", "model"), ("mlp", {mlp}))\n'

# name -> (program, the message JAX raises with, or None where the program runs)
CASES: Dict[str, Tuple[str, Optional[str]]] = {
    "jit_init_pooled_rank": (CLASSIFIER.format(
        names='("batch", "length", "embed")', marker="  # <- SC103") + RULES.format(mlp="None") + """
with jax.set_mesh(mesh), nn.logical_axis_rules(RULES):
    variables = jax.jit(Classifier().init)(jax.random.key(0), jnp.zeros((8, 12), jnp.int32))
""", "incompatible with its sharding annotation"),
    "jit_init_pooled_rank_fixed": (CLASSIFIER.format(names='("batch", "embed")', marker="")
                                   + RULES.format(mlp="None") + """
with jax.set_mesh(mesh), nn.logical_axis_rules(RULES):
    model = Classifier()
    variables = jax.jit(model.init)(jax.random.key(0), jnp.zeros((8, 12), jnp.int32))
    logits = jax.jit(model.apply)(variables, jnp.zeros((8, 12), jnp.int32))
""", None),
    # eval_shape and a jit with out_shardings trace __call__ in two contexts that differ
    # but for the rules, which stay in force in its analysis
    "square_kernel_names": (SQUARE.format(names='("embed", "embed")),  # <- SC111')
                            + RULES.format(mlp="None") + """
block = Block()
x = jnp.ones((8, 32))
with jax.set_mesh(mesh), nn.logical_axis_rules(RULES):
    abstract = jax.eval_shape(block.init, jax.random.key(0), x)
    variables = jax.jit(block.init, out_shardings=NamedSharding(mesh, P()))(
        jax.random.key(0), x)
""", "occur more than once in array names"),
    "square_kernel_names_fixed": (SQUARE.format(names='("embed", None)),')
                                  + RULES.format(mlp="None") + """
block = Block()
x = jnp.ones((8, 32))
with jax.set_mesh(mesh), nn.logical_axis_rules(RULES):
    abstract = jax.eval_shape(block.init, jax.random.key(0), x)
    variables = jax.jit(block.init, out_shardings=NamedSharding(mesh, P()))(
        jax.random.key(0), x)
""", None),
    # the Dense is made in setup (outside the rules); its kernel is unboxed where it runs
    "setup_dense_rule_to_missing_axis": (FEED_FORWARD.format(marker="  # <- SC101")
                                         + RULES.format(mlp='"tensor"') + """
model = FeedForward()
with jax.set_mesh(mesh), nn.logical_axis_rules(RULES):
    jax.eval_shape(model.init, jax.random.key(0), jnp.ones((8, 16)))
""", "is not found in mesh"),
    "setup_dense_rule_fixed": (FEED_FORWARD.format(marker="") + RULES.format(mlp='"model"') + """
model = FeedForward()
with jax.set_mesh(mesh), nn.logical_axis_rules(RULES):
    variables = model.init(jax.random.key(0), jnp.ones((8, 16)))
""", None),
    "eager_init_vocab_indivisible": (EMBED.format(marker="  # <- SC104")
                                     + RULES.format(mlp="None") + """
with jax.set_mesh(mesh), nn.logical_axis_rules(RULES):
    Embedder(509).init(jax.random.key(0), jnp.zeros((8, 16), jnp.int32))
""", "partitioned 4 times"),
    # under jax.jit (and eval_shape) the unboxing constraint does not check divisibility
    "jit_init_vocab_indivisible_runs": (EMBED.format(marker="") + RULES.format(mlp="None") + """
with jax.set_mesh(mesh), nn.logical_axis_rules(RULES):
    variables = jax.jit(Embedder(509).init)(jax.random.key(0), jnp.zeros((8, 16), jnp.int32))
    jax.eval_shape(Embedder(509).init, jax.random.key(0), jnp.zeros((8, 16), jnp.int32))
""", None),
    # a param of the module's own, boxed with indivisible names, under jax.jit
    "jit_init_param_indivisible_runs": ("""
class Head(nn.Module):
    @nn.compact
    def __call__(self, x):
        w = self.param("w", nn.with_logical_partitioning(nn.initializers.zeros_init(),
                                                         ("vocab", None)), (6, 8))
        return x @ w
""" + RULES.format(mlp="None") + """
with jax.set_mesh(mesh), nn.logical_axis_rules(RULES):
    variables = jax.jit(Head().init)(jax.random.key(0), jnp.ones((2, 6)))
""", None),
    # outside any rules the boxed names are not resolved: the init runs
    "no_rules_is_no_op": (EMBED.format(marker="") + """
with jax.set_mesh(mesh):
    Embedder(509).init(jax.random.key(0), jnp.zeros((8, 16), jnp.int32))
""", None),
    # jax.eval_shape traces a plain function on its arguments
    "eval_shape_traces_function": ("""
def f(x):
    return jax.lax.with_sharding_constraint(x, P("data", None, "model"))  # <- SC103

with jax.set_mesh(mesh):
    jax.eval_shape(f, jnp.ones((8, 16)))
""", "incompatible with its sharding annotation"),
}


test_check_follows_linen, test_every_case_with_a_finding_expects_jax_to_raise, test_jax_agrees = \
    case_tests(HEAD, CASES)
