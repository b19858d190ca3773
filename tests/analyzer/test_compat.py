"""The JAX version profiles (analyzer/compat): well-formed, and true of the installed JAX.

Every profile's data is checked for shape and consistency. The profile of the JAX that
runs the tests is checked against JAX itself on 8 CPU devices: its names resolve, its
aliases name the same objects, removed names are gone and deprecated ones warn, its
behaviour flags hold, its error signatures match what JAX raises for small programs, and
its dtypes are the ones arrays can have. The other profiles' JAX-backed tests skip; run
the file under each supported JAX (0.10.2, 0.11.2, 0.12.0.1) to check them all.
"""

import importlib
import importlib.metadata
import re
import textwrap
import warnings
from dataclasses import fields

import pytest

from shardcheck.analyzer import compat
from shardcheck.analyzer.compat import MESH_ENTER, PROFILES, Behaviour, profile_for
from shardcheck.analyzer.compat.names import HISTORY
from shardcheck.analyzer.compat.profile import minor_of, release_key
from shardcheck.check.config import Config, ConfigError, from_table
from shardcheck.analyzer.engine import check_source
from shardcheck.analyzer.rules import all_rules

INSTALLED = importlib.metadata.version("jax")
IDS = [p.version for p in PROFILES]
by_profile = pytest.mark.parametrize("profile", PROFILES, ids=IDS)

# --- small programs: each raises one error signature, or reports one behaviour -------------

_HEAD = """import jax
import jax.numpy as jnp
import numpy as np
from jax import P
from jax.sharding import NamedSharding
mesh = jax.make_mesh((2, 4), ("x", "y"))
"""


def _under_mesh(body: str) -> str:
    return _HEAD + "with jax.set_mesh(mesh):\n" + textwrap.indent(body, "    ")


