"""Correct code from sglang-jax that got error-level findings: a value judged in a
branch Python does not run (``x if mesh is not None else None``), a list the code
fills with ``.append`` before ``*args`` and ``tuple(specs)``, and a removed API tried
inside ``try: ... except AttributeError:`` in a module another file calls, and a
helper called with ``mesh=None`` that raises (``if mesh is None: raise ...``) before
the ``NamedSharding`` after it. Each program runs under JAX as written; its twin with
the guard or the append taken away still gets the finding, and fails under JAX."""

import textwrap

from shardcheck.analyzer.engine import check_source

GUARDED_EXPRESSION = textwrap.dedent('''\
    import jax
    from jax.sharding import NamedSharding, PartitionSpec as P


    class Embed:
        def __init__(self, n, mesh=None):
            self.sharding = NamedSharding(mesh, P("tensor", None)) if mesh is not None else None


    Embed(4)
    ''')
# the guard the other way round: NamedSharding(None, ...) runs
UNGUARDED_EXPRESSION = GUARDED_EXPRESSION.replace("if mesh is not None", "if mesh is None")

APPENDED = textwrap.dedent('''\
    import jax
    import jax.numpy as jnp
    from jax.sharding import NamedSharding, PartitionSpec as P

    mesh = jax.make_mesh((2,), ("x",))
    rows = NamedSharding(mesh, P("x"))


    def body(a, b):
        return a + b


    def run(a, b):
        args = [a]
        specs = [P("x")]
        args.append(b)
        specs.append(P("x"))
        op = jax.shard_map(body, mesh=mesh, in_specs=tuple(specs), out_specs=P("x"))
        return op(*args)


    RESULT = run(jax.device_put(jnp.zeros(4), rows), jax.device_put(jnp.zeros(4), rows)).shape
    ''')
# without the spec's append: one spec for two arguments, JAX's arity error
NOT_APPENDED = APPENDED.replace('    specs.append(P("x"))\n', "")

RUNNER = textwrap.dedent('''\
    import jax


    class Runner:
        def __init__(self, mesh):
            self.mesh = mesh

        def forward(self):
            try:
                ctx = jax.sharding.use_mesh(self.mesh)
            except AttributeError:
                ctx = jax.set_mesh(self.mesh)
            with ctx:
                return 1
    ''')
BENCH = textwrap.dedent('''\
    import jax
    from runner import Runner


    def main():
        mesh = jax.make_mesh((1,), ("x",))
        return Runner(mesh).forward()


    RESULT = main()
    ''')


# a helper that refuses None before it reaches NamedSharding, called with None by a test
REFUSES_NONE = textwrap.dedent('''\
    import jax
    from jax.sharding import NamedSharding, PartitionSpec as P


    def make(mesh, spec):
        return NamedSharding(mesh, spec)


    def init(mesh):
        if mesh is None:
            raise ValueError("needs a mesh")
        return make(mesh, P("data"))


    def build(mesh=None):
        return init(mesh)


    try:
        build()
    except ValueError as e:
        RESULT = str(e)
    ''')
# the same helper without the test: NamedSharding gets the None
ACCEPTS_NONE = REFUSES_NONE.replace(
    '    if mesh is None:\n        raise ValueError("needs a mesh")\n', "")


def _errors(code):
    return [(f.code, f.row) for f in check_source(code, "m.py") if f.severity == "error"]


def test_a_value_in_the_branch_python_does_not_run_is_not_judged():
    assert _errors(GUARDED_EXPRESSION) == []
    assert _errors(UNGUARDED_EXPRESSION) == [("SC311", 7)]


def test_a_list_filled_by_append_is_not_counted_by_its_first_entries():
    assert _errors(APPENDED) == []
    assert [c for c, _ in _errors(NOT_APPENDED)] == ["SC203"]


def test_what_follows_a_raise_the_arguments_take_is_not_judged():
    assert _errors(REFUSES_NONE) == []
    assert _errors(ACCEPTS_NONE) == [("SC311", 6)]


def test_a_removed_api_tried_in_a_module_another_file_calls_is_guarded_there(tmp_path,
                                                                             concise_check):
    (tmp_path / "pyproject.toml").write_text("[tool.shardcheck]\n")
    (tmp_path / "runner.py").write_text(RUNNER)
    (tmp_path / "bench.py").write_text(BENCH)
    assert concise_check(tmp_path, "SC401", ".") == []
    (tmp_path / "runner.py").write_text(RUNNER.replace(
        "        try:\n            ctx = jax.sharding.use_mesh(self.mesh)\n"
        "        except AttributeError:\n            ctx = jax.set_mesh(self.mesh)\n",
        "        ctx = jax.sharding.use_mesh(self.mesh)\n"))
    (found,) = concise_check(tmp_path, "SC401", ".")
    assert found.startswith("runner.py:9:") and " error: " in found


def test_jax_runs_the_correct_programs_and_rejects_their_twins(jax8, tmp_path):
    from jax_snippets import run_programs, run_snippets
    ok_expr, bad_expr, ok_append, bad_append, refused, accepted = run_snippets(
        [GUARDED_EXPRESSION, UNGUARDED_EXPRESSION, APPENDED, NOT_APPENDED, REFUSES_NONE,
         ACCEPTS_NONE])
    assert refused["status"] == "ok" and refused["result"] == "needs a mesh", refused
    assert accepted["status"] == "error" and accepted["type"] in ("TypeError", "AttributeError"), \
        accepted
    assert ok_expr["status"] == "ok" and ok_append["status"] == "ok", (ok_expr, ok_append)
    assert bad_expr["status"] == "error", bad_expr
    assert bad_append["status"] == "error" and "shard_map in_specs" in bad_append["error"], bad_append
    (tmp_path / "runner.py").write_text(RUNNER)
    (tmp_path / "bench.py").write_text(BENCH.replace("RESULT = main()", "print(main())"))
    (ran,) = run_programs([str(tmp_path / "bench.py")])
    assert ran["status"] == "ok" and ran["stdout"].strip() == "1", ran
