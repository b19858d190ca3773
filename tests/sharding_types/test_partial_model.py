"""The partial model: PartialType / PartialMesh, their printer, the spec printer, and
mismatch_reasons' partial and exact modes. No JAX, except where JAX's own repr is the
reference."""

import re

import pytest

import sharding_types as st
from sharding_types import AxisType, MeshModel, PartialMesh, PartialType

TYPES = ["float32[8@x,16]", "~int32[]", "bfloat16[4@(x,y),2]{V:z}", "float32[8,4]{U:y}",
         "float32[8]{V:x, U:y, R:z}", "int8<host>[3,3@y]", "float32[16@y,8@x]{V:(z,w)}"]


def _order(t):
    """A mesh axis order under which ``t`` prints its sets as it is written."""
    return tuple(t.sharded_axes) + t.varying + t.unreduced + t.reduced


@pytest.mark.parametrize("text", TYPES)
def test_a_known_type_completes_to_itself_and_prints_the_same(text):
    t = st.parse(text)
    p = PartialType.from_type(t)
    assert p.complete(_order(t)) == t
    assert p.format(_order(t)) == text
    assert str(p.complete(_order(t))) == text


@pytest.mark.parametrize("part", ["dtype", "weak", "shape", "dims", "varying", "unreduced",
                                  "reduced", "memory_space"])
def test_any_unknown_part_leaves_the_type_incomplete(part):
    from dataclasses import replace
    p = PartialType.from_type(st.parse("float32[8@x,16]{V:y}"))
    assert p.complete() is not None
    assert replace(p, **{part: None}).complete() is None


def test_an_unknown_size_or_a_rank_disagreement_is_incomplete():
    p = PartialType.from_type(st.parse("float32[8@x,16]"))
    from dataclasses import replace
    assert replace(p, shape=(8, None)).complete() is None
    assert replace(p, shape=(8,)).complete() is None  # shape and dims disagree on rank
    # a type JAX could never produce: x both shards a dim and is unreduced
    assert replace(p, unreduced=frozenset({"x"})).complete() is None


def test_sets_print_in_mesh_order_then_sorted():
    p = PartialType(dtype="float32", weak=False, shape=(8,), dims=((),),
                    varying=frozenset({"b", "a", "m"}), unreduced=frozenset(), reduced=frozenset(),
                    memory_space="device")
    assert p.format(("m", "b")) == "float32[8]{V:(m,b,a)}"
    assert str(p.complete(("m", "b"))) == "float32[8]{V:(m,b,a)}"
    assert str(p) == "float32[8]{V:(a,b,m)}"


@pytest.mark.parametrize("partial,text", [
    (PartialType(), "?[?]"),
    (PartialType(dtype="float32", shape=(8, 16)), "float32[?]"),  # dims unknown: '?'
    (PartialType(dtype="float32", dims=(("x",), ())), "float32[?@x,?]"),
    (PartialType(weak=True, shape=(8, None), dims=(("x", "y"), ())), "~?[8@(x,y),?]"),
    (PartialType(dtype="int32", weak=None, shape=(), dims=()), "int32[]"),
    (PartialType(dtype="int32", shape=(2,), dims=((),), varying=None), "int32[2]"),
    (PartialType(dtype="int32", shape=(2,), dims=((),), memory_space="host"), "int32<host>[2]"),
])
def test_unknown_parts_print_as_question_marks(partial, text):
    assert str(partial) == text


def test_join_keeps_what_both_share():
    a = PartialType.from_type(st.parse("float32[8@x,16]{V:y}"))
    b = PartialType.from_type(st.parse("float32[8@x,32]{V:y}"))
    j = a.join(b)
    assert (j.dtype, j.weak, j.shape, j.dims, j.varying) == (
        "float32", False, (8, None), (("x",), ()), frozenset({"y"}))
    c = PartialType.from_type(st.parse("~bfloat16[8,16,2]"))
    k = a.join(c)
    assert (k.dtype, k.weak, k.shape, k.dims, k.varying, k.memory_space) == (
        None, None, None, None, None, "device")
    assert a.join(a) == a and a.join(PartialType()) == PartialType()
    assert a.join(b) == b.join(a)


def test_named_dims_are_sizes_the_partial_type_does_not_know():
    p = PartialType.from_type(st.parse("float32[B@data,D]"))
    assert p.shape == (None, None) and p.dims == (("data",), ()) and p.rank == 2
    assert p.complete() is None and str(p) == "float32[?@data,?]"


def test_partial_mesh():
    m = PartialMesh(("data", "model"), (2, None), (AxisType.Explicit, AxisType.Auto))
    assert m.model() is None and m.size_of("data") == 2 and m.size_of("model") is None
    assert m.type_of("model") is AxisType.Auto and m.type_of("nope") is None
    assert m.describe() == "Mesh('data': 2, 'model': ?)"
    full = PartialMesh(("data", "model"), (2, 4), None)
    assert full.model() == MeshModel(("data", "model"), (2, 4))  # types unknown: Explicit
    assert PartialMesh.from_model(MeshModel(("x",), (8,))).model() == MeshModel(("x",), (8,))
    assert full.same_shape(PartialMesh(("data", "model"), (2, 4))) is True
    assert full.same_shape(PartialMesh(("data", "model"), (4, 2))) is False
    assert full.same_shape(m) is None and full.same_shape(PartialMesh(("x",))) is False
    assert PartialMesh().describe() == "a mesh with unknown axes" and PartialMesh().model() is None


