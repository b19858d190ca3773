"""Runtime assertions on 8 CPU devices: eager, inside jit (trace time), inside shard_map."""

from typing import Optional, Tuple

import pytest

import sharding_types as st
from sharding_types import Sharded, ShardingMismatchError, assert_sharding, check_shardings


@pytest.fixture(scope="module")
def env(jax8):
    jax = jax8
    import jax.numpy as jnp
    from jax.sharding import PartitionSpec as P
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    with jax.set_mesh(mesh):
        x = jax.device_put(jnp.ones((8, 16)), P("data", None))
        w = jax.device_put(jnp.ones((16, 32)), P(None, "model"))
        yield jax, jnp, P, mesh, x, w


def _in_jit(jax, fn, *args):
    return jax.jit(fn)(*args)


# (expected type for x = float32[8@data,16], the reason line the error must contain)
MISMATCHES = [
    ("bfloat16[8@data,16]", "dtype: expected bfloat16, got float32"),
    ("float32[8@data,32]", "dim 1: expected size 32, got 16"),
    ("float32[8@model,16]", "dim 0: expected sharded over 'model', got sharded over 'data'"),
    ("float32[8,16]", "dim 0: expected replicated, got sharded over 'data'"),
    ("float32[8@data,16@model]", "dim 1: expected sharded over 'model', got replicated"),
    ("float32[8@(data,model),16]", "expected sharded over ('data', 'model')"),
    ("float32[8@data,16,1]", "rank: expected 3 dims, got 2"),
    ("float32[8@data,16]{V:data}", "varying axes: expected {data}, got {} (none)"),
    ("float32[8@data,16]{U:model}", "unreduced axes: expected {model}"),
    ("float32[8@batch,16]", "axis 'batch' is not an axis of the mesh (axes: data, model)"),
    ("~float32[8@data,16]", "weak type"),
]


@pytest.mark.parametrize("where", ["eager", "jit"])
@pytest.mark.parametrize("expected,reason", MISMATCHES)
def test_each_kind_of_mismatch_raises(env, where, expected, reason):
    jax, jnp, P, mesh, x, w = env
    check = lambda v: assert_sharding(v, expected)  # noqa: E731
    with pytest.raises(ShardingMismatchError) as info:
        check(x) if where == "eager" else _in_jit(jax, check, x)
    err = info.value
    assert reason in str(err)
    assert f"expected: {expected}" in str(err) or f"expected: {st.parse(expected)}" in str(err)
    assert "actual:   float32[8@data,16]" in str(err)
    assert "mesh: Mesh('data': 2, 'model': 4, axis_types=(Explicit, Explicit))" in str(err)
    assert err.actual == st.parse("float32[8@data,16]")


@pytest.mark.parametrize("expected", ["float32[8@data,16]", "float32[B@data,D]",
                                      "float32[_@data,_]", "float32[N@data,_]",
                                      st.parse("float32[8@data,16]")])
def test_matching_values_pass_eager_and_in_jit(env, expected):
    jax, jnp, P, mesh, x, w = env
    assert assert_sharding(x, expected) is x
    out = _in_jit(jax, lambda v: assert_sharding(v * 2, expected), x)
    assert out.shape == (8, 16)


def test_weak_types_match_strong_expectations(env):
    jax, jnp, *_ = env
    assert_sharding(jnp.asarray(1.0) * 2, "float32[]")      # ~float32[] matches float32[]
    assert_sharding(jnp.asarray(1.0) * 2, "~float32[]")


def test_inside_jit_checks_run_at_trace_time_only(env):
    jax, jnp, P, mesh, x, w = env
    calls = []

    @jax.jit
    def f(v):
        calls.append(1)
        return assert_sharding(v @ w, "float32[B@data,F@model]")

    for _ in range(3):
        f(x)
    assert len(calls) == 1  # traced once; the compiled function carries no check


def test_shard_map_varying_axes_are_checked(env):
    jax, jnp, P, mesh, x, w = env
    seen = {}

    def body(xb, wb):
        assert_sharding(xb, "float32[4,16]{V:data}")
        y = assert_sharding(xb @ wb, "float32[4,8]{V:(data,model)}")
        with pytest.raises(ShardingMismatchError) as info:
            assert_sharding(y, "float32[4,8]{V:data}")
        seen["msg"] = str(info.value)
        z = jax.lax.psum(y, "model")  # reduce over model: varies over data only
        assert_sharding(z, "float32[4,8]{V:data}")
        return z

    out = jax.jit(jax.shard_map(body, in_specs=(P("data", None), P(None, "model")),
                                out_specs=P("data", "model")))(x, w)
    assert_sharding(out, "float32[8@data,32@model]")
    assert "varying axes: expected {data}, got {data, model}" in seen["msg"]
    assert "axis_types=(Manual, Manual)" in seen["msg"]


def test_named_dims_must_agree_across_arguments(env):
    jax, jnp, P, mesh, x, w = env

    @check_shardings
    def f(a: Sharded[jax.Array, "float32[B@data,D]"],
          b: Sharded[jax.Array, "float32[B@data,D]"]) -> Sharded[jax.Array, "float32[B@data,D]"]:
        return a + b

    f(x, x)
    y = jax.device_put(jnp.ones((4, 16)), P("data", None))
    for call in (lambda: f(x, y), lambda: jax.jit(f)(x, y)):
        with pytest.raises(ShardingMismatchError) as info:
            call()
        msg = str(info.value)
        assert "argument 'b' of" in msg
        assert "dim 0: expected B=8 (bound by argument 'a' of" in msg
        assert "got size 4" in msg
        assert "bound dims: B=8, D=16" in msg


def test_decorator_checks_return_values_and_containers(env):
    jax, jnp, P, mesh, x, w = env

    @jax.jit
    @check_shardings
    def layer(x: Sharded[jax.Array, "float32[B@data,D]"],
              w: Sharded[jax.Array, "float32[D,F@model]"],
              bias: Optional[Sharded[jax.Array, "float32[F@model]"]] = None,
              ) -> Tuple[Sharded[jax.Array, "float32[B@data,F@model]"], Sharded[jax.Array, "float32[]"]]:
        h = x @ w
        if bias is not None:
            h = h + bias
        return h, jnp.sum(h)

    h, s = layer(x, w)
    assert h.shape == (8, 32)

    @check_shardings
    def wrong_return(x: Sharded["float32[B@data,D]"]) -> Sharded["float32[B,D]"]:
        return x

    with pytest.raises(ShardingMismatchError, match="the return value of"):
        wrong_return(x)
    with pytest.raises(ShardingMismatchError, match="dim 1: expected sharded over 'model'"):
        layer(x, jax.device_put(jnp.ones((16, 32)), P()))


def test_shorthand_and_annotated_forms_are_the_same(jax8):
    import typing
    jax = jax8
    a = Sharded["float32[B@data,D]"]
    b = Sharded[jax.Array, "float32[B@data,D]"]
    c = typing.Annotated[jax.Array, st.parse("float32[B@data,D]")]
    assert typing.get_args(a) == typing.get_args(b)
    assert typing.get_args(a)[0] is jax.Array
    assert typing.get_args(c)[1] == typing.get_args(a)[1].type


def test_malformed_annotation_fails_when_written(jax8):
    with pytest.raises(st.ShardingSyntaxError, match="unknown dtype"):
        Sharded[jax8.Array, "flot32[8]"]
    with pytest.raises(TypeError, match="is an annotation"):
        Sharded("float32[8]")


def test_typeof_rejects_non_arrays_clearly(jax8):
    with pytest.raises(TypeError):
        st.typeof(object())
