"""Inferred sharding types against JAX's own, at every assignment.

Each program is run under JAX on 8 CPU devices with ``jax.typeof`` recorded after every
assignment (tests/ground_truth.py); the analyzer's type for the same name at the same
position must be exactly that string. The programs under tests/inference exercise every
transfer rule (elementwise and broadcasting, contractions with out_sharding and
unreduced results, reductions, transposes, reshapes, indexing, concatenate/stack/where/
dynamic_update_slice, jax.nn ops, dtypes and weak types, collectives inside shard_map,
an Auto mesh, jit and grad); there every recorded assignment must also be known.
"""

import pathlib

import pytest

from ground_truth import record, record_all
from shardcheck.analyzer.inferred_types import infer_types

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
CASES = sorted((ROOT / "tests" / "inference").glob("*.py"))


@pytest.fixture(scope="module")
def recorded():
    paths = EXAMPLES + CASES
    return dict(zip(paths, record_all([str(p) for p in paths])))


def _static(path):
    return {(t.row, t.column, t.name): t.type for t in infer_types(path.read_bytes(), str(path))}


def _compare(path, recorded):
    runtime, error = recorded[path]
    assert error is None, f"{path.name} failed under JAX: {error}"
    static = _static(path)
    wrong = {k: (static[k], sorted(runtime.get(k, ()))) for k in static
             if static[k] is not None and runtime.get(k) != {static[k]}}
    return runtime, static, wrong


@pytest.mark.parametrize("path", EXAMPLES + CASES, ids=lambda p: p.stem)
def test_every_inferred_type_equals_jax(path, recorded):
    _, _, wrong = _compare(path, recorded)
    assert wrong == {}, "inferred vs jax.typeof: " + repr(wrong)


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_every_assignment_of_the_cases_is_inferred(path, recorded):
    runtime, static, _ = _compare(path, recorded)
    lines = path.read_text().splitlines()
    missing = [k for k in runtime if static.get(k) is None and "# unknown" not in lines[k[0] - 1]]
    assert missing == []


def test_examples_have_at_least_90_percent_known_types(recorded):
    known = total = 0
    for path in EXAMPLES:
        runtime, static, _ = _compare(path, recorded)
        total += len(runtime)
        known += sum(1 for k in runtime if static.get(k) is not None)
    print(f"examples: {known} of {total} recorded array assignments inferred "
          f"({100 * known / total:.1f}%)")
    assert total >= 40 and known / total >= 0.9


def test_the_harness_records_what_jax_says(tmp_path):
    prog = tmp_path / "prog.py"
    prog.write_text(
        "import jax\nimport jax.numpy as jnp\nfrom jax import P\n"
        "mesh = jax.make_mesh((2, 4), ('x', 'y'))\n"
        "with jax.set_mesh(mesh):\n"
        "    a, b = jax.device_put(jnp.zeros((8, 4)), P('x')), 3\n"
        "    c = a.sum(0)\n")
    runtime, error = record(str(prog))
    assert error is None
    assert runtime == {(6, 5, "a"): {"float32[8@x,4]"}, (7, 5, "c"): {"float32[4]"}}
    assert _static(prog) == {(6, 5, "a"): "float32[8@x,4]", (7, 5, "c"): "float32[4]"}


def test_an_unresolved_dtype_stays_unknown():
    # JAX gives whatever the caller passes; the analyzer must not print float32 as known
    src = ("import jax\nimport jax.numpy as jnp\n\n\ndef make(dtype, n):\n"
           "    z = jnp.zeros((4, 8), dtype=dtype)\n"
           "    k = jax.random.normal(jax.random.key(0), (4, 8), dtype=dtype)\n"
           "    r = jnp.arange(0, 8, 1, dtype)\n"
           "    i = jnp.arange(8)\n"
           "    return z, k, r, i\n")
    got = {t.name: (t.type, t.partial) for t in infer_types(src, "make.py")}
    assert got["z"] == (None, "?[4,8]")
    assert got["k"] == (None, "?[4,8]")
    assert got["r"] == (None, "?[8]")
    assert got["i"] == ("int32[8]", "int32[8]")


def test_a_number_where_the_dtype_goes_makes_no_array(jax8):
    """``jnp.ones(4, 4)`` (meant: ``jnp.ones((4, 4))``): JAX raises TypeError, so there
    is no rank-1 array to check a spec against (a Flax guide writes it so)."""
    from jax_snippets import run_snippets
    src = "import jax.numpy as jnp\n\nw = jnp.ones(4, 4)\nv = jnp.full(4, 1.0, 2)\n"
    got = {t.name: (t.type, t.partial) for t in infer_types(src, "ones.py")}
    assert "w" not in got and "v" not in got
    (res,) = run_snippets([src])
    assert res["status"] != "ok" and "TypeError" in str(res), res