ERROR_PROGRAMS = {
    "mesh.axis_not_found": _HEAD + """
jax.device_put(jnp.zeros((8, 16)), NamedSharding(mesh, P("batch", None)))""",
    "mesh.operands_differ": _HEAD + """
flat = jax.make_mesh((8,), ("d",))
a = jax.device_put(jnp.zeros((8,)), NamedSharding(mesh, P("x")))
b = jax.device_put(jnp.ones((8,)), NamedSharding(flat, P("d")))
a + b""",
    "mesh.context_differs_from_operand": _HEAD + """
flat = jax.make_mesh((8,), ("d",))
b = jax.device_put(jnp.ones((8,)), NamedSharding(flat, P("d")))
with jax.set_mesh(mesh):
    b * 2""",
    "mesh.context_differs_from_sharding": _HEAD + """
flat = jax.make_mesh((8,), ("d",))
with jax.set_mesh(mesh):
    jnp.zeros((8, 8), out_sharding=NamedSharding(flat, P("d")))""",
    "mesh.too_few_devices": _HEAD + """
jax.make_mesh((4, 4), ("a", "b"))""",
    "mesh.device_count_differs": _HEAD + """
from jax.experimental import mesh_utils
mesh_utils.create_device_mesh((2, 2))""",
    "mesh.unset_device_put": _HEAD + """
jax.device_put(jnp.zeros((8, 16)), P("x", None))""",
    "mesh.context_empty": _HEAD + """
jax.shard_map(lambda b: 2 * b, in_specs=P("x"), out_specs=P("x"))(jnp.zeros((8,)))""",
    "spec.duplicate_axis": _HEAD + """
jax.device_put(jnp.zeros((8, 16)), NamedSharding(mesh, P("x", "x")))""",
    "spec.longer_than_rank": _HEAD + """
jax.device_put(jnp.zeros((8,)), NamedSharding(mesh, P("x", None)))""",
    "spec.longer_than_rank_sharded_last": _HEAD + """
jax.device_put(jnp.zeros((8,)), NamedSharding(mesh, P("x", "y")))""",
    "sharding.indivisible": _HEAD + """
jax.device_put(jnp.zeros((6, 16)), NamedSharding(mesh, P("y", None)))""",
    "axis_type.not_explicit": _HEAD + """
auto = jax.make_mesh((2, 4), ("a", "b"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
with jax.set_mesh(auto):
    jax.sharding.reshard(jnp.zeros((8, 16)), P("a", None))""",
    "shard_map.spec_axis_not_manual": _under_mesh("""
x = jax.device_put(jnp.zeros((8, 16)), P("x", None))
jax.jit(jax.shard_map(lambda b: b, in_specs=P("x", None), out_specs=P("z", None)))(x)"""),
    "shard_map.in_spec_too_long": _under_mesh("""
x = jax.device_put(jnp.arange(8.0), P("x"))
jax.shard_map(lambda b: b, in_specs=P("x", "y"), out_specs=P("x"))(x)"""),
    "shard_map.context_mesh_mismatch": _HEAD + """
flat = jax.make_mesh((8,), ("d",))
with jax.set_mesh(mesh):
    f = jax.shard_map(lambda b: b, mesh=flat, in_specs=P("d"), out_specs=P("d"))
    jax.jit(f)(jnp.zeros((8,)))""",
    "shard_map.replication_not_inferred": _under_mesh("""
x = jax.device_put(jnp.ones((8, 16)), P("x", "y"))
w = jax.device_put(jnp.ones((16, 4)), P("y", None))
jax.jit(jax.shard_map(lambda a, b: a @ b, in_specs=(P("x", "y"), P("y", None)),
                      out_specs=P("x", None)))(x, w)"""),
    "shard_map.spec_arity": _under_mesh("""
x = jax.device_put(jnp.ones((8,)), P("x"))
jax.shard_map(lambda a: a * 2, in_specs=(P("x"), P()), out_specs=P("x"))(x)"""),
    "shard_map.in_specs_mismatch": _under_mesh("""
x = jax.device_put(jnp.ones((8, 16)), P("x", None))
jax.shard_map(lambda b: b, in_specs=P("y", None), out_specs=P("y", None))(x)"""),
    "shard_map.check_rep": _under_mesh("""
x = jax.device_put(jnp.ones((8,)), P("x"))
jax.shard_map(lambda b: b, in_specs=P("x"), out_specs=P("x"), check_rep=False)(x)"""),
    "shard_map.positional_mesh": _HEAD + """
jax.shard_map(lambda b: b, mesh, P("x"), P("x"))(jnp.zeros((8,)))""",
    "collective.unbound_axis": _under_mesh("""
x = jax.device_put(jnp.zeros((8,)), P("x"))
f = jax.shard_map(lambda b: jax.lax.psum(b, "y"), in_specs=P("x"), out_specs=P("x"),
                  axis_names={"x"})
jax.jit(f)(x)"""),
    "shard_map.out_spec_too_long": _under_mesh("""
x = jax.device_put(jnp.arange(8.0), P("x"))
jax.shard_map(lambda b: jax.lax.psum(b.sum(), "x"), in_specs=P("x"), out_specs=P("x"))(x)"""),
    "shard_map.specs_list_not_tuple": _under_mesh("""
x = jax.device_put(jnp.arange(8.0), P("x"))
jax.shard_map(lambda a, b: a + b, in_specs=[P("x"), P("x")], out_specs=P("x"))(x, x)"""),
    "shard_map.closure_explicit": _under_mesh("""
w = jax.device_put(jnp.ones((8,)), P("x"))
x = jax.device_put(jnp.arange(8.0), P("x"))
jax.shard_map(lambda b: b * w.sum(), in_specs=P("x"), out_specs=P("x"))(x)"""),
    "scan.carry_types_differ": _under_mesh("""
x = jax.device_put(jnp.ones((8, 4)), P("x"))
step = lambda c, xi: (c + xi, None)
jax.shard_map(lambda b: jax.lax.scan(step, jnp.zeros((4,)), b)[0], in_specs=P("x"),
              out_specs=P("x"))(x)"""),
    "while_loop.carry_types_differ": _under_mesh("""
x = jax.device_put(jnp.ones((8, 4)), P("x"))
loop = lambda b: jax.lax.while_loop(lambda c: c[0] < 4, lambda c: (c[0] + 1, c[1] + b[c[0]]),
                                    (0, jnp.zeros((4,))))[1]
jax.shard_map(loop, in_specs=P("x"), out_specs=P("x"))(x)"""),
    "cond.branch_types_differ": _under_mesh("""
x = jax.device_put(jnp.ones((8,)), P("x"))
pick = lambda b: jax.lax.cond(True, lambda v: v * 2, lambda v: jnp.zeros((4,)), b)
jax.shard_map(pick, in_specs=P("x"), out_specs=P("x"))(x)"""),
    "with_sharding_constraint.non_auto_axis": _HEAD + """
jax.lax.with_sharding_constraint(jnp.ones((8,)), NamedSharding(mesh, P("x")))""",
    "jit.in_shardings_mismatch": _under_mesh("""
x = jax.device_put(jnp.ones((8, 16)), P("x", None))
jax.jit(lambda a: a, in_shardings=NamedSharding(mesh, P("y", None)))(x)"""),
    "argument.spec_as_mesh": _HEAD + """
NamedSharding(P("x"), mesh)""",
    "argument.tuple_as_spec": _HEAD + """
NamedSharding(mesh, ("x", None))""",
    "argument.int_as_shape": _HEAD + """
jax.make_mesh(8, ("d",))""",
    "argument.number_as_devices": _HEAD + """
jax.sharding.Mesh(8, ("d",))""",
    "argument.axis_types_kind": _HEAD + """
jax.make_mesh((2, 4), ("a", "b"), axis_types=("explicit", "explicit"))""",
    "argument.axis_types_count": _HEAD + """
jax.sharding.AbstractMesh((2, 4), ("a", "b"), axis_types=jax.sharding.AxisType.Auto)""",
    "argument.device_put_kind": _HEAD + """
jax.device_put(jnp.zeros((8,)), mesh)""",
    "jit.removed_keyword": _HEAD + """
jax.jit(lambda a: a, in_axis_resources=NamedSharding(mesh, P("x")))""",
    "jit.positional_arguments": _HEAD + """
jax.jit(lambda a: a, NamedSharding(mesh, P("x")))""",
    "jit.sharding_leaf_kind": _HEAD + """
params = {"w": jnp.zeros((8, 4))}
leaves, treedef = jax.tree_util.tree_flatten(params)
jax.jit(lambda p: p, in_shardings=(treedef,))""",
    "jit.in_shardings_not_prefix": _HEAD + """
s = NamedSharding(mesh, P("x"))
jax.jit(lambda a, n: a * n, static_argnums=1, in_shardings=(s, s))(jnp.ones((8,)), 3)""",
    "jit.shardings_structure": _HEAD + """
s = NamedSharding(mesh, P("x"))
jax.jit(lambda a: (a, a), out_shardings=[s, s])(jnp.ones((8,)))""",
    "jit.kwargs_with_in_shardings": _HEAD + """
s = NamedSharding(mesh, P("x"))
jax.jit(lambda a, b: a + b, in_shardings=s)(jnp.ones((8,)), b=jnp.ones((8,)))""",
    "jit.spec_longer_than_rank": _HEAD + """
jax.jit(lambda a: a, in_shardings=NamedSharding(mesh, P("x", None)))(jnp.ones((8,)))""",
    "with_sharding_constraint.assert": _under_mesh("""
x = jax.device_put(jnp.ones((8, 16)), P("x", None))
jax.lax.with_sharding_constraint(x, P(None, "y"))"""),
    "dot_general.contracting_ambiguous": _under_mesh("""
h = jax.device_put(jnp.ones((8, 16)), P("x", "y"))
w = jax.device_put(jnp.ones((16, 4)), P("y", None))
h @ w"""),
    "dot_general.contracting_axes_differ": _under_mesh("""
h = jax.device_put(jnp.ones((8, 16)), P(None, "x"))
w = jax.device_put(jnp.ones((16, 4)), P("y", None))
jnp.einsum("bf,fd->bd", h, w)"""),
    "dot_general.batch_sharding_differs": _under_mesh("""
a = jax.device_put(jnp.ones((8, 2, 4)), P("x"))
b = jax.device_put(jnp.ones((8, 4, 2)), P("y"))
jnp.einsum("bij,bjk->bik", a, b)"""),
    "dot_general.illegal_result": _under_mesh("""
z = jax.device_put(jnp.ones((8, 16)), P("x", None))
z @ z.T"""),
    "pad.sharded_dim": _under_mesh("""
jnp.pad(jax.device_put(jnp.ones((8,)), P("x")), (1, 0))"""),
    "dynamic_slice.sharded_dim": _under_mesh("""
jax.lax.dynamic_slice_in_dim(jax.device_put(jnp.ones((8,)), P("x")), 0, 3)"""),
    "collective.ppermute_clash": _under_mesh("""
x = jax.device_put(jnp.ones((8, 6)), P("x", None))
jax.shard_map(lambda b: jax.lax.ppermute(b, "x", [(0, 1), (1, 1)]),
              in_specs=P("x", None), out_specs=P("x", None))(x)"""),
    "collective.split_size": _under_mesh("""
x = jax.device_put(jnp.ones((8, 6)), P("x", None))
jax.shard_map(lambda b: jax.lax.psum_scatter(b, "y", scatter_dimension=1, tiled=True),
              in_specs=P("x", None), out_specs=P("x", "y"))(x)"""),
    "scan.sharded_xs": _under_mesh("""
xs = jax.device_put(jnp.ones((8, 4)), P("x", None))
jax.lax.scan(lambda c, x: (c + x, c), jnp.zeros((4,)), xs)"""),
    "broadcast.illegal_result": _under_mesh("""
sq = jax.device_put(jnp.ones((8,)), P("x"))
sq[:, None] + sq[None, :]"""),
    "matmul.incompatible_types": _under_mesh("""
a = jax.device_put(jnp.ones((2, 8, 16)), P("x", None, None))
b = jax.device_put(jnp.ones((2, 16, 4)), P(None, None, "y"))
a @ b"""),
    "broadcast.incompatible": _under_mesh("""
a = jax.device_put(jnp.ones((8, 16)), P("x", None))
b = jax.device_put(jnp.ones((8, 16)), P("y", None))
a + b"""),
    "concatenate.operands_differ": _under_mesh("""
a = jax.device_put(jnp.ones((8, 16)), P("x", None))
jnp.concatenate([a, jnp.ones((8, 4))], axis=1)"""),
    "dynamic_update_slice.operands_differ": _under_mesh("""
buf = jax.device_put(jnp.zeros((8, 16)), P("x", None))
jax.lax.dynamic_update_slice(buf, jnp.ones((8, 4)), (0, 0))"""),
    "select.cases_differ": _under_mesh("""
a = jax.device_put(jnp.ones((8, 16)), P("x", None))
jnp.where(a > 0, a, jnp.zeros((8, 16)))"""),
    "reshape.unsupported": _under_mesh("""
c = jax.device_put(jnp.ones((8, 16)), P(None, "y"))
c.reshape(128)"""),
    "gather.ambiguous": _under_mesh("""
a = jax.device_put(jnp.ones((8, 16)), P("x", None))
a[0]"""),
    "cumulative.sharded_axis": _under_mesh("""
jnp.cumsum(jax.device_put(jnp.ones((8, 16)), P("x", None)), axis=0)"""),
    "sort.sharded_axis": _under_mesh("""
jnp.sort(jax.device_put(jnp.ones((8, 16)), P(None, "y")), axis=1)"""),
    "top_k.sharded_axis": _under_mesh("""
jax.lax.top_k(jax.device_put(jnp.ones((8, 16)), P(None, "y")), 2)"""),
    "roll.sharded_axis": _under_mesh("""
jnp.roll(jax.device_put(jnp.ones((8, 16)), P("x", None)), 1, axis=0)"""),
    "linalg.sharded_matrix_dim": _under_mesh("""
jnp.linalg.inv(jax.device_put(jnp.ones((4, 8, 8)), P(None, "x", None)))"""),
}

