"""The runtime layer's messages for wrong inputs: each a ShardingSyntaxError,
ShardingMismatchError or TypeError that names the parameter and what was expected,
never JAX's "not a valid JAX type", an AttributeError or a bare ValueError."""

import functools
from typing import Dict, Tuple

import pytest

import sharding_types as st
from sharding_types import Sharded, ShardingMismatchError, ShardingSyntaxError, check_shardings

HUGE = "float32[" + "9" * 5000 + "]"  # past Python's int-conversion limit (4,300 digits)


def test_a_dim_size_past_the_int_digit_limit_is_a_syntax_error():
    with pytest.raises(ShardingSyntaxError, match="the size of dim 0 has 5000 digits"):
        st.parse(HUGE)
    with pytest.raises(ShardingSyntaxError):
        Sharded[object, HUGE]


@pytest.fixture(scope="module")
def env(jax8):
    jax = jax8
    import jax.numpy as jnp
    from jax.sharding import AbstractMesh, AxisType, PartitionSpec as P
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    with jax.set_mesh(mesh):
        x = jax.device_put(jnp.ones((8, 16)), P("data", None))
        am = AbstractMesh((2, 4), ("data", "model"), axis_types=(AxisType.Explicit,) * 2)
        yield jax, jnp, x, am


def test_assert_sharding_with_a_huge_dim_is_a_syntax_error(env):
    _, _, x, _ = env
    with pytest.raises(ShardingSyntaxError):
        st.assert_sharding(x, HUGE)


@pytest.mark.parametrize("value,got", [(None, "got None"), ("abc", "got a str"),
                                       ({"a": 1}, "got a dict (a pytree")])
def test_assert_sharding_of_a_non_array_names_what_it_expected(env, value, got):
    with pytest.raises(TypeError) as e:
        st.assert_sharding(value, "float32[8@data,16]")
    msg = str(e.value)
    assert msg.startswith("the value given to assert_sharding: expected an array of type "
                          "float32[8@data,16], " + got), msg
    assert "not a valid JAX type" not in msg


@pytest.mark.parametrize("value,got", [(None, "got None"), ("s", "got a str"),
                                       ([1], "got a list (a pytree")])
def test_a_non_optional_sharded_parameter_given_a_non_array(env, value, got):
    @check_shardings
    def f(a: Sharded[object, "float32[8@data,16]"]):
        return a

    with pytest.raises(TypeError, match=r"^argument 'a' of .*f: expected an array of type "
                                        r"float32\[8@data,16\], " + got.replace("(", r"\(")):
        f(value)


def test_a_dict_plan_given_a_list(env):
    _, _, x, _ = env

    @check_shardings
    def g(params: Dict[str, Sharded[object, "float32[8@data,16]"]]):
        return params

    with pytest.raises(TypeError, match="argument 'params' of .*g: expected a dict of arrays, "
                                        "got a list"):
        g([x])
    assert g({"w": x})["w"] is x


def test_a_tuple_of_the_wrong_length_says_its_length(env):
    _, _, x, _ = env

    @check_shardings
    def h(pair: Tuple[Sharded[object, "float32[8@data,16]"], Sharded[object, "float32[8@data,16]"]]):
        return pair

    with pytest.raises(TypeError, match="argument 'pair' of .*h: expected a tuple of 2 values, "
                                        "got a tuple of 3"):
        h((x, x, x))


@pytest.mark.parametrize("bindings", [[1], {"B": "x"}, {1: 2}, "B=8"])
def test_bad_bindings_are_named(env, bindings):
    _, _, x, _ = env
    with pytest.raises(TypeError, match="assert_sharding: bindings must be a dict of dim names "
                                        "to sizes"):
        st.assert_sharding(x, "float32[B@data,16]", bindings=bindings)


def test_check_shardings_on_a_functools_partial(env):
    jax, jnp, x, _ = env

    def layer(h: Sharded[object, "float32[B@data,16]"], scale: float) -> Sharded[object, "float32[B@data,16]"]:
        return h * scale

    checked = check_shardings(functools.partial(layer, scale=2.0))
    assert checked(x).shape == (8, 16)  # the first call works
    with pytest.raises(ShardingMismatchError, match="argument 'h' of .*layer"):
        checked(jnp.ones((8, 16)))  # replicated, not over 'data'


def test_abstract_array_keeps_host_memory(env):
    jax, _, _, am = env
    s = st.abstract_array("float32<host>[8@data,16]", am)
    assert str(jax.typeof(s)) == "float32<host>[8@data,16]"


def test_abstract_array_of_float0(env):
    jax, _, _, am = env
    s = st.abstract_array("float0[8@data,16]", am)
    assert str(jax.typeof(s)) == "float0[8@data,16]"


def test_abstract_array_on_a_mesh_model(env):
    jax, _, _, am = env
    s = st.abstract_array("float32[8@data,16@model]", st.mesh_model(am))
    assert str(jax.typeof(s)) == "float32[8@data,16@model]"


def test_abstract_array_on_something_that_is_not_a_mesh(env):
    with pytest.raises(TypeError, match="abstract_array: mesh must be a jax.sharding.Mesh, an "
                                        "AbstractMesh or a MeshModel, got None"):
        st.abstract_array("float32[8@data,16]", None)


def test_a_mesh_model_given_as_a_value(env):
    _, _, _, am = env
    with pytest.raises(TypeError, match="got a MeshModel \\(a mesh, not an array\\)"):
        st.assert_sharding(st.mesh_model(am), "float32[8]")
    with pytest.raises(TypeError, match="typeof: expected a JAX array or tracer, got a MeshModel"):
        st.typeof(st.mesh_model(am))


def test_a_float0_value_is_checked(env):
    jax, _, _, _ = env
    import numpy as np
    zeros = np.zeros((8,), dtype=jax.dtypes.float0)
    assert st.assert_sharding(zeros, "float0[8]") is zeros
    with pytest.raises(ShardingMismatchError, match="dim 0: expected size 4, got 8"):
        st.assert_sharding(zeros, "float0[4]")  # noqa: SC307 (the failure this test expects)
