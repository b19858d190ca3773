"""Round-trip parity with JAX: str(parse(str(jax.typeof(v)))) == str(jax.typeof(v)).

Values come from tests/jax_values.py: concrete arrays and tracers, Explicit and Auto
meshes, tuple axes, scalars, weak types, shard_map bodies with varying axes, unreduced
and reduced values, PRNG keys and host memory, all on 8 CPU devices.
"""

import pytest

import sharding_types as st
from jax_values import collect


@pytest.fixture(scope="module")
def values(jax8):
    return collect()


def test_at_least_30_distinct_real_types(values):
    assert len({text for _, text, _ in values}) >= 30


def test_every_printed_type_round_trips_and_equals_the_model(values):
    for label, text, model in values:
        parsed = st.parse(text)
        assert str(parsed) == text, label
        assert str(model) == text, label
        assert parsed == model, label


def test_the_forms_the_issue_names_occur_for_real(values):
    texts = {t for _, t, _ in values}
    for needle in ["@(x,y)", "{V:(x,y)}", "{U:y}", "{R:y}", "~float32[]", "float32[]",
                   "{V:y}", "key<fry>", "<host>"]:
        assert any(needle in t for t in texts), needle


def test_model_carries_the_values_mesh(values):
    by_label = {label: model for label, _, model in values}
    mesh = by_label["explicit 2d"].mesh
    assert mesh == st.MeshModel(("x", "y"), (2, 4), (st.AxisType.Explicit,) * 2)
    assert by_label["auto mesh concrete"].mesh.axis_types == (st.AxisType.Auto,) * 2
    # inside shard_map the manual axes are Manual
    assert by_label["shard_map body input"].mesh.axis_types == (st.AxisType.Manual,) * 2
    assert by_label["partial manual body"].mesh.axis_types == (
        st.AxisType.Manual, st.AxisType.Explicit)


def test_mesh_model_prints_as_jax_mesh(jax8):
    jax = jax8
    from jax.sharding import AxisType
    m = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Explicit, AxisType.Auto))
    assert str(st.mesh_model(m)) == str(m)


@pytest.mark.parametrize("make_spec,rejected_text", [
    (lambda P: P("x", "x"), "float32[8@x,8@x]"),
    (lambda P: P("x", ("x", "y")), "float32[4@x,8@(x,y)]"),
    (lambda P: P("x", unreduced={"x"}), "float32[8@x,8]{U:x}"),
    (lambda P: P(None, reduced={"y"}, unreduced={"y"}), "float32[8,8]{U:y, R:y}"),
])
def test_types_the_parser_rejects_are_ones_jax_rejects(jax8, make_spec, rejected_text):
    jax = jax8
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P
    mesh = jax.make_mesh((2, 4), ("x", "y"))
    # DuplicateSpecError (a plain Exception) or ValueError, depending on the rule
    with pytest.raises(Exception, match="duplicate|overlap"):
        NamedSharding(mesh, make_spec(P))
    with pytest.raises(st.ShardingSyntaxError):
        st.parse(rejected_text)
