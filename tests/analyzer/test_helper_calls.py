"""A helper that builds or applies a sharding from its parameters is checked at each call
in view, with that call's arguments: a mistake the arguments make is reported at the
call (noting the line in the helper), and only where the helper's own analysis (whose
parameters are unknown when calls differ) does not prove it. Each case runs under JAX
on 8 CPU devices: the reported calls raise, the others do not."""

from __future__ import annotations

import textwrap

import pytest

from shardcheck.analyzer.engine import check_source

HEAD = textwrap.dedent('''\
    import jax
    import jax.numpy as jnp
    from jax.sharding import NamedSharding, PartitionSpec as P
    mesh = jax.make_mesh((2, 4), ("data", "model"))

    def named(*names):
        return NamedSharding(mesh, P(*names))

    def place(x, spec):
        return jax.device_put(x, NamedSharding(mesh, spec))

    ''')
# (the call, the finding at its line or None)
CALLS = [
    ('named("data", None)', None),
    ('named("data", "data")', "SC102"),
    ('named("modle")', "SC101"),
    ('place(jnp.zeros((8, 8)), P("data", "model"))', None),
    ('place(jnp.zeros((8, 6)), P("data", "model"))', "SC104"),
    ('place(jnp.zeros((8, 8)), P("data", "modle"))', "SC101"),
    ('place(jnp.zeros((8,)), P("data", None))', "SC103"),
]
FIRST = HEAD.count("\n") + 1


def _program():
    return HEAD + "".join(f"r{i} = {call}\n" for i, (call, _) in enumerate(CALLS))


def test_each_call_is_checked_with_its_arguments():
    found = {(f.row, f.code) for f in check_source(_program())}
    assert found == {(FIRST + i, code) for i, (_, code) in enumerate(CALLS) if code}


def test_a_spec_the_helper_builds_notes_the_helper_line():
    [f] = [f for f in check_source(_program()) if f.code == "SC102"]
    assert [(r.row, r.message) for r in f.related] == [
        (7, "the spec is built here, by the helper this line calls")]
    [g] = [f for f in check_source(_program()) if f.code == "SC104"]
    assert g.column == len("r4 = place(jnp.zeros((8, 6)), ") + 1  # the caller's own P(...)
    assert g.related == ()


def test_a_helper_proving_it_itself_is_not_reported_again():
    src = HEAD + 'a = named("data", "data")\nb = named("data", "data")\n'
    # every call passes the same names: the helper's own analysis proves it, at the helper
    assert sorted((f.row, f.code) for f in check_source(src)) == [(7, "SC102")]


@pytest.mark.parametrize("i", range(len(CALLS)))
def test_jax_agrees(i, jax8):
    from jax_snippets import run_snippets
    call, code = CALLS[i]
    (res,) = run_snippets([HEAD + f"r = {call}\nRESULT = 'ok'\n"])
    if code is None:
        assert res["status"] == "ok", res
    else:
        assert res["status"] == "error", res
        assert res["type"] in ("ValueError", "DuplicateSpecError", "AssertionError"), res


KEYWORDS = textwrap.dedent('''\
    import functools
    import jax
    import jax.numpy as jnp
    from jax.sharding import NamedSharding, PartitionSpec as P
    mesh = jax.make_mesh((2, 4), ("data", "model"))

    def place(x, spec=P("modle")):  # a default no call below uses
        return jax.device_put(x, NamedSharding(mesh, spec))

    a = place(jnp.zeros((8, 8)), spec=P("model"))
    b = functools.partial(place, spec=P("data"))(jnp.zeros((8, 8)))
    kw = {"spec": P("data", "model")}
    c = place(jnp.zeros((8, 8)), **kw)
    RESULT = [v.sharding.spec == s for v, s in ((a, P("model")), (b, P("data")),
                                                (c, P("data", "model")))]
    ''')


def test_a_parameter_passed_by_keyword_holds_the_argument_not_its_default(jax8):
    """Every call passes ``spec`` (by keyword, through partial, in ``**kw``): the helper's
    default is never used, and JAX runs it. Binding the default gave a false SC101."""
    from jax_snippets import run_snippets
    assert [(f.row, f.code) for f in check_source(KEYWORDS)] == []
    (res,) = run_snippets([KEYWORDS])
    assert res["status"] == "ok", res
    assert res["result"] == [True, True, True]
    # the same helper called once without the keyword does use the default: JAX raises
    (res,) = run_snippets([KEYWORDS + "d = place(jnp.zeros((8, 8)))\n"])
    assert res["status"] == "error", res
    assert [f.code for f in check_source(KEYWORDS + "d = place(jnp.zeros((8, 8)))\n")] \
        == ["SC101"]
