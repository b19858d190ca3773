"""``shardcheck specs``: the sharding map. Each program's sites are pinned, and the
placements among them are compared with what JAX itself reports for the placed arrays
(``.sharding.spec`` of every leaf, run on 8 CPU devices)."""

from __future__ import annotations

import json
import pathlib
import re
import textwrap

import libcst as cst
import pytest

from shardcheck.analyzer.sitemap import sharding_sites
from test_cli_check import run

ROOT = pathlib.Path(__file__).resolve().parents[2]
PROGRAMS = ROOT / "tests" / "specs"
MESH = "Mesh('data': 2, 'model': 4, axis_types=(Explicit, Explicit))"


def _sites(path: pathlib.Path):
    return sharding_sites(path.read_text(), str(path))


def _table(path: pathlib.Path):
    return [(s.row, s.kind, s.path, s.spec) for s in _sites(path)]


def test_tree_of_shardings_is_one_site_per_leaf():
    assert _table(PROGRAMS / "tree_shardings.py") == [
        (11, "NamedSharding", "['b']", "P('model')"),  # the lambda, leaf by leaf
        (11, "NamedSharding", "['w']", "P(None, 'model')"),
        (13, "device_put", "['b']", "P('model')"),
        (13, "device_put", "['w']", "P(None, 'model')"),
        (14, "device_put", "['b']", "P('model')"),  # jax.tree.map(partial(NamedSharding, mesh), ...)
        (14, "device_put", "['w']", "P(None, 'model')"),
        (14, "NamedSharding", "['b']", "P('model')"),
        (14, "NamedSharding", "['w']", "P(None, 'model')"),
        (15, "device_put", "[0]", "P('data', None)"),
        (15, "device_put", "[1]", "P()"),
        (16, "NamedSharding", "", "P('data', None)"),
        (16, "NamedSharding", "", "P()"),
        (17, "NamedSharding", "", "P('data')"),
        (24, "jit in_shardings", "[0]['b']", "P('model')"),
        (24, "jit in_shardings", "[0]['w']", "P(None, 'model')"),
        (24, "jit in_shardings", "[1]", "P('data')"),
        (24, "jit out_shardings", "", "P()"),
        (25, "NamedSharding", "", "P()"),
    ]
    known = [s for s in _sites(PROGRAMS / "tree_shardings.py") if s.spec is not None]
    assert {s.mesh for s in known} == {MESH}


def test_dicts_built_by_dict_and_splices_are_trees_of_specs():
    """``dict(k=v)``, ``dict(base, k=v)``, ``dict(pairs)``, ``dict(**base)`` and
    ``{**base, k: v}``: later keys override earlier ones in place, as in Python."""
    sites = [(s.row, s.path, s.spec) for s in _sites(PROGRAMS / "dict_trees.py")
             if s.kind == "device_put"]
    assert sites == [
        (13, "['b']", "P()"), (13, "['w']", "P(None, 'model')"),
        (14, "['b']", "P('data')"), (14, "['w']", "P('data', None)"),
        (15, "['b']", "P('model')"), (15, "['w']", "P('model', None)"),
        (17, "['b']", "P('model')"), (17, "['w']", "P(None, 'model')"),
    ]


def test_a_dict_of_a_mapping_not_written_out_stays_unknown(tmp_path):
    src = tmp_path / "m.py"
    src.write_text(textwrap.dedent("""
        import jax
        from jax.sharding import PartitionSpec as P
        specs = dict(load_specs(), b=P())
        pairs = dict(zip(names, specs))
        spliced = {**load_specs(), "b": P()}
        jax.jit(f, out_shardings=specs)
        jax.jit(f, out_shardings=pairs)
        jax.jit(f, out_shardings=spliced)
        """))
    assert [(s.row, s.spec) for s in _sites(src)] == [(7, None), (8, None), (9, None)]


def test_constraints_shard_map_and_unknown_sources():
    sites = _sites(PROGRAMS / "constraints.py")
    assert [(s.row, s.function, s.kind, s.path, s.spec) for s in sites] == [
        (10, "<module>", "device_put", "", "P('data', None)"),  # a bare spec: the context mesh
        (11, "<module>", "reshard", "", "P('data', 'model')"),
        (12, "<module>", "with_sharding_constraint", "", "P('data', 'model')"),
        (13, "<module>", "reshard", "", "P(None, 'model')"),
        (14, "<module>", "device_put", "", "P('model', None)"),
        (14, "<module>", "NamedSharding", "", "P('model', None)"),
        (15, "<module>", "device_put", "", "P(None, ('data', 'model'))"),
        (15, "<module>", "NamedSharding", "", "P(None, ('data', 'model'))"),
        (22, "<module>", "shard_map in_specs", "[0]", "P('data', 'model')"),
        (22, "<module>", "shard_map in_specs", "[1]", "P('model', None)"),
        (22, "<module>", "shard_map out_specs", "", "P('data', None)"),
        (32, "constrain_from_config", "with_sharding_constraint", "", None),
        (36, "library_helper", "with_sharding_constraint", "", None),
        (36, "library_helper", "NamedSharding", "", None),
    ]
    assert all(s.mesh == MESH for s in sites if s.spec is not None)
    reasons = {(s.row, s.kind): s.reason for s in sites if s.spec is None}
    assert "`cfg.activation_spec`" in reasons[(32, "with_sharding_constraint")]
    assert "`spec` is a parameter of `library_helper`" in reasons[(36, "NamedSharding")]
    assert all(s.reason is None for s in sites if s.spec is not None)


