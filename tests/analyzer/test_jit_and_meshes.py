"""jit's shardings against the call, meshes that must be one, and the device count: the
cases around the rules' own examples, each checked against what JAX 0.10.2 does on 8 CPU
devices. A case lists the findings it must give (code, line) among the rules of this
area; the correct twins list none and must run cleanly under JAX.
"""

import re

import pytest

from shardcheck.analyzer.engine import check_source

AREA = {"SC103", "SC104", "SC105", "SC109", "SC308", "SC310", "SC401"}

HEAD = """import jax
import jax.numpy as jnp
import numpy as np
from functools import partial
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ("x", "y"))
flat = jax.make_mesh((8,), ("d",))
s = NamedSharding(mesh, P("x"))
"""  # 8 lines; a case's first line is line 9

# id -> (code after HEAD, {(code, line)}, JAX: "ok" or a regex of its error)
CASES = {
    # -- SC308: only committed arguments, only outside a trace ----------------------------
    "uncommitted-argument": ("""\
f = jax.jit(lambda a: a * 2, in_shardings=NamedSharding(mesh, P("y", None)))
f(jnp.ones((8, 16)))
f(np.ones((8, 16), np.float32))
""", set(), "ok"),
    "argument-traced-in-jit": ("""\
inner = jax.jit(lambda a: a * 2, in_shardings=NamedSharding(mesh, P("y", None)))
outer = jax.jit(lambda a: inner(a) + 1)
outer(jax.device_put(jnp.ones((8, 16)), NamedSharding(mesh, P("x", None))))
""", set(), "ok"),
    "argument-traced-in-scan": ("""\
inner = jax.jit(lambda a: a * 2, in_shardings=NamedSharding(mesh, P("y", None)))
x = jax.device_put(jnp.ones((8, 16)), NamedSharding(mesh, P("x", None)))
jax.lax.scan(lambda c, _: (inner(c), None), x, None, length=2)
""", set(), "ok"),
    "axis-of-size-one": ("""\
one = jax.make_mesh((1, 8), ("a", "b"))
x = jax.device_put(jnp.ones((8, 16)), NamedSharding(one, P("a", None)))
jax.jit(lambda a: a * 2, in_shardings=NamedSharding(one, P()))(x)
""", set(), "ok"),
    "legacy-with-mesh-commits-nothing": ("""\
import warnings
warnings.simplefilter("ignore", DeprecationWarning)
with mesh:
    x = jnp.ones((8, 16))
    jax.jit(lambda a: a * 2, in_shardings=NamedSharding(mesh, P("x", None)))(x)
""", set(), "ok"),
    "jit-output-placed-by-out-shardings": ("""\
with jax.set_mesh(mesh):
    g = jax.jit(lambda a: a + 1, out_shardings=P("x", None))
    f = jax.jit(lambda a: a * 2, in_shardings=P("x", None))
    f(g(jnp.ones((8, 16))))
    h = jax.jit(lambda a: a * 2, in_shardings=P("y", None))
    h(g(jnp.ones((8, 16))))
""", {("SC308", 14)}, "does not match the sharding on the respective arg"),
    "committed-in-main": ("""\
def main():
    with jax.set_mesh(mesh):
        x = jnp.zeros((8, 16))
        jax.jit(lambda a: a, in_shardings=P("x", None))(x)


if __name__ == "__main__":
    main()
""", {("SC308", 12)}, "does not match the sharding on the respective arg"),
    # -- SC310 and SC103: structure and rank ----------------------------------------------
    "static-argnames-positional": ("""\
f = jax.jit(lambda a, n: a * n, static_argnames="n", in_shardings=(s, s))
f(jnp.ones((8,)), 3)
""", {("SC310", 9)}, "must be a tree prefix"),
    "decorated-static-argnums": ("""\
@partial(jax.jit, static_argnums=1, in_shardings=(s, s))
def scale(a, n):
    return a * n


scale(jnp.ones((8,)), 3)
""", {("SC310", 9)}, "must be a tree prefix"),
    "in-shardings-none-allows-kwargs": ("""\
f = jax.jit(lambda a, b: a + b, in_shardings=None)
f(jnp.ones((8,)), b=jnp.ones((8,)))
""", set(), "ok"),
    "static-keyword-with-in-shardings": ("""\
f = jax.jit(lambda a, n: a * n, static_argnames="n", in_shardings=(s,))
f(jnp.ones((8,)), n=3)
""", {("SC310", 10)}, "does not support kwargs"),
    "list-changed-in-place-is-not-trusted": ("""\
args = [jnp.ones((8,))]
args.append(jnp.ones((8,)))
f = jax.jit(lambda ab: ab[0] + ab[1], in_shardings=([s, s],))
f(args)
""", set(), "ok"),
    "dict-filled-by-a-helper-is-not-trusted": ("""\
def make():
    d = {"w": jnp.ones((8, 4))}
    d["b"] = jnp.ones((8,))
    return d


f = jax.jit(lambda p: p["w"].sum() + p["b"].sum(),
            in_shardings=({"w": NamedSharding(mesh, P("x", None)), "b": s},))
f(make())
""", set(), "ok"),
    "tuple-entry-for-an-array": ("""\
f = jax.jit(lambda a, b: a + b, in_shardings=((s, s), s))
f(jnp.ones((8,)), jnp.ones((8,)))
""", {("SC310", 9)}, "pytree structure error"),
    "out-shardings-rank": ("""\
f = jax.jit(lambda a: a.sum(axis=1), out_shardings=NamedSharding(mesh, P("x", None)))
f(jnp.ones((8, 4)))
""", {("SC103", 9)}, "only valid for values of rank at least 2"),
    "out-shardings-none-entry": ("""\
f = jax.jit(lambda a: (a, 2 * a), out_shardings=(s, None))
u, v = f(jnp.ones((8,)))
""", set(), "ok"),
    # -- SC105: meshes that must be one ---------------------------------------------------
    "all-auto-meshes-mix": ("""\
auto = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
auto_flat = jax.make_mesh((8,), ("d",), axis_types=(AxisType.Auto,))
a = jax.device_put(jnp.ones((8,)), NamedSharding(auto, P("x")))
b = jax.device_put(jnp.ones((8,)), NamedSharding(auto_flat, P("d")))
with jax.set_mesh(auto):
    c = a + b
    d = b * 2
""", set(), "ok"),
    "explicit-and-auto-do-not-mix": ("""\
auto_flat = jax.make_mesh((8,), ("d",), axis_types=(AxisType.Auto,))
a = jax.device_put(jnp.ones((8,)), NamedSharding(mesh, P("x")))
b = jax.device_put(jnp.ones((8,)), NamedSharding(auto_flat, P("d")))
c = a + b
""", {("SC105", 12)}, "Mesh for all inputs should be equal"),
    "legacy-with-mesh-sets-no-context": ("""\
import warnings
warnings.simplefilter("ignore", DeprecationWarning)
x = jax.device_put(jnp.ones((8,)), NamedSharding(flat, P("d")))
with mesh:
    y = x * 2
""", set(), "ok"),
    "jit-shardings-set-the-trace-mesh": ("""\
with jax.set_mesh(mesh):
    f = jax.jit(lambda a: a * 2, in_shardings=NamedSharding(flat, P("d")))
    f(np.ones((8,), np.float32))
""", set(), "ok"),
    "method-on-another-mesh": ("""\
x = jax.device_put(jnp.ones((8,)), NamedSharding(flat, P("d")))
with jax.set_mesh(mesh):
    y = x.sum()
""", {("SC105", 11)}, "should match the aval mesh"),
    "shard-map-under-legacy-context": ("""\
import warnings
warnings.simplefilter("ignore", DeprecationWarning)
x = jax.device_put(jnp.ones((8,)), NamedSharding(flat, P("d")))
with mesh:
    y = jax.shard_map(lambda b: b, mesh=flat, in_specs=P("d"), out_specs=P("d"))(x)
""", set(), "ok"),
    # -- SC109: the device count the file sets up -----------------------------------------
    # (these set the count before any JAX operation: they replace HEAD)
    "count-set-conditionally": ("""\
import sys
import jax
if sys.platform == "never":
    jax.config.update("jax_num_cpu_devices", 4)
big = jax.make_mesh((2, 4), ("a", "b"))
""", set(), "ok"),
    "count-guarded": ("""\
import jax
jax.config.update("jax_num_cpu_devices", 8)
if jax.device_count() >= 16:
    big = jax.make_mesh((4, 4), ("a", "b"))
""", set(), "ok"),
    "count-with-devices": ("""\
import jax
jax.config.update("jax_platforms", "cpu")
jax.config.update("jax_num_cpu_devices", 8)
half = jax.make_mesh((2, 2), ("a", "b"), devices=jax.devices()[:4])
""", set(), "ok"),
    # -- SC401 ----------------------------------------------------------------------------
    "removed-keyword-in-a-decorator": ("""\
@partial(jax.jit, in_axis_resources=s)
def double(a):
    return a * 2
""", {("SC401", 9)}, "unexpected keyword argument 'in_axis_resources'"),
    "shardings-as-keywords": ("""\
@partial(jax.jit, in_shardings=s, out_shardings=s)
def double(a):
    return a * 2
y = double(jax.device_put(jnp.ones((8, 4)), s))
""", set(), "ok"),
    "removed-module-attribute-once": ("""\
import jax.experimental
xmap = jax.experimental.maps.xmap
""", {("SC401", 2)}, "has no attribute 'maps'"),
}