BEHAVIOUR_PROGRAMS = {
    "make_mesh_axis_type": _HEAD + "RESULT = mesh.axis_types[0].name",
    "mesh_axis_type": _HEAD + """devices = np.array(jax.devices()).reshape(2, 4)
RESULT = jax.sharding.Mesh(devices, ("x", "y")).axis_types[0].name""",
    "abstract_mesh_axis_type": _HEAD + """
RESULT = jax.sharding.AbstractMesh((2, 4), ("x", "y")).axis_types[0].name""",
    "make_mesh_sizes_keyword": _HEAD + """import inspect
RESULT = list(inspect.signature(jax.make_mesh).parameters)[0]
jax.make_mesh(**{RESULT: (8,)}, axis_names=("d",))  # the keyword really works""",
    "make_mesh_rejects_repeated_names": _HEAD + """try:
    repeated = jax.make_mesh((2, 4), ("x", "x"))
    RESULT = False
    assert dict(repeated.shape) == {"x": 4}, repeated.shape  # silently one axis
except (ValueError, TypeError):
    RESULT = True""",
    "shard_map_check_vma_default": _HEAD + """import inspect
RESULT = inspect.signature(jax.shard_map).parameters["check_vma"].default""",
    "one_sided_batch_dim_is_error": _under_mesh("""
q = jax.device_put(jnp.ones((2, 8, 4)), P("x", None, None))
try:
    s = jnp.einsum("bqd,bkd->bqk", q, jnp.ones((2, 8, 4)))
    RESULT = False
    assert str(jax.typeof(s)) == "float32[2@x,8,8]", jax.typeof(s)  # sharded like q
except Exception as e:
    if type(e).__name__ != "ShardingTypeError":
        raise
    RESULT = True"""),
    "unit_slice_replicated": _under_mesh("""
v = jax.device_put(jnp.ones((8,)), P("x"))
try:
    one = jax.lax.dynamic_slice_in_dim(v, 3, 1)
    RESULT = True
    assert str(jax.typeof(one)) == "float32[1]", jax.typeof(one)  # replicated
except Exception as e:
    if type(e).__name__ != "ShardingTypeError":
        raise
    RESULT = False"""),
    "shard_map_checks_partial_manual_in_specs": _under_mesh("""
x = jnp.ones((8, 16))  # replicated; in_specs shard it over the manual axis 'x'
try:
    jax.shard_map(lambda b: b * 2, in_specs=P("x", None), out_specs=P("x", None),
                  axis_names={"x"})(x)
    RESULT = False
except ValueError as e:
    if "does not match the specs of the input" not in str(e):
        raise
    RESULT = True"""),
    "aval_varying_attribute": _under_mesh("""seen = {}

def body(b):
    a = jax.typeof(b)
    mat = getattr(a, "mat", None)
    if mat is not None and "x" in set(getattr(mat, "varying", ()) or ()):
        seen["attr"] = "mat"
    elif "x" in set(getattr(a, "vma", ()) or ()):
        seen["attr"] = "vma"
    return b

x = jax.device_put(jnp.ones((8,)), P("x"))
jax.shard_map(body, in_specs=P("x"), out_specs=P("x"))(x)
RESULT = seen.get("attr")"""),
}