def _assigned_names(path: pathlib.Path):
    """Row -> the name a module-level assignment binds on that row."""
    module = cst.parse_module(path.read_text())
    wrapper = cst.metadata.MetadataWrapper(module)
    positions = wrapper.resolve(cst.metadata.PositionProvider)
    out = {}
    for stmt in wrapper.module.body:
        if isinstance(stmt, cst.SimpleStatementLine) and isinstance(stmt.body[0], cst.Assign):
            target = stmt.body[0].targets[0].target
            if isinstance(target, cst.Name):
                out[positions[stmt].start.line] = target.value
    return out


_REPORT = textwrap.dedent('''
    import jax
    RESULT = {}
    for _name in NAMES:
        _leaves, _ = jax.tree_util.tree_flatten_with_path(globals()[_name])
        for _path, _leaf in _leaves:
            _sharding = _leaf if isinstance(_leaf, jax.sharding.NamedSharding) else _leaf.sharding
            RESULT[_name + jax.tree_util.keystr(_path)] = repr(_sharding.spec)
''')


def _as_written(jax_repr: str) -> str:
    """JAX's ``PartitionSpec('x',)`` as the map (and the source) writes it: ``P('x')``."""
    return re.sub(r",\)$", ")", jax_repr.replace("PartitionSpec(", "P(", 1))


@pytest.mark.parametrize("program", ["tree_shardings.py", "constraints.py", "spec_arithmetic.py",
                                     "dict_trees.py"])
def test_placements_agree_with_jax(program, jax8):
    from jax_snippets import run_snippets
    path = PROGRAMS / program
    names = _assigned_names(path)
    placed = [s for s in _sites(path) if s.row in names and (
        s.kind in ("device_put", "with_sharding_constraint", "reshard")
        or (s.kind == "NamedSharding" and s.path))]  # a tree of NamedShardings, leaf by leaf
    assert len(placed) >= 4
    code = path.read_text() + f"\nNAMES = {sorted({names[s.row] for s in placed})!r}\n" + _REPORT
    (res,) = run_snippets([code])
    assert res["status"] == "ok", res
    for s in placed:
        assert s.spec == _as_written(res["result"][names[s.row] + s.path]), s


_REPORT_TYPED = textwrap.dedent('''
    import jax
    RESULT = {}
    for _name in NAMES:
        _v = globals()[_name]
        _spec = tuple(_v.sharding.spec)
        _spec += (None,) * (_v.ndim - len(_spec))  # P('data',) is P('data', None) on rank 2
        RESULT[_name] = [repr(jax.sharding.PartitionSpec(*_spec)), str(jax.typeof(_v))]
''')


def test_the_layout_of_another_array_is_the_one_jax_gives(jax8):
    """``x.sharding`` and ``jax.typeof(x).sharding(.spec)``: the spec one entry per dim
    (as typeof writes it; a concrete array's own ``.sharding.spec`` may leave trailing
    Nones out, the same sharding), and the placed arrays' types, as JAX gives them."""
    from jax_snippets import run_snippets

    from shardcheck.analyzer.inferred_types import infer_types
    path = PROGRAMS / "same_layout.py"
    # each placed array, and the site that places it (in `follow` and `doubled`: the
    # helper's own site, resolved from the one call of each)
    placed = {"like_x": (12, "device_put"), "like_t": (13, "device_put"),
              "as_typed": (15, "reshard"), "as_typed_t": (16, "reshard"),
              "followed": (20, "reshard"), "twice": (29, "reshard"),
              "as_typed_auto": (38, "with_sharding_constraint")}
    code = path.read_text() + f"\nNAMES = {sorted(placed)!r}\n" + _REPORT_TYPED
    (res,) = run_snippets([code])
    assert res["status"] == "ok", res
    sites = {(s.row, s.kind): s for s in _sites(path)}
    for name, at in placed.items():
        assert sites[at].spec == _as_written(res["result"][name][0]), (name, sites[at])
    types = {t.name: t.type for t in infer_types(path.read_text(), str(path))}
    for name in ("like_x", "like_t", "twice", "followed", "as_typed", "as_typed_t"):
        assert types[name] == res["result"][name][1], name


