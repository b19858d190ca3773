"""Checks under jit leave no trace in the compiled program: the lowered HLO is identical."""

import re

from sharding_types import Sharded, assert_sharding, check_shardings


def _strip_names(text):
    return re.sub(r"@jit_\w+|jit_\w+|\"\w+\.py\"|loc\(.*?\)", "", text)


def test_lowered_program_is_identical_with_and_without_checks(jax8):
    jax = jax8
    import jax.numpy as jnp
    from jax.sharding import PartitionSpec as P

    def plain(x, w):
        h = jax.nn.gelu(x @ w)
        return jnp.sum(h * h)

    @check_shardings
    def checked(x: Sharded[jax.Array, "float32[B@data,D]"],
                w: Sharded[jax.Array, "float32[D,F@model]"]) -> Sharded[jax.Array, "float32[]"]:
        h = assert_sharding(jax.nn.gelu(x @ w), "float32[B@data,F@model]")
        return jnp.sum(h * h)

    with jax.set_mesh(jax.make_mesh((2, 4), ("data", "model"))):
        x = jax.device_put(jnp.ones((8, 16)), P("data", None))
        w = jax.device_put(jnp.ones((16, 32)), P(None, "model"))
        a = jax.jit(plain).lower(x, w).as_text(debug_info=False)
        b = jax.jit(checked).lower(x, w).as_text(debug_info=False)
    assert _strip_names(a) == _strip_names(b)
    assert "sharding" in a  # the comparison is over a real sharded program