# Deprecated names that warn when used rather than when looked up.
DEPRECATION_PROGRAMS = {
    MESH_ENTER: 'import jax\nwith jax.sharding.Mesh(jax.devices(), ("d",)):\n    pass',
}

ALL_DTYPES = sorted(set().union(*(p.dtypes for p in PROFILES)))
DTYPE_PROGRAM = """import jax
import jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
RESULT = {}
for name in %r:
    try:
        dtype = jax.dtypes.float0 if name == "float0" else name
        RESULT[name] = str(jax.typeof(jnp.zeros((2,), dtype=dtype))).split("[")[0]
    except Exception as e:  # the runtime cannot make such an array
        RESULT[name] = None
""" % (ALL_DTYPES,)


# --- well-formed data, every profile --------------------------------------------------------

def test_registry():
    assert [p.key for p in PROFILES] == sorted({p.key for p in PROFILES})
    assert compat.DEFAULT is profile_for("0.10") and profile_for(None) is compat.DEFAULT
    for p in PROFILES:
        assert profile_for(p.version) is p and profile_for(p.release) is p
        assert minor_of(p.release) == p.version
    assert profile_for("0.12.0.1").version == "0.12" and profile_for(" 0.11.2 ").version == "0.11"
    for bad in ("0.9.2", "1.0", "0.13", "latest", ""):
        with pytest.raises(compat.UnsupportedJaxVersion, match="0.10, 0.11, 0.12"):
            profile_for(bad)


