"""jaxtyping annotations give a parameter no call in view reaches its rank (and the sizes
written as numbers), checked against jaxtyping's own reading of the same strings, and the
findings that rank gives are checked against JAX on 8 CPU devices."""

from __future__ import annotations

import textwrap

import pytest

from shardcheck.analyzer.engine import check_source
from shardcheck.analyzer.jaxapi.jaxtyping import parse_dims

DIMS = ["b d", "batch 512", "", "#n d", "_ 4", "*batch d", "... d", "4 4", "b=4 d", "*#b d",
        "_b c", "seq seq", "b ?x", "d d-1"]


@pytest.mark.parametrize("dims", DIMS)
def test_rank_as_jaxtyping_reads_it(dims):
    jnp = pytest.importorskip("jax.numpy")
    jaxtyping = pytest.importorskip("jaxtyping")
    annotation = jaxtyping.Float[jaxtyping.Array, dims]
    ours = parse_dims(dims)
    tokens = dims.split()

    def accepts(rank):
        shape = tuple(int(t) if t.isdigit() else 4 for t in (tokens + ["x"] * 5)[:rank])
        if dims == "d d-1" and rank == 2:
            shape = (4, 3)
        try:
            return isinstance(jnp.zeros(shape), annotation)
        except Exception:  # jaxtyping rejects the string itself
            return None

    verdicts = [accepts(r) for r in range(5)]
    if ours is None:  # variadic, or not a string jaxtyping reads: no rank claimed
        assert verdicts.count(True) != 1 or None in verdicts
    else:
        assert verdicts == [r == len(ours) for r in range(5)], verdicts


PROGRAM = textwrap.dedent('''\
    import jax
    from jax.sharding import PartitionSpec as P
    from jaxtyping import Array, Float

    def project(x: Float[Array, "batch embed"], w: Float[Array, "embed 512"]):
        h = jax.lax.with_sharding_constraint(x, P("data", None, None))
        return h @ w
    ''')


def test_a_spec_longer_than_the_annotated_rank_is_found_without_a_caller(jax8):
    from jax_snippets import run_snippets
    [f] = [f for f in check_source(PROGRAM) if f.severity == "error"]
    assert (f.code, f.row) == ("SC103", 6) and "rank 2" in f.message
    run = PROGRAM + textwrap.dedent('''
        mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
        import jax.numpy as jnp
        x, w = jnp.zeros((8, 16)), jnp.zeros((16, 512))
        assert isinstance(x, Float[Array, "batch embed"])
        try:
            with jax.set_mesh(mesh):
                jax.jit(project)(x, w)
            RESULT = "ok"
        except (ValueError, AssertionError) as e:
            RESULT = type(e).__name__
        ''')
    (res,) = run_snippets([run])
    assert res["status"] == "ok", res
    assert res["result"] in ("ValueError", "AssertionError")


def test_what_the_annotation_leaves_open_gives_no_finding():
    src = textwrap.dedent('''\
        import jax
        from jax.sharding import PartitionSpec as P
        from jaxtyping import Array, Float, Int

        def body(x: Float[Array, "b d"], ids: Int[Array, "*batch"]):
            y = jax.lax.psum(x, "i")            # varying axes unknown: no invariant-psum claim
            z = jax.lax.with_sharding_constraint(ids, P("data", None, None))  # rank unknown
            return jax.lax.with_sharding_constraint(y, P("data", "model"))
        ''')
    assert [f.code for f in check_source(src)] == []


def test_a_caller_in_view_wins_over_the_annotation(jax8):
    src = PROGRAM + textwrap.dedent('''
        import jax.numpy as jnp
        auto = (jax.sharding.AxisType.Auto,) * 2
        mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=auto)
        with jax.set_mesh(mesh):
            out = project(jnp.zeros((8, 16, 4)), jnp.zeros((4, 512)))
        ''')
    # the call passes a rank-3 array: the spec fits it (the annotation is not checked here)
    assert [f.code for f in check_source(src) if f.severity == "error"] == []
    from jax_snippets import run_snippets
    (res,) = run_snippets([src + "RESULT = repr(out.shape)\n"])
    assert res["status"] == "ok" and res["result"] == "(8, 16, 512)", res
