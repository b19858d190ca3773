"""sharding_types' dtype table and promotion lattice against the installed JAX, pair by
pair, in one JAX process: the lattice data itself, ``jnp.promote_types``, JAX's
``lattice_result_type`` with weak operands (what every jnp elementwise op promotes
with), and ``jnp.add`` traced on abstract operands."""

import itertools

import numpy as np
import pytest

import sharding_types as st
from sharding_types import _dtypes as sd


@pytest.fixture(scope="module")
def jd(jax8):
    from jax._src import dtypes
    return dtypes


def _x64(jax, on):
    enable = getattr(jax, "enable_x64", None)
    if enable is None:  # newer JAX moved it
        from jax.experimental import enable_x64 as enable
    return enable(on)


def _name(t):
    """A lattice node of JAX's as our table names it (weak nodes: int, float, complex)."""
    return {int: "int", float: "float", complex: "complex"}.get(t) if isinstance(t, type) else str(t)


def _outcome(fn, jd):
    try:
        d, w = fn()
        return str(np.dtype(d)), bool(w)
    except (jd.TypePromotionError, st.TypePromotionError):
        return "raises"


class _Operand:
    """What lattice_result_type reads of an operand: its dtype and aval.weak_type."""

    def __init__(self, jax, dtype, weak):
        self.dtype = np.dtype(dtype)
        self.aval = jax.core.ShapedArray((), self.dtype, weak_type=weak)


def test_the_table_names_every_dtype_jax_promotes(jd):
    assert set(st.DTYPES) - {"float0"} == {str(t) for t in jd._jax_types}
    assert sd.PROMOTABLE_DTYPES == {str(t) for t in jd._jax_types}


@pytest.mark.parametrize("x64", [False, True])
def test_the_lattice_is_jaxs(jd, x64):
    theirs = {_name(k): {_name(v) for v in vs}
              for k, vs in jd._type_promotion_lattice(False, x64).items()}
    assert {k: set(v) for k, v in sd.lattice_edges(x64).items()} == theirs


def test_kinds_widths_and_canonical_dtypes_are_jaxs(jax8, jd):
    jnp = jax8.numpy
    kinds = {"bool": np.bool_, "uint": jnp.unsignedinteger, "int": jnp.signedinteger,
             "float": jnp.floating, "complex": jnp.complexfloating}
    for name in sd.PROMOTABLE_DTYPES:
        assert jnp.issubdtype(np.dtype(name), kinds[st.dtype_kind(name)]), name
        assert sd.dtype_bits(name) == jd.itemsize_bits(np.dtype(name)), name
        assert st.to_inexact_dtype(name) == str(jd.to_inexact_dtype(name)), name
        for x64 in (False, True):
            with _x64(jax8, x64):
                assert st.canonicalize_dtype(name, x64) == str(jd.canonicalize_dtype(name)), name
    for x64 in (False, True):
        with _x64(jax8, x64):
            assert st.default_dtype("int", x64) == str(jd.default_int_dtype())
            assert st.default_dtype("uint", x64) == str(jd.default_uint_dtype())
            assert st.default_dtype("float", x64) == str(jd.default_float_dtype())
            assert st.default_dtype("complex", x64) == str(jd.default_complex_dtype())
            for value, kind in ((True, "bool"), (1, "int"), (1.0, "float"), (1j, "complex")):
                aval = jax8.eval_shape(lambda: jnp.asarray(value))
                assert st.python_scalar_dtype(kind, x64) == (str(aval.dtype), aval.weak_type)


@pytest.mark.parametrize("x64", [False, True])
def test_promote_types_equals_jnp_promote_types_on_every_pair(jax8, jd, x64):
    jnp = jax8.numpy
    names = sorted(sd.PROMOTABLE_DTYPES)
    weak_kinds = {int: "int", float: "float", complex: "complex"}
    checked, wrong = 0, []
    with _x64(jax8, x64):
        for a, b in itertools.product(names + list(weak_kinds), repeat=2):
            theirs = _outcome(lambda: (jd.canonicalize_dtype(jnp.promote_types(a, b)), None), jd)
            mine = _outcome(lambda: sd.result_type(*(
                (x, False) if isinstance(x, str) else st.python_scalar_dtype(weak_kinds[x], x64)
                for x in (a, b)), x64=x64), jd)
            theirs = theirs if theirs == "raises" else theirs[0]
            mine = mine if mine == "raises" else mine[0]
            checked += 1
            if theirs != mine:
                wrong.append((a, b, theirs, mine))
    assert not wrong, wrong[:10]
    assert checked == (len(names) + 3) ** 2