def test_a_layout_read_where_jax_gives_none_stays_unknown(tmp_path):
    """A traced array has no ``.sharding`` (JAX raises AttributeError, pointing to
    jax.typeof), and inside shard_map typeof's mesh has Manual axes: both stay unknown."""
    prog = tmp_path / "p.py"
    prog.write_text(textwrap.dedent('''
        import jax
        import jax.numpy as jnp
        from jax.sharding import NamedSharding, PartitionSpec as P
        mesh = jax.make_mesh((2, 4), ("data", "model"))
        x = jax.device_put(jnp.zeros((8, 16)), NamedSharding(mesh, P("data")))

        @jax.jit
        def traced(a):
            return jax.device_put(a * 2, a.sharding)

        y = traced(x)

        def body(a):
            return jax.reshard(a, jax.typeof(a).sharding.spec)

        z = jax.shard_map(body, mesh=mesh, in_specs=P("data"), out_specs=P("data"))(x)
    '''))
    sites = {s.row: s for s in _sites(prog) if s.kind in ("device_put", "reshard")}
    assert sites[10].spec is None and sites[15].spec is None, sites


def test_flax_logical_sites_carry_their_logical_names():
    sites = _sites(PROGRAMS / "flax_logical.py")
    assert [(s.row, s.function, s.kind, s.logical, s.spec) for s in sites] == [
        (13, "MlpBlock.__call__", "logical constraint", ("batch", "length", "embed"), None),
        (14, "MlpBlock.__call__", "logical partitioning", ("embed", "mlp"), None),
        (24, "Dense.__call__", "partitioning", None, "P(None, 'model')"),  # mesh axes
        (33, "nnx_inits", "partitioning", None, "P('data', 'model')"),
        (34, "nnx_inits", "logical partitioning", ("embed", "mlp"), None),  # not mesh axes
    ]
    logical = [s for s in sites if s.logical is not None]
    assert all("logical" in (s.reason or "") for s in logical)
    assert sites[3].mesh == MESH and all(s.reason is None for s in sites if s.spec is not None)


def test_a_site_keeps_its_spec_only_where_every_context_agrees(tmp_path):
    src = tmp_path / "ctx.py"
    src.write_text(textwrap.dedent('''
        import jax
        from jax.sharding import AxisType, PartitionSpec as P
        m1 = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Explicit,) * 2)
        m2 = jax.make_mesh((8,), ("data",), axis_types=(AxisType.Explicit,))

        def same(x):
            return jax.lax.with_sharding_constraint(x, P("data"))

        def differs(x, spec):
            return jax.lax.with_sharding_constraint(x, spec)

        with jax.set_mesh(m1):
            same(1)
            differs(1, P("data"))
        with jax.set_mesh(m2):
            same(2)
            differs(2, P(None))
    '''))
    by_function = {s.function: s for s in _sites(src)}
    assert by_function["same"].spec == "P('data')" and by_function["same"].mesh is None
    assert by_function["differs"].spec is None
    assert "different or unknown values" in (by_function["differs"].reason or "")


def test_a_namesake_of_a_sharding_api_is_not_a_site(tmp_path):
    src = tmp_path / "namesake.py"
    src.write_text("def with_sharding_constraint(x, spec):\n    return x\n\n"
                   "def f(x):\n    return with_sharding_constraint(x, ('data',))\n")
    assert _sites(src) == []


def test_sharding_calls_in_functions_never_analysed_are_listed_as_not_reached():
    from shardcheck.analyzer.sitemap import _FunctionsOfCalls
    module = cst.parse_module("import jax\n"
                              "x = jax.device_put(1, s)\n"
                              "def f(x):\n"
                              "    y = jax.device_put(x, jax.devices()[0])\n"  # a device
                              "    step = jax.jit(g, in_shardings=s, out_shardings=None)\n"
                              "    return jax.lax.with_sharding_constraint(x, s)\n")
    f = module.body[2]
    for analysed, expected in (({f}, []), (set(), ["jit in_shardings", "with_sharding_constraint"])):
        visitor = _FunctionsOfCalls(analysed)
        visitor.walk(module)
        assert [kind for _, kind in visitor.unreached_site_calls] == expected
        assert sorted(set(visitor.of.values())) == ["<module>", "f"]


def test_cli_text_groups_by_file_and_function():
    code, out, _ = run(["specs", "tests/specs/constraints.py"], ROOT)
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "tests/specs/constraints.py"
    assert lines[1] == "  <module>"
    assert lines[2] == f"    10:5  device_put: P('data', None) on {MESH}"
    assert "  library_helper" in lines
    assert ("    36:48  NamedSharding: unknown (`spec` is a parameter of `library_helper`, which "
            "no call in view passes)") in lines
    assert lines[-1] == "12 of 14 sharding sites resolved to mesh axes (86%)"


