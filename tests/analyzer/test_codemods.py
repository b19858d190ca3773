"""SC401's import moves (``analyzer/codemods.py``): ``jax.experimental.shard_map`` and
``jax.experimental.pjit`` rewritten to ``jax.shard_map`` / ``jax.jit`` with every use
of the name, in one fix. Each fixed program runs under JAX 0.10 on 8 CPU devices, without
a DeprecationWarning; where a rewrite cannot cover every use, there is no fix."""

import textwrap

import pytest

from jax_snippets import run_snippets
from shardcheck.analyzer.engine import check_source
from shardcheck.check.fixes import apply_to_text


def _fixed(src: str, unsafe: bool = False) -> str:
    found = check_source(src, "x.py")
    chosen = [f for f in found if f.fix and (unsafe or f.fix.applicability == "safe")]
    return apply_to_text(src, chosen)[0]


SHARD_MAP = textwrap.dedent('''\
    from functools import partial

    import jax
    import jax.numpy as jnp
    from jax.experimental.shard_map import shard_map
    from jax.sharding import PartitionSpec as P

    mesh = jax.make_mesh((8,), ("data",))
    x = jax.device_put(jnp.ones((8,)), jax.NamedSharding(mesh, P("data")))
    y = shard_map(lambda b: b * 2, mesh, P("data"), P("data"), check_rep=False)(x)


    @partial(shard_map, mesh=mesh, in_specs=P("data"), out_specs=P(), check_rep=True)
    def total(b):
        return jax.lax.psum(b.sum(), "data")


    RESULT = [float(y.sum()), float(total(x))]
''')

ALIASED = textwrap.dedent('''\
    import jax.numpy as jnp
    from jax.experimental.shard_map import shard_map as smap  # the old module
    from jax.sharding import Mesh, PartitionSpec as P
    import numpy as np

    mesh = Mesh(np.array(__import__("jax").devices()), ("i",))
    f = smap(lambda b: b + 1, mesh=mesh, in_specs=(P("i"),), out_specs=P("i"))
    RESULT = [float(f(jnp.arange(8.0)).sum())]
''')

PJIT = textwrap.dedent('''\
    import jax
    import jax.numpy as jnp
    from jax.experimental.pjit import pjit
    from jax.sharding import NamedSharding, PartitionSpec as P


    @pjit
    def double(a):
        return a * 2


    mesh = jax.make_mesh((8,), ("data",))
    g = pjit(lambda a: a + 1, None, None, static_argnums=())
    h = pjit(lambda a: a * 3, in_shardings=(NamedSharding(mesh, P("data")),),
             out_shardings=jax.sharding.NamedSharding(mesh, P("data")))
    RESULT = [float(double(jnp.ones((8,))).sum()), float(g(jnp.ones((8,))).sum()),
              float(h(jnp.ones((8,))).sum())]
''')

# pjit resolving a PartitionSpec against `with mesh:`: the move is unsafe, and JAX shows
# why (with the mesh context rewritten too, jax.jit raises where pjit moved the argument)
PJIT_SPECS = textwrap.dedent('''\
    import jax
    import jax.numpy as jnp
    from jax.experimental.pjit import pjit
    from jax.sharding import AxisType, Mesh, PartitionSpec as P

    mesh = Mesh(jax.devices(), ("data",), axis_types=(AxisType.Auto,))
    with mesh:
        y = pjit(lambda a: a * 2, in_shardings=P("data"), out_shardings=P("data"))(jnp.ones((8,)))
    RESULT = [float(y.sum())]
''')


def _run(programs):
    results = run_snippets(programs)
    for code, r in zip(programs, results):
        assert r["status"] == "ok", (code, r)
    return [r["result"] for r in results]


def test_moves_run_under_jax_with_the_same_results():
    fixed = [_fixed(SHARD_MAP), _fixed(ALIASED), _fixed(PJIT)]
    assert "jax.experimental" not in fixed[0] and "check_rep" not in fixed[0]
    assert "y = jax.shard_map(lambda b: b * 2, mesh=mesh, in_specs=P(\"data\"), " \
           "out_specs=P(\"data\"), check_vma=False)(x)" in fixed[0]
    assert "@partial(jax.shard_map, mesh=mesh" in fixed[0]
    assert fixed[1].startswith("import jax.numpy as jnp\nimport jax  # the old module\n")
    assert "f = jax.shard_map(lambda b: b + 1, mesh=mesh" in fixed[1]
    assert "@jax.jit\n" in fixed[2] and "pjit" not in fixed[2]
    assert "h = jax.jit(lambda a: a * 3, in_shardings=(NamedSharding(mesh, P(\"data\")),)," in fixed[2]
    assert "jax.jit(lambda a: a + 1, in_shardings=None, out_shardings=None, static_argnums=())" in fixed[2]
    # each fixed program runs (snippets turn DeprecationWarning into an error), with the
    # numbers the original gives
    before = _run([SHARD_MAP.replace("from jax.experimental.shard_map import shard_map",
                                     "import warnings; warnings.simplefilter('ignore')\n"
                                     "from jax.experimental.shard_map import shard_map")])
    after = _run(fixed)
    assert after[0] == before[0]
    assert after[1] == [36.0] and after[2] == [16.0, 16.0, 24.0]
    assert not [f for f in check_source(fixed[0], "x.py") if f.code == "SC401"]


