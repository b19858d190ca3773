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