# cases that must not see HEAD (they set the device count before any JAX operation,
# or import a removed module) start with their own imports
STANDALONE = {"count-set-conditionally", "count-guarded", "count-with-devices",
              "removed-module-attribute-once"}


def _source(case):
    body = CASES[case][0]
    return body if case in STANDALONE else HEAD + body


def _found(code):
    return {(f.code, f.row) for f in check_source(code, "case.py")
            if f.code in AREA and f.severity == "error"}


@pytest.mark.parametrize("case", list(CASES))
def test_findings(case):
    assert _found(_source(case)) == CASES[case][1]


@pytest.fixture(scope="module")
def jax_runs(jax8):
    from jax_snippets import run_snippets
    # a case that configures JAX itself (the device count) needs a process of its own:
    # the shared JAX server's children may have started a backend already
    own = [c for c, (body, _, _) in CASES.items() if body.startswith("import jax\n")]
    shared = [c for c in CASES if c not in own]
    runs = dict(zip(shared, run_snippets([_source(c) for c in shared])))
    for c in own:
        runs[c] = _fresh_process(_source(c))
    return runs


def _fresh_process(code):
    import os
    import subprocess
    import sys
    wrapped = ("import json, sys\ntry:\n    exec(compile(sys.stdin.read(), '<snippet>', 'exec'), "
               "{'__name__': '__main__'})\nexcept BaseException as e:\n"
               "    print(json.dumps({'status': 'error', 'error': str(e), 'type': type(e).__name__}))\n"
               "    sys.exit(0)\nprint(json.dumps({'status': 'ok', 'error': '', 'type': ''}))\n")
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    r = subprocess.run([sys.executable, "-c", wrapped], input=code, capture_output=True, text=True,
                       env=env, timeout=300)
    import json
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("case", list(CASES))
def test_jax_agrees(case, jax_runs):
    _, expected, outcome = CASES[case]
    run = jax_runs[case]
    if outcome == "ok":
        assert run["status"] == "ok", run
    else:
        assert run["status"] == "error" and re.search(outcome, run["error"]), run