def test_pjit_with_partition_specs_is_an_unsafe_move():
    found = [f for f in check_source(PJIT_SPECS, "x.py") if f.code == "SC401"]
    move = next(f for f in found if f.fix and len(f.fix.edits()) > 1)
    assert move.fix.applicability == "unsafe" and "review the placements" in move.fix.message
    assert "pjit(" in _fixed(PJIT_SPECS)  # not applied without --unsafe-fixes
    fixed = _fixed(PJIT_SPECS, unsafe=True)
    assert "jax.jit(lambda a: a * 2, in_shardings=P(\"data\"), out_shardings=P(\"data\"))" in fixed
    assert "with jax.set_mesh(mesh):" in fixed
    old, new = run_snippets([
        "import warnings; warnings.simplefilter('ignore')\n" + PJIT_SPECS,
        fixed])
    assert old["status"] == "ok" and old["result"] == [16.0]
    assert new["status"] == "error" and "does not match the sharding" in new["error"]


def test_a_sharding_the_source_does_not_spell_out_keeps_the_move_unsafe():
    src = ("import jax\nfrom jax.experimental.pjit import pjit\nfrom jax.sharding import NamedSharding\n"
           "s = NamedSharding(jax.make_mesh((8,), ('data',)), jax.P('data'))\n"
           "f = pjit(lambda a: a, in_shardings=s)\n")
    move = next(f for f in check_source(src, "x.py") if f.fix and len(f.fix.edits()) > 1)
    assert move.fix.applicability == "unsafe"


def test_axis_resources_keywords_are_renamed():
    # pjit lost them before JAX 0.10 (TypeError: unexpected keyword 'in_axis_resources')
    src = ("import jax\nfrom jax.experimental.pjit import pjit\n"
           "f = pjit(lambda a: a, in_axis_resources=None, out_axis_resources=None)\n")
    assert _fixed(src).endswith("f = jax.jit(lambda a: a, in_shardings=None, out_shardings=None)\n")


def test_a_name_imported_beside_others_is_moved_alone():
    src = ("import jax\nfrom jax.experimental.pjit import (pjit,\n    PartitionSpec)  # both\n"
           "f = pjit(lambda a: a)\n")
    assert _fixed(src) == ("import jax\nfrom jax.experimental.pjit import (PartitionSpec)  # both\n"
                           "f = jax.jit(lambda a: a)\n")


@pytest.mark.parametrize("src", [
    # passed as a value
    "from jax.experimental.shard_map import shard_map\nops = [shard_map]\n",
    # rebound
    "from jax.experimental.shard_map import shard_map\nshard_map = None\n",
    # starred arguments
    "from jax.experimental.shard_map import shard_map\nshard_map(*args)\n",
    # imported inside a block
    "try:\n    from jax.experimental.shard_map import shard_map\nexcept ImportError:\n    pass\n",
    # `jax` names something else
    "from jax.experimental.pjit import pjit\njax = 1\nf = pjit(lambda a: a)\n",
    # a positional argument to partial after the function
    "from functools import partial\nimport jax\nfrom jax.experimental.pjit import pjit\n"
    "f = partial(pjit, lambda a: a)\n",
])
def test_no_move_where_a_use_cannot_be_rewritten(src):
    moves = [f for f in check_source(src, "x.py") if f.fix and len(f.fix.edits()) > 1
             or f.fix and "import" in f.fix.message]
    assert moves == []


def test_a_crlf_file_stays_crlf_including_the_lines_a_move_inserts():
    """libcst writes a node's code with LF, and the move joins its import lines with LF:
    in a CRLF file each is written CRLF (a mixed file is what editors and git flag)."""
    src = ("from jax.experimental.shard_map import shard_map, foo\n"
           "f = shard_map(lambda b: b, None,\n"
           "              None, None, check_rep=False)\n")
    fixed = _fixed(src)
    assert fixed.count("\n") == src.count("\n") + 1  # `import jax` is inserted
    assert _fixed(src.replace("\n", "\r\n")) == fixed.replace("\n", "\r\n")