def test_cli_json_site_fields():
    code, out, _ = run(["specs", "--format", "json", "tests/specs/tree_shardings.py",
                        "tests/specs/flax_logical.py"], ROOT)
    assert code == 0
    data = json.loads(out)
    assert (data["resolved"], data["total"]) == (20, 23)
    first = data["sites"][2]
    assert first == {"filename": "tests/specs/tree_shardings.py",
                     "location": {"row": 13, "column": 10}, "function": "<module>",
                     "kind": "device_put", "path": "['b']", "spec": "P('model')",
                     "logical": None, "mesh": MESH, "reason": None, "via": None,
                     "assumes": None}
    logical = data["sites"][-5]
    assert logical["logical"] == ["batch", "length", "embed"] and logical["spec"] is None
    assert logical["mesh"] is None and logical["reason"]


def test_cli_bad_input_exits_2_without_traceback(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("x = (\n")
    code, _, err = run(["specs", str(bad)], tmp_path)
    assert code == 2 and "does not parse" in err and "Traceback" not in err
    code, _, err = run(["specs", str(tmp_path / "missing.py")], tmp_path)
    assert code == 2 and "no such file" in err
    code, out, _ = run(["specs", "--format", "json", str(tmp_path)], tmp_path)
    assert code == 2 and json.loads(out)["total"] == 0  # the unparsable file is skipped


def test_help_lists_specs():
    code, out, _ = run(["--help"], ROOT)
    assert code == 0 and "specs" in out
    code, out, _ = run(["specs", "--help"], ROOT)
    assert code == 0 and "--format" in out


def test_readme_examples_are_the_real_output():
    section = (ROOT / "docs" / "sharding-map.md").read_text(encoding="utf-8")
    text = section[section.index("$ shardcheck specs"):]
    text = text[:text.index("```")]
    command, *shown = text.strip().splitlines()
    code, out, _ = run(command.split()[2:], ROOT)
    assert code == 0
    real = out.splitlines()
    assert [line for line in shown if line.strip() != "..."] == [l for l in real if l in shown]
    assert shown[0] == real[0] and shown[-1] == real[-1] and len(shown) >= 10
    example = json.loads(section[section.index("```json") + 7:section.rindex("```")])
    code, out, _ = run(["specs", "--format", "json", example["filename"]], ROOT)
    assert example in json.loads(out)["sites"]


def test_logical_sites_with_rules_in_view_resolve_to_the_mesh_axes_jax_shards_on(jax8):
    from jax_snippets import run_snippets
    path = PROGRAMS / "flax_rules.py"
    sites = _sites(path)
    assert [(s.row, s.kind, s.logical, s.spec) for s in sites] == [
        (10, "logical constraint", ("batch", "embed"), "P('data', 'model')"),
        (12, "logical constraint", ("embed", "mlp"), "P('model', None)"),
    ]
    code = path.read_text() + (
        "\nRESULT = {'acts': repr(acts.sharding.spec), 'hidden': repr(hidden.sharding.spec)}\n")
    (res,) = run_snippets([code])
    assert res["status"] == "ok", res
    assert [_as_written(res["result"][k]) for k in ("acts", "hidden")] == [s.spec for s in sites]


def test_helper_sites_are_listed_at_each_call_with_the_spec_jax_gives(jax8):
    from jax_snippets import run_snippets
    path = PROGRAMS / "helpers.py"
    sites = _sites(path)
    own = [(s.row, s.kind, s.spec) for s in sites if s.via is None]
    assert own == [(13, "device_put", None), (13, "NamedSharding", None),
                   (17, "logical constraint", None), (28, "NamedSharding", None),
                   (31, "device_put", "P('data')"), (32, "device_put", "P(None, 'model')")]
    via = {(s.row, s.kind): (s.via, s.spec, s.logical) for s in sites if s.via is not None}
    assert via == {  # each call resolves the site; the helper alone cannot
        (20, "NamedSharding"): ("place", "P('data', None)", None),
        (20, "device_put"): ("place", "P('data', None)", None),
        (21, "NamedSharding"): ("place", "P('model', None)", None),
        (21, "device_put"): ("place", "P('model', None)", None),
        (23, "logical constraint"): ("shard_logical", "P('data', 'model')", ("batch", "embed")),
        (24, "logical constraint"): ("shard_logical", "P('data', None)", ("batch", None)),
        (31, "NamedSharding"): ("named", "P('data')", None),  # a *args parameter
        (32, "NamedSharding"): ("named", "P(None, 'model')", None),
    }
    code = path.read_text() + "\nRESULT = {k: repr(v.sharding.spec) for k, v in dict(" \
        "acts=acts, weights=weights, hidden=hidden, logits=logits, bias=bias, " \
        "table=table).items()}\n"
    (res,) = run_snippets([code])
    assert res["status"] == "ok", res
    real = {k: _as_written(v) for k, v in res["result"].items()}
    assert real == {"acts": "P('data', None)", "weights": "P('model', None)",
                    "hidden": "P('data', 'model')", "logits": "P('data', None)",
                    "bias": "P('data')", "table": "P(None, 'model')"}


def test_a_helper_site_that_resolves_on_its_own_is_not_repeated_at_its_calls(tmp_path):
    src = tmp_path / "m.py"
    src.write_text(textwrap.dedent('''\
        import jax
        from jax.sharding import NamedSharding, PartitionSpec as P
        mesh = jax.make_mesh((2, 4), ("data", "model"))
        def batch_sharding():
            return NamedSharding(mesh, P("data"))
        a = batch_sharding()
        b = batch_sharding()
        '''))
    assert [(s.row, s.spec, s.via) for s in _sites(src)] == [(5, "P('data')", None)]


def test_cli_counts_sites_at_calls_apart():
    code, out, _ = run(["specs", "tests/specs/helpers.py"], ROOT)
    assert code == 0
    assert "    23:14  logical constraint via shard_logical: P('data', 'model') from " \
        "('batch', 'embed') on Mesh('data': 2, 'model': 4, axis_types=(Auto, Auto))" in out
    assert out.splitlines()[-1] == ("2 of 6 sharding sites resolved to mesh axes (33%); "
                                    "8 more resolved at calls of helpers")
    code, out, _ = run(["specs", "--format", "json", "tests/specs/helpers.py"], ROOT)
    data = json.loads(out)
    assert (data["resolved"], data["total"], data["resolved_at_calls"]) == (2, 6, 8)


def test_config_objects_read_as_their_declared_defaults_and_say_so(jax8):
    from jax_snippets import run_snippets
    path = PROGRAMS / "config_objects.py"
    code, out, _ = run(["specs", "--format", "json", str(path)], ROOT)
    assert code == 0
    got = {(s["location"]["row"], s["kind"]): (s["spec"], s["assumes"])
           for s in json.loads(out)["sites"]}
    assert got == {
        (30, "device_put"): ("P('data')", ["TrainConfig.mesh", "TrainConfig.data_sharding"]),
        (30, "NamedSharding"): ("P('data')", ["TrainConfig.mesh", "TrainConfig.data_sharding"]),
        (38, "device_put"): ("P(None, 'model')", ["TrainConfig.mesh", "TrainConfig.hidden"]),
        (38, "NamedSharding"): ("P(None, 'model')", ["TrainConfig.mesh", "TrainConfig.hidden"]),
        (46, "device_put"): (None, None),  # Holder sets its spec per instance
        (46, "NamedSharding"): (None, None),
        (51, "device_put"): ("P('model')", None),  # made in view: no assumption
        (51, "NamedSharding"): ("P('model')", None),
    }
    # what JAX places with the defaults the map assumed
    program = path.read_text() + textwrap.dedent("""
        layer = Layer()
        layer.config = TrainConfig()
        RESULT = {"batch": repr(place_batch(TrainConfig(), jnp.zeros((8, 4))).sharding.spec),
                  "w": repr(layer.place(jnp.zeros((4, 8))).sharding.spec),
                  "moved": repr(moved.sharding.spec)}
        """)
    (res,) = run_snippets([program])
    assert res["status"] == "ok", res
    assert {k: _as_written(v) for k, v in res["result"].items()} == {
        "batch": got[(30, "device_put")][0], "w": got[(38, "device_put")][0],
        "moved": got[(51, "device_put")][0]}


def test_check_never_assumes_config_defaults(tmp_path):
    """The same defaults would make this an error (an axis the default mesh lacks); check
    leaves the config's fields unknown, since a caller may pass another config."""
    src = tmp_path / "m.py"
    src.write_text(textwrap.dedent('''\
        import dataclasses
        import jax
        from jax.sharding import NamedSharding, PartitionSpec as P

        @dataclasses.dataclass
        class Config:
            axes: tuple = ("data",)
            spec: tuple = ("model",)

        def place(config: Config, x):
            mesh = jax.make_mesh((8,), config.axes)
            return jax.device_put(x, NamedSharding(mesh, P(config.spec)))
        '''))
    code, out, _ = run(["check", "--no-cache", str(src)], tmp_path)
    assert code == 0 and "SC101" not in out
    site = _sites_with_defaults(src)[0]
    assert (site.kind, site.spec, site.assumes) == ("device_put", "P('model')",
                                                    ("Config.axes", "Config.spec"))


def _sites_with_defaults(path):
    from shardcheck.analyzer.config import Config
    return sharding_sites(path.read_text(), str(path), Config(assume_defaults=True))


def test_a_function_is_analysed_again_when_a_later_call_brings_its_arguments(tmp_path):
    """``shard`` is first reached with no caller in view, then from ``main`` with the mesh:
    the map (and check) see the mesh the call passes."""
    src = tmp_path / "m.py"
    src.write_text(textwrap.dedent('''\
        import jax
        from jax.sharding import NamedSharding, PartitionSpec as P

        def shard(mesh, x):
            return jax.device_put(x, NamedSharding(mesh, P("data")))

        def main():
            mesh = jax.make_mesh((2, 4), ("data", "model"))
            return shard(mesh, 1)
        '''))
    assert {(s.row, s.mesh) for s in _sites(src)} == {
        (5, "Mesh('data': 2, 'model': 4, axis_types=(Explicit, Explicit))")}


def test_flax_partitioning_spellings_resolve_like_linen(jax8):
    from jax_snippets import run_snippets
    path = PROGRAMS / "partitioning_alias.py"
    sites = _sites(path)
    assert [(s.row, s.logical, s.spec) for s in sites] == [
        (11, ("batch", "embed"), "P('data', 'model')"),
        (14, ("batch", None), "P('model', None)"),
    ]
    code = path.read_text() + (
        "\nRESULT = {'acts': repr(acts.sharding.spec), 'moved': repr(moved.sharding.spec)}\n")
    (res,) = run_snippets([code])
    assert res["status"] == "ok", res
    assert [_as_written(res["result"][k]) for k in ("acts", "moved")] == [s.spec for s in sites]


def test_t5x_param_with_axes_resolves_as_flax_does(jax8):
    from jax_snippets import run_snippets

    from shardcheck.check.config import from_table
    rules = [["embed", "data"], ["mlp", "model"]]
    path = PROGRAMS / "param_with_axes.py"
    cfg = from_table({"logical": {"rules": rules}}, root=str(PROGRAMS))
    sites = sharding_sites(path.read_text(), str(path), cfg)
    assert [(s.row, s.kind, s.logical, s.spec) for s in sites] == [
        (10, "logical partitioning", ("embed", "mlp"), "P('data', 'model')"),
        (12, "logical partitioning", ("mlp", "embed"), "P('model', 'data')"),
    ]
    code = path.read_text() + textwrap.dedent(f"""
        import jax, jax.numpy as jnp
        RULES = {[tuple(r) for r in rules]!r}
        with nn_partitioning.axis_rules(RULES):
            variables = Mlp().init(jax.random.key(0), jnp.zeros((2, 16)))
        names = nn_partitioning.get_axis_names(variables["params_axes"])
        RESULT = {{k: repr(nn.logical_to_mesh_axes(v, RULES)) for k, v in names.items()}}
        """)
    (res,) = run_snippets([code])
    assert res["status"] == "ok", res
    assert {k: _as_written(v) for k, v in res["result"].items()} == {
        "wi": sites[0].spec, "wo": sites[1].spec}


def test_an_ml_collections_config_is_read_as_its_get_config_makes_it(jax8):
    """Flax's examples pass an ml_collections config from an absl flag: the map reads the
    script's ``configs/default.py`` ``get_config()`` (its rules for the models too) and says
    so. JAX, run with that config, places and shards exactly so."""
    from jax_snippets import run_snippets
    where = PROGRAMS / "mlc_script"
    code, out, _ = run(["specs", "--format", "json", str(where)], ROOT)
    assert code == 0
    got = {(pathlib.Path(s["filename"]).name, s["location"]["row"], s["kind"]):
           (s["spec"], s["logical"]) for s in json.loads(out)["sites"]}
    assert got == {
        ("mlc_models.py", 12, "logical partitioning"): ("P(None, 'model')", ["embed", "mlp"]),
        ("mlc_models.py", 13, "logical partitioning"): ("P('model', None)", ["mlp", "embed"]),
        ("mlc_train.py", 17, "NamedSharding"): ("P('data')", None),
        ("mlc_train.py", 18, "device_put"): ("P('data')", None),
        ("mlc_train.py", 19, "NamedSharding"): ("P(None, 'model')", None),
        ("mlc_train.py", 19, "device_put"): ("P(None, 'model')", None),
    }
    assumes = {s["location"]["row"]: s["assumes"] for s in json.loads(out)["sites"]}
    config = "tests/specs/mlc_script/configs/default.py:get_config()"
    assert f"{config}.logical_axis_rules" in assumes[12]
    assert f"{config}.data_sharding" in assumes[17] and f"{config}.mesh_axes" in assumes[17]
    program = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(where)!r})
        import jax, jax.numpy as jnp
        import flax.linen as nn
        from configs.default import get_config
        import mlc_models, mlc_train
        config = get_config()
        batch, hidden, _ = mlc_train.train_and_evaluate(config, "/tmp")
        # Linen's boxed parameters constrain inside init: an Auto mesh, as Flax's examples use
        mesh = jax.make_mesh(config.mesh_shape, config.mesh_axes,
                             axis_types=(jax.sharding.AxisType.Auto,) * 2)
        model = mlc_models.Mlp(config.mlp_dim)
        x = jnp.zeros((8, config.emb_dim))
        with jax.set_mesh(mesh), nn.logical_axis_rules(config.logical_axis_rules):
            abstract = jax.eval_shape(model.init, jax.random.key(0), x)
            shardings = nn.logical_to_mesh_sharding(nn.get_partition_spec(abstract), mesh,
                                                    config.logical_axis_rules)
            params = jax.jit(model.init, out_shardings=shardings)(jax.random.key(0), x)
        kernels = params["params"]
        RESULT = {{"batch": repr(batch.sharding.spec), "hidden": repr(hidden.sharding.spec),
                   "k0": repr(kernels["Dense_0"]["kernel"].value.sharding.spec),
                   "k1": repr(kernels["Dense_1"]["kernel"].value.sharding.spec)}}
        """)
    (res,) = run_snippets([program])
    assert res["status"] == "ok", res
    assert {k: _as_written(v) for k, v in res["result"].items()} == {
        "batch": got[("mlc_train.py", 18, "device_put")][0],
        "hidden": got[("mlc_train.py", 19, "device_put")][0],
        "k0": got[("mlc_models.py", 12, "logical partitioning")][0],
        "k1": got[("mlc_models.py", 13, "logical partitioning")][0]}


def test_check_reads_no_python_config(tmp_path):
    """``check`` never assumes a config's defaults: an axis the config's mesh lacks is no
    finding there, since a command line may pass another config."""
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "default.py").write_text(
        "def get_config():\n    config = object()\n    config.data_sharding = ['nope']\n"
        "    config.logical_axis_rules = [['embed', 'nope']]\n    return config\n")
    (tmp_path / "train.py").write_text(textwrap.dedent("""
        import jax, ml_collections
        from jax.sharding import NamedSharding, PartitionSpec as P
        def main(config: ml_collections.ConfigDict):
            mesh = jax.make_mesh((2, 4), ('data', 'model'))
            return NamedSharding(mesh, P(config.data_sharding))
        """))
    code, out, _ = run(["check", str(tmp_path)], tmp_path)
    assert code == 0, out
    code, out, _ = run(["specs", "--format", "json", str(tmp_path)], tmp_path)
    (site,) = json.loads(out)["sites"]
    assert site["spec"] == "P('nope')" and site["assumes"]


def test_regex_partition_rules_are_a_site_per_rule_in_the_order_jax_applies_them(jax8):
    """EasyLM's ``match_partition_rules(rules, params)`` idiom: each rule is a leaf of the
    site, in the table's order. Every parameter JAX places gets the spec of the first
    rule (in the map's order) whose pattern matches its path."""
    from jax_snippets import run_snippets
    from shardcheck.analyzer.config import Config
    path = PROGRAMS / "rule_tables.py"
    as_specs = Config(assume_defaults=True)  # as `shardcheck specs` runs
    rows = [(s.kind, s.path, s.spec, s.mesh)
            for s in sharding_sites(path.read_text(), str(path), as_specs)]
    assert rows == [("jit out_shardings", f"[matching {p!r}]", spec, MESH) for p, spec in (
        ("embedding", "P('model', None)"), ("attention/(wq|wk)", "P(None, 'model')"),
        ("mlp/w1", "P('data', 'model')"), (".*", "P(None)"))]
    program = path.read_text() + textwrap.dedent("""
        RESULT = {"/".join(str(getattr(k, "key", k)) for k in p): repr(x.sharding.spec)
                  for p, x in jax.tree_util.tree_flatten_with_path(params)[0]}
        """)
    (res,) = run_snippets([program])
    assert res["status"] == "ok", res
    rules = [(re.search(r"\[matching '(.*)'\]", p).group(1), spec) for _, p, spec, _ in rows]
    expected = {leaf: next(spec for pattern, spec in rules if re.search(pattern, leaf))
                for leaf in res["result"]}
    assert len(expected) == 7
    assert {k: _as_written(v) for k, v in res["result"].items()} == expected


def test_a_rule_table_that_is_not_literal_pairs_stays_unknown(tmp_path):
    src = tmp_path / "rules.py"
    src.write_text(textwrap.dedent("""
        import re
        import jax
        def match(rules, params):
            def get(name, leaf):
                for rule, ps in rules:
                    if re.search(rule, name):
                        return ps
            return jax.tree_util.tree_map_with_path(get, params)
        def init(key):
            return {}
        mesh = jax.make_mesh((2, 4), ("data", "model"))
        with jax.set_mesh(mesh):
            params = jax.jit(init, out_shardings=match(load_rules(), {}))(None)
        """))
    from shardcheck.analyzer.config import Config
    (site,) = sharding_sites(src.read_text(), str(src), Config(assume_defaults=True))
    assert site.spec is None and site.path == ""


def test_an_imported_match_partition_rules_is_read_by_name(tmp_path):
    """A library's copy of the idiom is not in view: its name and a literal table are
    enough; anything else it is given stays unknown."""
    from shardcheck.analyzer.config import Config
    src = tmp_path / "train.py"
    src.write_text(textwrap.dedent("""
        import jax
        from jax.sharding import PartitionSpec as P
        from somelib.sharding import match_partition_rules
        RULES = ((".*/kernel", P("fsdp", "tp")), (".*", P()))
        def init(key):
            return {}
        mesh = jax.make_mesh((2, 4), ("fsdp", "tp"))
        with jax.set_mesh(mesh):
            a = jax.jit(init, out_shardings=match_partition_rules(RULES, {}))(None)
            b = jax.jit(init, out_shardings=match_partition_rules(load(), {}))(None)
        """))
    sites = sharding_sites(src.read_text(), str(src), Config(assume_defaults=True))
    assert [(s.row, s.path, s.spec) for s in sites] == [
        (10, "[matching '.*/kernel']", "P('fsdp', 'tp')"), (10, "[matching '.*']", "P()"),
        (11, "", None)]



def test_an_internal_error_in_one_file_is_said_and_the_others_are_mapped(tmp_path, monkeypatch):
    from shardcheck.analyzer import sitemap
    real = sitemap.sharding_sites

    def broken(source, path, *a):
        if path.endswith("a.py"):
            raise KeyError("boom")
        return real(source, path, *a)

    monkeypatch.setattr(sitemap, "sharding_sites", broken)
    spec = "import jax\nfrom jax.sharding import PartitionSpec as P\ns = jax.jit(lambda x: x, out_shardings=P('d'))\n"
    (tmp_path / "a.py").write_text(spec)
    (tmp_path / "b.py").write_text(spec)
    # in this process, where the patch holds (a spawned worker imports the real one)
    code, out, err = run(["specs", "--format", "json", "-j", "1", str(tmp_path)], tmp_path)
    assert code == 2 and "Traceback" not in err
    assert "a.py: not analysed: internal error (KeyError: 'boom')" in err
    assert {s["filename"].rsplit("/", 1)[-1] for s in json.loads(out)["sites"]} == {"b.py"}


VARIANT_MODEL = textwrap.dedent('''\
    import flax.linen as nn


    def block(x):
        x = nn.with_logical_constraint(x, ("batch", "length", "embed"))
        return nn.with_logical_constraint(x * 2, ("batch", "length", "mlp"))
    ''')


def test_specs_maps_the_sites_under_one_config_variant(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "model.py").write_text(VARIANT_MODEL)
    (tmp_path / "configs" / "models").mkdir(parents=True)
    (tmp_path / "configs" / "base.yml").write_text(
        "mesh_axes: [data, fsdp, tensor]\n"
        "logical_axis_rules: [[batch, data], [length, null], [embed, fsdp], [mlp, tensor]]\n")
    (tmp_path / "configs" / "models" / "long.yml").write_text(
        'base_config: "../base.yml"\noverride_logical_axis_rules: [[length, fsdp], [embed, null]]\n')
    code, out, _ = run(["specs", "--config", "configs/base.yml", "src"], tmp_path)
    assert code == 0 and "logical axis rules: 4 from configs/base.yml" in out
    assert "P('data', None, 'fsdp') from ('batch', 'length', 'embed')" in out
    code, out, _ = run(["specs", "--config", "configs/models/long.yml", "src"], tmp_path)
    assert code == 0, out
    assert "P('data', 'fsdp', None) from ('batch', 'length', 'embed')" in out  # overridden
    assert "P('data', 'fsdp', 'tensor') from ('batch', 'length', 'mlp')" in out  # inherited
    code, _, err = run(["specs", "--config", "configs/none.yml", "src"], tmp_path)
    assert code == 2 and "config error: configs/none.yml: cannot read this config file" in err
    (tmp_path / "configs" / "empty.yml").write_text("mesh_axes: [data]\n")
    code, _, err = run(["specs", "--config", "configs/empty.yml", "src"], tmp_path)
    assert code == 2 and "sets no logical_axis_rules" in err


def test_a_config_mesh_read_as_its_none_default_keeps_the_spec_written(jax8):
    """The map reads `cfg: Config` as Config's defaults, whose `mesh` is None until the
    run sets it: the NamedSharding would raise there, and the site was listed as unknown
    ("an entry is not a known axis name"). It is the spec written, as JAX makes it once
    the mesh is set."""
    from jax_snippets import run_snippets
    path = PROGRAMS / "config_mesh_default.py"
    [site] = [s for s in _sites_with_defaults(path) if s.function == "logits_sharding"]
    (res,) = run_snippets([path.read_text() + "\nRESULT = SPEC\n"])
    assert res["status"] == "ok", res
    assert site.spec == _as_written(res["result"]) == "P('data', None, ('y', 'z'))"
    assert "Config.mesh" in site.assumes
