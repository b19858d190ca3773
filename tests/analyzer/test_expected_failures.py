"""Findings on code meant to fail: inside ``assertRaises``/``pytest.raises`` blocks (how
``benchmarks/real_code.py`` tells recall from false positives on real test suites)."""

import textwrap

from shardcheck.analyzer.engine import check_source

_HEAD = """
import unittest
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

class T(unittest.TestCase):
    def test_it(self):
        mesh = jax.make_mesh((2, 4), ("data", "model"))
"""


def _marks(body: str):
    src = _HEAD + textwrap.indent(textwrap.dedent(body), " " * 8)
    return [(f.code, f.row, f.in_expected_failure) for f in check_source(src, "t.py")]


def test_a_finding_inside_a_raises_block_is_expected():
    assert _marks("""
        with self.assertRaisesRegex(ValueError, "is not found in mesh"):
            NamedSharding(mesh, P("d3"))
        """) == [("SC101", 12, True)]


def test_a_spec_written_before_the_block_and_used_inside_it_is_expected():
    """JAX raises where the spec is used (JAX's and orbax's tests write it first)."""
    assert _marks("""
        spec = P("data", "model", "d3")
        with self.assertRaisesRegex(ValueError, "is not found in mesh"):
            NamedSharding(mesh, spec)
        """) == [("SC101", 11, True)]


def test_a_spec_used_outside_any_raises_block_is_not():
    assert _marks("""
        spec = P("data", "model", "d3")
        with self.assertRaisesRegex(ValueError, "something else"):
            pass
        NamedSharding(mesh, spec)
        """) == [("SC101", 11, False)]


def test_a_spec_too_long_for_the_array_it_is_used_on_inside_the_block_is_expected():
    assert _marks("""
        spec = P("data", "model")
        with self.assertRaisesRegex(ValueError, "too long"):
            jax.device_put(jnp.zeros(8), NamedSharding(mesh, spec))
        """) == [("SC103", 13, True)]  # where the spec meets the array, noting line 11


def test_an_indivisible_dim_is_expected_where_the_spec_is_applied_inside_the_block():
    assert _marks("""
        spec = P("model")
        with self.assertRaisesRegex(ValueError, "divide"):
            jax.device_put(jnp.zeros(6), NamedSharding(mesh, spec))
        """) == [("SC104", 13, True)]  # where the spec meets the array, noting line 11


def test_a_repeated_mesh_axis_is_expected_where_the_spec_is_applied_inside_the_block():
    assert _marks("""
        spec = P("data", "data")
        with self.assertRaisesRegex(ValueError, "duplicate"):
            NamedSharding(mesh, spec)
        """) == [("SC102", 11, True)]


def test_the_same_three_outside_any_block_are_not():
    assert _marks("""
        a = P("data", "model")
        b = P("model")
        c = P("data", "data")
        jax.device_put(jnp.zeros(8), NamedSharding(mesh, a))
        jax.device_put(jnp.zeros(6), NamedSharding(mesh, b))
        NamedSharding(mesh, c)
        """) == [("SC102", 13, False), ("SC103", 14, False), ("SC104", 15, False)]
