"""``analyzer/jaxapi/configs.py``: config objects the program builds, followed by
``check`` where the source spells every value (``ml_collections.ConfigDict`` filled in
``get_config()``, ``argparse`` defaults through ``parse_args([])``), and unknown where it
does not (``parse_args()`` reads the command line).

Each program runs under JAX, ml_collections and argparse too (``test_jax_agrees``); the
line of each expected finding is marked ``# <- CODE``."""

from __future__ import annotations


from marked_programs import case_tests


HEAD = """\
import argparse
import jax
import jax.numpy as jnp
import ml_collections
from jax.sharding import NamedSharding, PartitionSpec as P
"""

NOT_DIVISIBLE = "evenly divide"
NOT_IN_MESH = "not found in mesh"

CASES = {
    "config_dict_nested_fields": ("""
def get_config():
    config = ml_collections.ConfigDict()
    config.model = ml_collections.ConfigDict()
    config.model.num_heads = 6
    config.mesh_shape = (2, 4)
    return config

def init(config):
    mesh = jax.make_mesh(config.mesh_shape, ("data", "model"))
    w = jnp.zeros((16, config.model.num_heads))
    return jax.device_put(w, NamedSharding(mesh, P(None, "model")))  # <- SC104

init(get_config())
""", NOT_DIVISIBLE),
    "config_dict_from_a_dict": ("""
def get_config():
    return ml_collections.ConfigDict({"axes": ("data", "modle"), "model": {"dim": 8}})

config = get_config()
mesh = jax.make_mesh((2, 4), ("data", "model"))
spec = P(*config.axes)  # <- SC101
x = jax.device_put(jnp.zeros((8, config.model.dim)), NamedSharding(mesh, spec))
""", NOT_IN_MESH),
    "frozen_config_dict_copies": ("""
base = ml_collections.ConfigDict()
base.batch = 12
frozen = ml_collections.FrozenConfigDict(base)
mesh = jax.make_mesh((2, 4), ("data", "model"))
x = jax.device_put(jnp.zeros((frozen.batch, 4)), NamedSharding(mesh, P(("data", "model"))))  # <- SC104
""", NOT_DIVISIBLE),
    "config_dict_given_to_a_call_is_unknown_after": ("""
def get_config():
    config = ml_collections.ConfigDict()
    config.batch = 12
    return config

def fix(config):
    config.batch = 16

config = get_config()
fix(config)
mesh = jax.make_mesh((2, 4), ("data", "model"))
x = jax.device_put(jnp.zeros((config.batch, 4)), NamedSharding(mesh, P(("data", "model"))))
""", None),
    "argparse_defaults_of_an_empty_list": ("""
def parse_args(argv=()):
    parser = argparse.ArgumentParser()
    parser.add_argument("--tp", type=int, default=4)
    parser.add_argument("--num-heads", type=int, default="6")
    return parser.parse_args(list(argv))

args = parse_args()
mesh = jax.make_mesh((2, args.tp), ("data", "tensor"))
w = jax.device_put(jnp.zeros((args.num_heads, 8)), NamedSharding(mesh, P("tensor")))  # <- SC104
""", NOT_DIVISIBLE),
    "argparse_dest_and_short_flags": ("""
parser = argparse.ArgumentParser()
parser.add_argument("-a", "--axis", dest="shard_axis", default="modle")
parser.add_argument("-b", default=8, type=int)
args = parser.parse_args([])
mesh = jax.make_mesh((2, 4), ("data", "model"))
x = jax.device_put(jnp.zeros((args.b, 4)), NamedSharding(mesh, P(args.shard_axis)))  # <- SC101
""", NOT_IN_MESH),
    "argparse_from_the_command_line_is_unknown": ("""
import sys
sys.argv = ["train.py"]  # the snippet's command line (a user's may set --heads 8)
parser = argparse.ArgumentParser()
parser.add_argument("--heads", type=int, default=6)
args = parser.parse_args()
mesh = jax.make_mesh((2, 4), ("data", "model"))
if args.heads % 4 == 0:
    x = jax.device_put(jnp.zeros((args.heads, 4)), NamedSharding(mesh, P("model")))
""", None),
    "argparse_with_an_action_is_unknown": ("""
parser = argparse.ArgumentParser()
parser.add_argument("--heads", type=int, default=6, action="store")
parser.add_argument("--big", action="store_true")
args = parser.parse_args([])
heads = 8 if args.big is False else args.heads
mesh = jax.make_mesh((2, 4), ("data", "model"))
x = jax.device_put(jnp.zeros((heads, 4)), NamedSharding(mesh, P("model")))
""", None),
}


test_check_follows_the_config, test_every_case_with_a_finding_expects_jax_to_raise, test_jax_agrees = \
    case_tests(HEAD, CASES)
