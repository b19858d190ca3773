"""The analyzer's abstract values wrap the partial model: ArrayVal is a PartialType,
MeshVal a PartialMesh, and the annotation check is sharding_types' comparator."""

from dataclasses import replace

import sharding_types as st
from sharding_types import AxisType, PartialMesh, PartialType
from shardcheck.analyzer import annotations as ann
from shardcheck.analyzer.values import ArrayVal, MeshVal, SpecVal, UNKNOWN, join, join_arrays


def _a(**kw):
    base = dict(dtype="float32", dims=(("x",), ()), varying=frozenset())
    base.update(kw)
    return ArrayVal((8, 16), **base)


def test_array_val_keeps_the_analyzers_positional_order_and_defaults():
    mesh = MeshVal(("x", "y"), (2, 4), None)
    spec = SpecVal((("x",), None))
    a = ArrayVal((8, 16), mesh, spec, "node", frozenset({"y"}), dtype="int32")
    assert (a.shape, a.mesh, a.spec, a.node, a.varying, a.dtype) == (
        (8, 16), mesh, spec, "node", frozenset({"y"}), "int32")
    b = ArrayVal(None)
    # the analyzer's defaults: no varying/unreduced axes, strongly typed; reduced and
    # memory space are not modelled (unknown)
    assert (b.varying, b.unreduced, b.weak, b.dims, b.dtype, b.reduced, b.memory_space, b.numpy) == (
        frozenset(), frozenset(), False, None, None, None, None, False)
    assert isinstance(a, PartialType) and isinstance(mesh, PartialMesh)


def test_values_are_equal_only_to_themselves():
    a = _a()
    assert a == a and a != replace(a) and len({a, replace(a)}) == 2
    m = MeshVal(("x",), (2,), None)
    assert m != MeshVal(("x",), (2,), None) and m.same_shape(MeshVal(("x",), (2,), None))


def test_sharding_type_assumes_jaxs_defaults_for_what_is_not_modelled():
    mesh = MeshVal(("x", "y", "z"), (2, 2, 2), (AxisType.Explicit,) * 3)
    a = ArrayVal((8, 16), mesh, None, None, frozenset({"z", "y"}), dtype="float32",
                 dims=(("x",), ()))
    assert str(a.sharding_type()) == "float32[8@x,16]{V:(y,z)}"
    assert str(a.sharding_type(("z", "y"))) == "float32[8@x,16]{V:(z,y)}"
    assert str(a) == "float32[8@x,16]{V:(y,z)}"
    assert a.type_part().complete() is None  # reduced, memory space unknown
    assert replace(a, memory_space="host").sharding_type().memory_space == "host"
    assert replace(a, numpy=True).sharding_type() is None
    assert replace(a, shape=(8, None)).sharding_type() is None


def test_join_arrays_is_the_partial_join():
    a, b = _a(), _a(dtype="bfloat16")
    j = join_arrays(a, b)
    assert isinstance(j, ArrayVal)
    assert (j.dtype, j.shape, j.dims, j.weak) == (None, (8, 16), (("x",), ()), False)
    assert join(a, replace(a, shape=(8, 4))).shape == (8, None)
    assert join(a, a) is a and join(a, UNKNOWN) is UNKNOWN


def test_spec_val_prints_with_the_one_spec_printer():
    assert SpecVal((("x",), None, ("a", None), UNKNOWN)).describe() == "P('x', None, ('a', ?), ?)"
    assert SpecVal((None,), unreduced=("u",)).describe() == "P(None, unreduced={'u'})"


def test_the_annotation_check_is_the_partial_comparator():
    t = st.parse("float32[B@x,D]{V:y}")
    bindings: dict = {}
    assert ann.mismatches(t, _a(dtype=None, dims=None, varying=None), bindings) == []
    assert bindings == {"B": 8, "D": 16}
    assert ann.mismatches(t, _a(dims=((), ())), {}) == [
        "dim 0: declared sharded over 'x', inferred replicated",
        "varying axes: declared {y}, inferred {} (none)"]
    assert ann.mismatches(t, ArrayVal((8, 16, 2), dtype="float32"), {}) == [
        "rank: declared 2 dims, inferred 3 (shape (8, 16, 2))",
        "varying axes: declared {y}, inferred {} (none)"]
    # reduced and memory space are not modelled: a declared {R:...} or <host> is no finding
    assert ann.mismatches(st.parse("float32<host>[8@x,16]{R:z}"), _a(), {}) == []


def test_an_annotation_supplies_what_inference_lacks():
    t = st.parse("~float32[8@x,D]{R:z}")
    got = ann.from_annotation(t, {"D": 16}, ArrayVal((8, None), dims=None, weak=None))
    assert (got.shape, got.dims, got.weak, got.dtype, got.reduced, got.memory_space) == (
        (8, 16), (("x",), ()), True, "float32", frozenset({"z"}), "device")
    assert str(got.sharding_type()) == "~float32[8@x,16]{R:z}"