@by_profile
def test_names_and_aliases_are_well_formed(profile):
    assert profile.names and all(n.startswith("jax.") for n in profile.names)
    spellings = set(profile.aliases) | set(profile.legacy_aliases)
    assert not set(profile.aliases) & set(profile.legacy_aliases)
    for alias, target in {**profile.aliases, **profile.legacy_aliases}.items():
        assert target in profile.names, (alias, target)
        assert target not in spellings and alias not in profile.names
        assert profile.canonical(alias) == target
        assert profile.canonical(alias + ".UNCONSTRAINED") == target + ".UNCONSTRAINED"
    assert profile.canonical("jax.numpy.zeros") == "jax.numpy.zeros"
    for name in profile.names:
        assert profile.canonical(name) == name


@by_profile
def test_deprecations_and_removals_are_well_formed(profile):
    assert not set(profile.deprecations) & set(profile.removals)
    release = release_key(profile.release)
    for name in set(profile.deprecations) | set(profile.removals):
        dep = HISTORY[name]
        assert profile.deprecation(name) is dep
        assert dep.replacement and dep.note and dep.source, name
        assert name not in profile.names and name not in profile.aliases
    for name, dep in HISTORY.items():
        # a version JAX records must agree with the profile's status
        if dep.removed_in is not None and release_key(dep.removed_in) <= release:
            assert profile.status(name) == "removed", name
        if dep.deprecated_in is not None:
            deprecated = release_key(dep.deprecated_in) <= release
            assert (profile.status(name) is not None) == deprecated, name


