"""The parser and printer, without JAX: forms JAX prints, named dims, and malformed text."""

import dataclasses

import pytest

import sharding_types as st
from sharding_types import Dim, ShardingSyntaxError, ShardingType, parse

# Every form JAX 0.10.2 prints (see tests/jax_values.py for the same forms taken from
# real values), plus our named-dim extension. Each must print back unchanged.
CANONICAL = [
    "float32[4@X,8@Y]", "float32[16@(x,y),3]", "float32[]", "float32[8@x,8]{U:y}",
    "float32[8,8]{R:y}", "float32[4,2]{V:(x,y)}", "float32[4,1]{V:x, U:y}", "~float32[]",
    "~int32[]", "key<fry>[]", "key<rbg>[8@x]", "float32<host>[8@x,16@y]",
    "bfloat16[8,4@y]{V:x, U:(z,u), R:w}", "float8_e4m3fn[4]", "int4[0,3]", "bool[1]",
    "float32[B@data,D]", "bfloat16[B@data,S,H@model]", "float32[N,N]", "float32[_,8@x]",
    "float32[8@(y,x),3]", "complex64[3]", "uint8[8@(a,c),4@b,2]",
]


@pytest.mark.parametrize("text", CANONICAL)
def test_canonical_forms_round_trip(text):
    t = parse(text)
    assert str(t) == text
    assert parse(str(t)) == t
    assert hash(parse(text)) == hash(t)


def test_fields():
    t = parse("~bfloat16[B@data,16@(x,y),3]{V:x, U:z}")
    assert t.dtype == "bfloat16" and t.weak_type
    assert t.dims == (Dim(name="B", axes=("data",)), Dim(16, axes=("x", "y")), Dim(3))
    assert t.shape == (None, 16, 3)
    assert t.spec == ("data", ("x", "y"), None)
    assert t.varying == ("x",) and t.unreduced == ("z",) and t.reduced == ()
    assert t.is_symbolic and t.rank == 3


@pytest.mark.parametrize("text,canonical", [
    ("float32[ 8 @ x , 4 ]", "float32[8@x,4]"),
    ("float32[16@(x),3]", "float32[16@x,3]"),  # JAX normalises 1-tuples of axes
    ("float32[4]{ V : x , U : y }", "float32[4]{V:x, U:y}"),
    ("float32[4]{U:y, V:x}", "float32[4]{V:x, U:y}"),  # JAX prints V, then U, then R
])
def test_lenient_input_prints_canonically(text, canonical):
    assert str(parse(text)) == canonical


def test_model_is_frozen_and_built_directly():
    t = ShardingType("float32", (Dim(8, axes="x"), Dim(4)))
    assert str(t) == "float32[8@x,4]"
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.dtype = "int32"  # type: ignore[misc]  # the point: it is frozen
    with pytest.raises(ValueError, match="at most one dimension"):
        ShardingType("float32", (Dim(8, axes="x"), Dim(4, axes="x")))


def test_local_shape():
    mesh = st.MeshModel(("data", "model"), (2, 4))
    assert parse("float32[8@data,16@model]").local_shape(mesh) == (4, 4)
    assert parse("float32[16@(data,model),3]").local_shape(mesh) == (2, 3)
    with pytest.raises(ValueError, match="needs a mesh"):
        parse("float32[8@data]").local_shape()


def test_mesh_model():
    m = st.MeshModel.from_shape({"data": 64, "model": 8})
    assert m.size == 512 and m.axis_size(("data", "model")) == 512
    assert m.axis_types == (st.AxisType.Explicit,) * 2
    assert m.order({"model", "data"}) == ("data", "model")
    assert str(m) == "Mesh('data': 64, 'model': 8, axis_types=(Explicit, Explicit))"
    with pytest.raises(ValueError, match="unique"):
        st.MeshModel(("a", "a"), (1, 2))


# (text, what the message must say, 1-based column it must point at)
MALFORMED = [
    ("float32[8,4", "expected ',' or ']'", 12),                # unbalanced [
    ("float32[8,4]]", "unexpected ']'", 13),                    # stray ]
    ("float32[8@,4]", "mesh axis name after '@'", 11),          # @ with no axis
    ("float33[8]", "unknown dtype 'float33'", 1),               # unknown dtype
    ("flaot32[8]", "did you mean float32", 1),                  # typo gets a hint
    ("float32[8@x,4@x]", "shards both dim 0 and dim 1", 15),    # duplicate axis
    ("float32[8@(x,x)]", "lists an axis twice", 11),            # duplicate axis in a tuple
    ("float32[8]{V:}", "mesh axis name after V:", 14),          # empty V set
    ("float32[8]{V:x", "expected ',' or '}'", 15),              # unclosed {
    ("float32[8]{Q:x}", "unknown axis set 'Q'", 12),            # bad set letter
    ("float32[8]{V:x, V:y}", "V: set is given twice", 17),      # repeated set
    ("float32[8]{Vx}", "unknown axis set 'Vx'", 12),            # missing colon
    ("float32[8]{V:x,U:x}", "both varying and unreduced", 19),  # V/U overlap
    ("float32[8@x]{U:x}", "both shards a dim and is unreduced", 17),
    ("float32[8]{U:x, R:x}", "both unreduced and reduced", 20),
    ("float32[8@(x,y]", "expected ')'", 15),                    # unclosed tuple
    ("float32[-1]", "size or a dim name", 9),                   # negative size
    ("float32[8x]", "a size or a name, not both", 10),
    ("float32<gpu>[4]", "unknown memory space 'gpu'", 9),
    ("float32<host[4]", "'>' to close the memory space", 13),
    ("float32", "'[' to open the dims", 8),                     # no dims
    ("", "empty string", 1),
    ("   ", "empty string", 1),
    ("[8,4]", "expected a dtype", 1),
    ("key[4]", "'<' after 'key'", 4),
    ("float32[8,4]extra", "unexpected 'extra'", 13),
    ("float32[8,,4]", "size or a dim name for dim 1", 11),
]


@pytest.mark.parametrize("text,message,column", MALFORMED)
def test_malformed_text_raises_the_grammar_error(text, message, column):
    with pytest.raises(ShardingSyntaxError) as info:
        parse(text)
    err = info.value
    assert message in str(err)
    assert err.position + 1 == column, str(err)
    assert "grammar:" in str(err)  # every error teaches the grammar
    assert isinstance(err, ValueError)


def test_parse_rejects_non_strings_clearly():
    with pytest.raises(TypeError, match="takes a str"):
        parse(8)  # type: ignore[arg-type]


def test_error_display_points_at_the_column():
    with pytest.raises(ShardingSyntaxError) as info:
        parse("float32[8@,4]")
    lines = str(info.value).splitlines()
    assert lines[1] == "    float32[8@,4]"
    assert lines[2] == " " * 14 + "^"