def test_the_spec_printer_writes_what_jax_repr_writes(jax8):
    from jax import P
    for spec, entries, sets in [
        (P("x", None), ("x", None), {}),
        (P(("x", "y"), None, "z"), (("x", "y"), None, "z"), {}),
        (P(("x", "y")), (("x", "y"),), {}),
        (P("x"), ("x",), {}),
        (P(), (), {}),
        (P(None, "x", unreduced={"y"}), (None, "x"), {"unreduced": ("y",)}),
        (P("x", reduced={"y"}), ("x",), {"reduced": ("y",)}),
        (P("x", None, unreduced={"y"}, reduced={"z"}), ("x", None),
         {"unreduced": ("y",), "reduced": ("z",)}),
    ]:
        # JAX's repr writes a tuple's trailing comma after a lone entry, and JAX 0.12
        # adds the default `unreduced_kind=sum`; we write the spec as source does
        jax_repr = re.sub(r",\)$", ")", repr(spec)).replace(", unreduced_kind=sum)", ")")
        assert st.format_spec(entries, **sets) == jax_repr


def test_spec_entries_with_unknowns():
    assert st.format_entry(None) == "None" and st.format_entry(()) == "None"
    assert st.format_entry(("x",)) == "'x'" and st.format_entry("x") == "'x'"
    assert st.format_entry(("x", None)) == "('x', ?)" and st.format_entry(object()) == "?"
    assert st.format_spec([("x", "y"), None, 3]) == "P(('x', 'y'), None, ?)"
    assert st.format_spec([], unreduced=["b", "a"]) == "P(unreduced={'a', 'b'})"


# -- mismatch_reasons --------------------------------------------------------------------------
DECLARED = st.parse("float32[B@x,16]{V:y}")


def _reasons(actual, **kw):
    return st.mismatch_reasons(DECLARED, actual, {}, partial=True,
                               words=("declared", "inferred"), **kw)


def test_unknown_parts_never_mismatch():
    assert _reasons(PartialType()) == []
    assert _reasons(PartialType(dtype="float32", shape=(None, 16))) == []
    assert _reasons(PartialType(dims=(("x",), ()), varying=frozenset({"y"}))) == []


def test_known_parts_of_a_partial_type_do_mismatch():
    assert _reasons(PartialType(dtype="bfloat16", shape=(8, 32), dims=((), ()),
                                varying=frozenset())) == [
        "dtype: declared float32, inferred bfloat16",
        "dim 0: declared sharded over 'x', inferred replicated",
        "dim 1: declared size 16, inferred 32",
        "varying axes: declared {y}, inferred {} (none)"]
    assert _reasons(PartialType(shape=(8, None, 2))) == [
        "rank: declared 2 dims, inferred 3 (shape (8, ?, 2))"]
    assert _reasons(PartialType(memory_space="host", reduced=frozenset({"z"}))) == [
        "memory space: declared device, inferred host",
        "reduced axes: declared {} (none), inferred {z}"]


def test_named_dims_bind_only_known_sizes():
    bindings: dict = {}
    t = st.parse("float32[B,B]")
    assert st.mismatch_reasons(t, PartialType(shape=(None, 4)), bindings, partial=True) == []
    assert bindings == {"B": 4}
    assert st.mismatch_reasons(t, PartialType(shape=(8, None)), bindings, partial=True) == [
        "dim 0: expected B=4, got size 8"]


def test_weak_types_partial_and_exact():
    weak = st.parse("~float32[]")
    assert st.mismatch_reasons(weak, PartialType(weak=None), partial=True) == []
    assert st.mismatch_reasons(weak, PartialType(weak=False), partial=True) == [
        "weak type: expected a weakly typed value (~), got a strongly typed one"]
    strong, weak_actual = st.parse("float32[]"), st.parse("~float32[]")
    assert st.mismatch_reasons(strong, weak_actual) == []  # an assertion asks only for ~
    assert st.mismatch_reasons(strong, weak_actual, exact=True) == [
        "weak type: expected a strongly typed value, got a weakly typed one (~)"]


def test_a_partial_type_needs_partial_mode_and_named_actual_dims_are_unknown_there():
    with pytest.raises(TypeError, match="partial=True"):
        st.mismatch_reasons(DECLARED, PartialType())
    actual = st.parse("float32[N@x,16]{V:y}")  # e.g. another annotation: N's size unknown
    assert st.mismatch_reasons(DECLARED, actual, partial=True) == []
    assert st.mismatch_reasons(st.parse("float32[8@x,16]{V:y}"), actual) == [
        "dim 0: expected size 8, got None"]
