"""Flax NNX's optimizers (``analyzer/jaxapi/flax_optimizers.py``): ``nnx.Optimizer`` and
``nnx.ModelAndOptimizer`` make a stateful transformation's moments as Variables that copy
their parameters' metadata, so a parameter sharded by names with no ``mesh=`` needs a
mesh set again where the optimizer is made.

Each program runs under JAX, flax and optax too (``test_jax_agrees``): a program with an
expected finding raises there (the message named), every other one runs to its end. The
line of each expected finding is marked ``# <- CODE``."""

from __future__ import annotations

from typing import Dict, Optional, Tuple

from marked_programs import case_tests

HEAD = """\
import jax
import optax
from flax import nnx
mesh = jax.make_mesh((2, 4), ("data", "model"))


class MLP(nnx.Module):
    def __init__(self, rngs):
        init = nnx.with_partitioning(nnx.initializers.lecun_normal(), (None, "model"))
        self.up = nnx.Linear(8, 32, kernel_init=init, rngs=rngs)
        self.down = nnx.Linear(32, 8, rngs=rngs)

"""

NO_MESH = "An auto mesh context or metadata is required"

# name -> (program, the message JAX raises with, or None where the program runs)
CASES: Dict[str, Tuple[str, Optional[str]]] = {
    "adam_made_after_the_mesh_context": ("""
with jax.set_mesh(mesh):
    model = MLP(nnx.Rngs(0))
optimizer = nnx.Optimizer(model, optax.adam(1e-3), wrt=nnx.Param)  # <- SC107
""", NO_MESH),
    "adam_made_in_the_mesh_context": ("""
with jax.set_mesh(mesh):
    model = MLP(nnx.Rngs(0))
    optimizer = nnx.Optimizer(model, optax.adam(1e-3), wrt=nnx.Param)
""", None),
    "a_helper_makes_the_optimizer_outside_the_context": ("""
def make_optimizer(model, learning_rate):
    return nnx.Optimizer(model, optax.adamw(learning_rate), wrt=nnx.Param)  # <- SC107

with jax.set_mesh(mesh):
    model = MLP(nnx.Rngs(0))
optimizer = make_optimizer(model, 3e-4)
""", NO_MESH),
    "model_and_optimizer_under_the_legacy_with_mesh": ("""
import warnings
warnings.simplefilter("ignore", DeprecationWarning)

with jax.set_mesh(mesh):
    model = MLP(nnx.Rngs(0))
with mesh:  # sets no mesh that Flax NNX reads
    optimizer = nnx.ModelAndOptimizer(model, optax.sgd(0.1, momentum=0.9))  # <- SC107
""", NO_MESH),
    "parameters_annotated_replicated_need_the_mesh_too": ("""
class Replicated(nnx.Module):
    def __init__(self, rngs):
        init = nnx.with_partitioning(nnx.initializers.lecun_normal(), (None, None))
        self.up = nnx.Linear(8, 32, kernel_init=init, rngs=rngs)

with jax.set_mesh(mesh):
    model = Replicated(nnx.Rngs(0))
optimizer = nnx.Optimizer(model, optax.adam(1e-3), wrt=nnx.Param)  # <- SC107
""", NO_MESH),
    "sgd_without_momentum_keeps_no_moments": ("""
with jax.set_mesh(mesh):
    model = MLP(nnx.Rngs(0))
optimizer = nnx.Optimizer(model, optax.sgd(0.1), wrt=nnx.Param)
""", None),
    "parameters_with_mesh_metadata": ("""
class Tagged(nnx.Module):
    def __init__(self, rngs):
        init = nnx.with_partitioning(nnx.initializers.lecun_normal(), (None, "model"), mesh=mesh)
        self.up = nnx.Linear(8, 32, kernel_init=init, rngs=rngs)

model = Tagged(nnx.Rngs(0))
optimizer = nnx.Optimizer(model, optax.adam(1e-3), wrt=nnx.Param)
""", None),
    "mesh_metadata_passed_through_kwargs": ("""
class Configurable(nnx.Module):
    def __init__(self, rngs, **metadata):
        init = nnx.with_partitioning(nnx.initializers.lecun_normal(), (None, "model"), **metadata)
        self.up = nnx.Linear(8, 32, kernel_init=init, rngs=rngs)

model = Configurable(nnx.Rngs(0), mesh=mesh)
optimizer = nnx.Optimizer(model, optax.adam(1e-3), wrt=nnx.Param)
""", None),
    "optax_init_of_the_state_makes_plain_arrays": ("""
with jax.set_mesh(mesh):
    model = MLP(nnx.Rngs(0))
opt_state = optax.adam(1e-3).init(nnx.state(model, nnx.Param))
""", None),
}

test_check_follows_the_code, test_every_case_with_a_finding_expects_jax_to_raise, \
    test_jax_agrees = case_tests(HEAD, CASES)