def test_removals_are_never_undone():
    for older, newer in zip(PROFILES, PROFILES[1:]):
        assert set(older.removals) <= set(newer.removals), newer.version
        assert set(older.deprecations) <= set(newer.deprecations) | set(newer.removals)


@by_profile
def test_error_signatures_are_well_formed(profile):
    assert set(profile.errors) == set(ERROR_PROGRAMS)  # every signature has its program
    for name, sig in profile.errors.items():
        assert re.fullmatch(r"[A-Za-z]+", sig.exception), name
        re.compile(sig.pattern)


@by_profile
def test_behaviour_flags_are_documented(profile):
    assert set(Behaviour.names()) == set(BEHAVIOUR_PROGRAMS)
    for f in fields(Behaviour):
        assert Behaviour.doc(f.name)
        value = getattr(profile.behaviour, f.name)
        assert isinstance(value, bool) == (f.type in ("bool", bool)), f.name
        if f.name.endswith("_axis_type"):
            assert value in ("Explicit", "Auto", "Manual"), f.name


@by_profile
def test_dtypes_are_names(profile):
    assert "float32" in profile.dtypes and "bfloat16" in profile.dtypes
    assert all(re.fullmatch(r"[a-z][a-z0-9_]*", d) for d in profile.dtypes)


def test_every_fact_a_rule_relies_on_is_in_every_profile():
    for code, rule in all_rules().items():
        assert not hasattr(rule, "JAX_VERSIONS"), f"{code}: derive 'Applies to' from JAX_FACTS"
        assert rule.JAX_SINCE is None or rule.JAX_SINCE in IDS, code
        for fact in rule.JAX_FACTS:
            known = fact in Behaviour.names() or all(fact in p.errors for p in PROFILES)
            assert known, (code, fact)