@pytest.mark.parametrize("x64", [False, True])
def test_result_type_equals_jax_with_weak_operands_on_every_pair(jax8, jd, x64):
    """Every (dtype, weak) pair of a device's dtypes (canonical ones with x64 off)."""
    with _x64(jax8, x64):
        names = [n for n in sorted(sd.PROMOTABLE_DTYPES) if x64 or st.canonicalize_dtype(n) == n]
        operands = [(n, w) for n in names for w in (False, True)]
        avals = {o: _Operand(jax8, *o) for o in operands}
        wrong = []
        for a, b in itertools.product(operands, repeat=2):
            theirs = _outcome(lambda: jd.lattice_result_type(avals[a], avals[b]), jd)
            mine = _outcome(lambda: st.promote_types(a[0], b[0], a[1], b[1], x64=x64), jd)
            if theirs != mine:
                wrong.append((a, b, theirs, mine))
    assert not wrong, wrong[:10]
    assert len(operands) ** 2 >= 3000


def test_three_operands_promote_at_once_as_jax_does(jax8, jd):
    """A sample of triples (JAX bounds the set, not pairs one by one)."""
    names = [n for n in sorted(sd.PROMOTABLE_DTYPES) if st.canonicalize_dtype(n) == n]
    operands = [(n, w) for n in names for w in (False, True)]
    avals = {o: _Operand(jax8, *o) for o in operands}
    wrong, checked = [], 0
    for triple in itertools.islice(itertools.product(operands, repeat=3), 0, None, 31):
        theirs = _outcome(lambda: jd.lattice_result_type(*(avals[o] for o in triple)), jd)
        mine = _outcome(lambda: st.result_type(*triple), jd)
        checked += 1
        if theirs != mine:
            wrong.append((triple, theirs, mine))
    assert not wrong, wrong[:10]
    assert checked > 5000


def test_jnp_add_promotes_as_the_table_says(jax8, jd):
    """The op itself, traced: every strong dtype of a device and every weak Python
    scalar dtype, both sides (what a jnp expression can meet with x64 off). One trace
    holds every pair; a pair JAX rejects raises inside it and is caught there."""
    jax, jnp = jax8, jax8.numpy
    names = [n for n in sorted(sd.PROMOTABLE_DTYPES) if st.canonicalize_dtype(n) == n]
    operands = [(n, False) for n in names] + [("int32", True), ("float32", True), ("complex64", True)]
    pairs = list(itertools.product(range(len(operands)), repeat=2))
    theirs = {}

    def add_every_pair(*xs):
        for i, j in pairs:
            try:
                out = jax.typeof(jnp.add(xs[i], xs[j]))
                theirs[i, j] = (str(out.dtype), bool(out.weak_type))
            except jd.TypePromotionError:
                theirs[i, j] = "raises"
    jax.eval_shape(add_every_pair, *(jax.ShapeDtypeStruct((), d, weak_type=w) for d, w in operands))
    wrong = []
    for i, j in pairs:
        (a, wa), (b, wb) = operands[i], operands[j]
        mine = _outcome(lambda: st.promote_types(a, b, wa, wb), jd)
        if theirs[i, j] != mine:
            wrong.append((operands[i], operands[j], theirs[i, j], mine))
    assert not wrong, wrong[:10]
    assert len(theirs) == len(operands) ** 2


def test_every_dtype_name_prints_as_jax_prints_it(jax8, jd):
    for name in sorted(st.DTYPES):
        text = str(jax8.core.ShapedArray((2,), jd.float0 if name == "float0" else np.dtype(name)))
        assert text == f"{name}[2]"
        assert str(st.parse(text)) == text


def test_unknown_names_and_promotion_errors():
    with pytest.raises(ValueError, match="not a dtype JAX promotes"):
        st.promote_types("float32", "float0")
    with pytest.raises(st.TypePromotionError, match="narrow floats") as e:
        st.promote_types("float8_e4m3fn", "bfloat16")
    assert e.value.dtypes == ("bfloat16", "float8_e4m3fn")
    with pytest.raises(st.TypePromotionError, match="4-bit integers"):
        st.promote_types("int4", "uint4")
    assert st.dtype_kind("key<fry>") is None and st.dtype_kind("float0") is None
    with pytest.raises(ValueError, match="unknown dtype kind"):
        st.default_dtype("string")