def test_positional_shard_map_fix_passes_keywords():
    code = HEAD + 'y = jax.shard_map(lambda b: b, flat, P("d"), P("d"), check_vma=False)\n'
    (f,) = [f for f in check_source(code, "case.py") if f.code == "SC401"]
    assert f.fix is not None
    assert f.fix.content == ('jax.shard_map(lambda b: b, mesh=flat, in_specs=P("d"), '
                             'out_specs=P("d"), check_vma=False)')


def test_device_count_is_a_warning_unless_the_cpu_is_pinned():
    code = 'import jax\njax.config.update("jax_num_cpu_devices", 8)\nm = jax.make_mesh((4, 4), ("a", "b"))\n'
    (f,) = [f for f in check_source(code, "case.py") if f.code == "SC109"]
    assert f.severity == "warning" and "needs 16 devices" in f.message
    pinned = code.replace("import jax\n", 'import jax\njax.config.update("jax_platforms", "cpu")\n')
    (g,) = [f for f in check_source(pinned, "case.py") if f.code == "SC109"]
    assert g.severity == "error" and g.row == 4


def test_a_constraint_on_make_meshs_default_axes_names_axis_types_as_a_fix():
    # SC207's own examples run both under JAX: the default mesh raises, the Auto one runs
    body = """
@jax.jit
def f(x):
    return jax.lax.with_sharding_constraint(x * 2, NamedSharding({m}, P({a!r}, None)))
y = f(jnp.ones((8, 16)))
"""
    explicit = ("jax.sharding.Mesh(np.array(jax.devices()).reshape(8), ('e',), "
                "axis_types=(AxisType.Explicit,))")
    (default,) = [f for f in check_source(HEAD + body.format(m="mesh", a="x"), "c.py")
                  if f.code == "SC207"]
    assert "`axis_types=(AxisType.Auto,) * 2`" in default.message
    (given,) = [f for f in check_source(HEAD + body.format(m=explicit, a="e"), "c.py")
                if f.code == "SC207"]
    assert "axis_types=(AxisType.Auto" not in given.message