def test_explain_derives_applies_to_from_the_profiles():
    rules = all_rules()
    text = rules["SC301"].explain()
    assert "Applies to: JAX 0.10, 0.11 and 0.12 (checked on 0.10.2, 0.11.2 and 0.12.0.1)." in text
    assert re.search(r"batch dim sharded on one operand .*: no in 0\.10; yes in 0\.11 and 0\.12",
                     text)
    assert "Applies to: any JAX version" in rules["SC001"].explain()
    table = rules["SC401"].explain()
    assert "| `jax.lax.psend` | current | current | deprecated in 0.12.0 |" in table
    assert "| `jax.lax.pvary` | " + " | ".join(["removed in 0.10.0"] * 3) + " |" in table


# --- jax-version selects the profile SC401 reads ----------------------------------------------

PSEND = """import jax
from jax import P

def body(x):
    token = jax.lax.psend(x, "d", [(0, 1)])
    return x
"""
PVARY = """import jax
y = jax.lax.pvary
"""


def _sc401(source, config):
    return [f for f in check_source(source, "example.py", config) if f.code == "SC401"]


def test_jax_version_selects_the_deprecation_table():
    assert _sc401(PSEND, Config()) == []  # 0.10 (the default) has psend, undeprecated
    found = _sc401(PSEND, from_table({"jax-version": "0.12"}))
    assert [(f.row, f.severity) for f in found] == [(5, "warning")]
    assert "jax.lax.ppermute" in found[0].message and "JAX 0.12.0.1" in found[0].message
    removed = _sc401(PVARY, from_table({"jax-version": "0.11.2"}))
    assert [f.severity for f in removed] == ["error"]
    assert "fails on JAX 0.11.2" in removed[0].message


def test_jax_version_is_validated_and_keys_the_cache():
    with pytest.raises(ConfigError, match="jax-version: JAX version '0.9' is not supported"):
        from_table({"jax-version": "0.9"})
    with pytest.raises(ConfigError, match="must be a string"):
        from_table({"jax-version": 0.12})
    assert from_table({"jax-version": "0.12.0.1"}).jax_version == "0.12"
    assert from_table({"jax-version": "0.12"}).fingerprint() != Config().fingerprint()


# --- the installed JAX's profile against JAX itself -------------------------------------------

def _installed(profile):
    if profile.version != minor_of(INSTALLED):
        pytest.skip(f"profile {profile.version}; the installed JAX is {INSTALLED}")


def _resolve(name: str):
    """The object a dotted name names: the longest importable module, then attributes."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for part in parts[i:]:
            obj = getattr(obj, part)
        return obj
    raise ImportError(name)


@pytest.fixture(scope="module")
def jax_runs(jax8):
    from jax_snippets import run_snippets
    programs = {**{("error", k): v for k, v in ERROR_PROGRAMS.items()},
                **{("behaviour", k): v for k, v in BEHAVIOUR_PROGRAMS.items()},
                **{("deprecation", k): v for k, v in DEPRECATION_PROGRAMS.items()},
                ("dtypes", ""): DTYPE_PROGRAM}
    return dict(zip(programs, run_snippets(list(programs.values()))))


@by_profile
def test_names_and_aliases_resolve(profile, jax8):
    _installed(profile)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        for name in profile.names:
            _resolve(name)
        for alias, target in profile.aliases.items():
            assert _resolve(alias) is _resolve(target), alias
    for alias in profile.legacy_aliases:
        with pytest.raises((AttributeError, ImportError)):
            _resolve(alias)


def test_every_jax_name_a_handler_models_exists_or_its_removal_is_recorded(jax8):
    """The handlers' registry against the installed JAX: each ``jax.*`` name the
    interpreter models resolves, or the version history records it deprecated or
    removed, or it is an older spelling the profiles canonicalise (a legacy alias)."""
    from shardcheck.analyzer import api, compat, jaxapi  # noqa: F401  # jaxapi registers
    legacy = {a for p in compat.PROFILES for a in p.legacy_aliases}
    unknown = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for name in api._BY_NAME:
            if not name.startswith("jax.") or compat.deprecated_entry(name) or name in legacy:
                continue
            try:
                _resolve(name)
            except (AttributeError, ImportError):
                unknown.append(name)
    assert unknown == [], "modelled, but not in the installed JAX nor in its history"


def test_each_collectives_axis_argument_is_where_jax_takes_it(jax8):
    """The one collective table (``compat.names.COLLECTIVE_AXIS_ARGUMENT``, which the
    interpreter and project_axes read): each present collective takes ``axis_name`` at
    the position it says (None: keyword-only); each absent one is a removal."""
    import inspect

    from shardcheck.analyzer.compat.names import COLLECTIVE_AXIS_ARGUMENT, COLLECTIVES, HISTORY
    from shardcheck.analyzer.jaxapi.names import COLLECTIVES as MODELLED_COLLECTIVES
    assert MODELLED_COLLECTIVES == COLLECTIVE_AXIS_ARGUMENT
    for name, at in COLLECTIVE_AXIS_ARGUMENT.items():
        try:
            fn = _resolve(name)
        except (AttributeError, ImportError):
            assert name in HISTORY and name not in COLLECTIVES, name
            continue
        params = list(inspect.signature(fn).parameters.values())
        (where,) = [i for i, p in enumerate(params) if p.name == "axis_name"]
        if at is None:
            assert params[where].kind is inspect.Parameter.KEYWORD_ONLY, name
        else:
            assert where == at and params[where].kind is not inspect.Parameter.KEYWORD_ONLY, name


@by_profile
def test_removed_names_are_gone(profile, jax8):
    _installed(profile)
    for name in profile.removals:
        with pytest.raises((AttributeError, ImportError)):
            _resolve(name)


@by_profile
def test_deprecated_names_warn(profile, jax8, jax_runs):
    _installed(profile)
    for name in profile.deprecations:
        if name in DEPRECATION_PROGRAMS:
            assert jax_runs[("deprecation", name)]["status"] == "deprecation", name
            continue
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _resolve(name)
        assert any(issubclass(w.category, DeprecationWarning) for w in caught), name
    undeprecated = set(HISTORY) - set(profile.deprecations) - set(profile.removals)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        for name in undeprecated:  # e.g. psend before 0.12
            _resolve(name)


@by_profile
@pytest.mark.parametrize("flag", Behaviour.names())
def test_behaviour_flag_holds(profile, flag, jax_runs):
    _installed(profile)
    run = jax_runs[("behaviour", flag)]
    assert run["status"] == "ok", run
    assert run["result"] == getattr(profile.behaviour, flag)


@by_profile
@pytest.mark.parametrize("name", sorted(ERROR_PROGRAMS))
def test_error_signature_matches_what_jax_raises(profile, name, jax_runs):
    _installed(profile)
    run = jax_runs[("error", name)]
    assert run["status"] == "error", run
    assert profile.errors[name].matches(run["type"], run["error"]), run
    for other in PROFILES:  # where versions differ, the difference is real
        if other.errors[name] != profile.errors[name]:
            assert not other.errors[name].matches(run["type"], run["error"]), (other, run)


@by_profile
def test_dtypes_are_the_arrays_jax_makes(profile, jax_runs):
    _installed(profile)
    run = jax_runs[("dtypes", "")]
    assert run["status"] == "ok", run
    made = {name for name, printed in run["result"].items() if printed == name}
    assert made == set(profile.dtypes)
