"""``shardcheck specs`` on the idioms real codebases use to spell their layouts: NNX
filter tables, rule dataclasses read through ``getattr``, specs built with arithmetic,
parameters' defaults, a YAML run config, placements onto one device. Each program's
sites are pinned and compared with what JAX (and flax) do with it on 8 CPU devices."""

from __future__ import annotations

import json
import re
import textwrap

from shardcheck.analyzer.sitemap import sharding_sites
from test_cli_check import run
from test_specs import MESH, PROGRAMS, _as_written


def test_nnx_filter_tables_are_a_site_per_filter_in_the_order_flax_applies_them(jax8):
    """``nnx.StateSharding({filter: sharding})`` (or a list of pairs) and
    ``nnx.prefix(module, {filter: sharding})``: each filter is a leaf of the site, in the
    table's order. Every variable flax places gets the sharding of the first filter (in
    the map's order, evaluated by flax) that matches it."""
    from jax_snippets import run_snippets
    from shardcheck.analyzer.config import Config
    path = PROGRAMS / "nnx_filters.py"
    sites = [s for s in sharding_sites(path.read_text(), str(path), Config(assume_defaults=True))
             if s.kind.startswith("jit")]
    by_function = {}
    for s in sites:
        by_function.setdefault(s.function, []).append(
            (re.fullmatch(r"(?:\[0\])?\[matching (.*)\]", s.path).group(1), s.spec))
    assert all(s.mesh == MESH for s in sites)
    assert by_function == {
        "place": [('nnx.All(nnx.PathContains("up"), nnx.PathContains("kernel"))', "P(None, 'model')"),
                  ('nnx.PathContains("up")', "P('model')"),
                  ('nnx.All(nnx.PathContains("down"), nnx.PathContains("kernel"))',
                   "P('model', None)"),
                  ("...", "P()")],
        "place_pairs": [('nnx.PathContains("bias")', "P('data')"), ("nnx.Param", "P(None, 'data')")],
        "build": [('nnx.PathContains("kernel")', "P('data', None)"), ("...", "P()")]}
    program = path.read_text() + textwrap.dedent(f"""
        from flax.nnx import filterlib
        TABLES = {{"place": model, "place_pairs": pair_model, "build": built}}
        RESULT = {{}}
        for fn, rules in {by_function!r}.items():
            for p, var in nnx.to_flat_state(nnx.state(TABLES[fn])):
                first = next(spec for f, spec in rules
                             if filterlib.to_predicate(eval(f))(p, var))
                RESULT[fn + "/" + "/".join(map(str, p))] = [first, repr(var[...].sharding.spec)]
        """)
    (res,) = run_snippets([program])
    assert res["status"] == "ok", res
    assert len(res["result"]) == 12
    for leaf, (mapped, placed) in res["result"].items():
        assert mapped == _as_written(placed), leaf


def test_a_filter_table_that_is_not_written_inline_stays_unknown(tmp_path):
    from shardcheck.analyzer.config import Config
    src = tmp_path / "nnx_tables.py"
    src.write_text(textwrap.dedent("""
        import jax
        from flax import nnx
        from jax.sharding import PartitionSpec as P
        mesh = jax.make_mesh((2, 4), ("data", "model"))
        a = nnx.StateSharding(load_table())
        b = nnx.prefix(model, lambda path, x: P("data"))
        c = nnx.prefix(model, [(nnx.Param, P("data"))])  # flax raises: not a mapping
        @nnx.jit(in_shardings=(a, b, c))
        def f(x, y, z):
            pass
        """))
    sites = sharding_sites(src.read_text(), str(src), Config(assume_defaults=True))
    assert [(s.path, s.spec) for s in sites] == [("[0]", None), ("[1]", None), ("[2]", None)]


def _without_trailing_none(spec: str) -> str:
    """``P('x', None, None)`` as ``P('x')``: JAX reports a placed array's spec without
    its trailing unsharded dims, which mean the same sharding."""
    while spec.endswith(", None)"):
        spec = spec[: -len(", None)")] + ")"
    return "P()" if spec == "P(None)" else spec


def test_rules_dataclass_read_through_getattr_resolves_as_jax_places(jax8):
    """The jax-llm-examples idiom: ``field(default_factory=ShardingRules)``, and
    ``jax.tree.map(lambda a: getattr(rules, a) if a is not None else None, logical)``.
    Each site's spec is the one JAX gives the array when the functions run with the
    configs' defaults."""
    from jax_snippets import run_snippets
    from shardcheck.analyzer.config import Config
    path = PROGRAMS / "rules_dataclass.py"
    sites = sharding_sites(path.read_text(), str(path), Config(assume_defaults=True))
    mapped = {(s.function, s.kind): s.spec for s in sites}
    assert mapped == {
        ("attention_input", "with_sharding_constraint"): "P('x', ('y', 'z'), None, None)",
        ("place_tokens", "device_put"): "P('x', None)",
        ("embed_rows", "device_put"): "P('y', None)",
        ("scale_heads", "shard_map in_specs"): "P('x', ('y', 'z'))",
        ("scale_heads", "shard_map out_specs"): "P('x', ('y', 'z'))"}
    assert all(s.assumes == ("Config.rules",) for s in sites), [s.assumes for s in sites]
    program = path.read_text() + textwrap.dedent("""
        import jax.numpy as jnp
        from jax.sharding import AxisType
        mesh = jax.make_mesh((2, 2, 2), ("x", "y", "z"), axis_types=(AxisType.Auto,) * 3)
        cfg = Config()
        with jax.set_mesh(mesh):
            RESULT = {name: repr(out.sharding.spec) for name, out in {
                "attention_input": jax.jit(lambda q: attention_input(q, cfg))(
                    jnp.zeros((4, 8, 16, 2))),
                "place_tokens": place_tokens(jnp.zeros((4, 16), jnp.int32), cfg),
                "embed_rows": embed_rows(jnp.zeros((8, 16)), cfg),
                "scale_heads": scale_heads(jnp.zeros((4, 8)), cfg)}.items()}
        """)
    (res,) = run_snippets([program])
    assert res["status"] == "ok", res
    assert len(res["result"]) == 4
    for (function, kind), spec in mapped.items():
        if kind != "shard_map in_specs":
            assert _without_trailing_none(spec) == \
                _without_trailing_none(_as_written(res["result"][function])), function


def test_tree_map_keeps_none_as_an_empty_subtree_and_honours_is_leaf(jax8):
    """JAX never passes ``None`` to the mapped function (an empty subtree) unless
    ``is_leaf`` makes it a leaf; the map resolves the first and leaves the second
    unknown rather than guess what ``is_leaf`` selects."""
    from jax_snippets import run_snippets
    from shardcheck.analyzer.config import Config
    src = textwrap.dedent("""
        import dataclasses
        import jax
        import jax.numpy as jnp
        from jax.sharding import PartitionSpec as P

        @dataclasses.dataclass
        class Rules:
            batch: str = "data"
            embed: str = "model"

        R = Rules()
        mesh = jax.make_mesh((2, 4), ("data", "model"))
        jax.set_mesh(mesh)
        x = jnp.zeros((8, 8))
        a = jax.device_put(x, P(*jax.tree.map(lambda n: getattr(R, n), ("batch", None))))
        b = jax.device_put(x, P(*jax.tree.map(lambda n: getattr(R, n), (None, ("embed",)))))
        c = jax.device_put(x, P(*jax.tree.map(lambda n: None if n is None else getattr(R, n),
                                              ("embed", None), is_leaf=lambda v: v is None)))
        """)
    sites = sharding_sites(src, "tree_map_none.py", Config(assume_defaults=True))
    assert [(s.row, s.spec) for s in sites] == [
        (16, "P('data', None)"), (17, "P(None, 'model')"), (18, None)]  # JAX's ('model',)
    (res,) = run_snippets([src + "RESULT = [repr(v.sharding.spec) for v in (a, b, c)]\n"])
    assert res["status"] == "ok", res
    assert [_as_written(r) for r in res["result"]] == [
        "P('data', None)", "P(None, 'model')", "P('model', None)"]


def test_getattr_and_truth_tests_read_like_attributes_where_python_is_sure(tmp_path):
    from shardcheck.analyzer.config import Config
    src = textwrap.dedent("""
        import dataclasses
        import jax
        from jax.sharding import PartitionSpec as P

        @dataclasses.dataclass
        class Shd:
            act: tuple = P("data", None)

        @dataclasses.dataclass
        class Sized:
            act: tuple = P("data", None)
            def __len__(self):
                return 0

        def f(x, shd: Shd, sized: Sized, name: str):
            a = jax.lax.with_sharding_constraint(x, getattr(shd, "act"))
            b = jax.lax.with_sharding_constraint(x, shd.act if shd else P())
            c = jax.lax.with_sharding_constraint(x, sized.act if sized else P("model"))
            d = jax.lax.with_sharding_constraint(x, getattr(shd, name))
            e = jax.lax.with_sharding_constraint(x, P("data") if not shd else P("model"))
            return a, b, c, d, e

        def shadowed(x, shd: Shd):
            getattr = lambda o, n: P("model")
            return jax.lax.with_sharding_constraint(x, getattr(shd, "act"))
        """)
    sites = sharding_sites(src, "truth.py", Config(assume_defaults=True))
    assert [(s.row, s.spec) for s in sites] == [
        (17, "P('data', None)"), (18, "P('data', None)"),
        (19, None),  # __len__: its truth is not known
        (20, None), (21, "P('model')"), (26, "P('model')")]
    # `check` assumes no default and still checks both branches of a conditional
    checked = sharding_sites(src, "truth.py")
    assert all(s.spec is None for s in checked if s.row in (17, 18, 19, 21))


def test_an_axis_typo_in_spec_arithmetic_is_reported_where_jax_raises(tmp_path, jax8):
    """``check`` reads ``P(...) + (...)`` as JAX builds it: a name the mesh lacks in the
    added part is SC101, and JAX raises on the same line."""
    from jax_snippets import run_snippets
    src = (PROGRAMS / "spec_arithmetic.py").read_text().replace(
        'base + ("model",)', 'base + ("modle",)')
    (tmp_path / "typo.py").write_text(src)
    line = next(i for i, text in enumerate(src.splitlines(), 1) if '("modle",)' in text)
    code, out, _ = run(["check", "--no-cache", "typo.py"], tmp_path)
    assert code == 1 and f"typo.py:{line}:" in out and "SC101" in out and "modle" in out, out
    (res,) = run_snippets([src + "RESULT = 1\n"])
    assert res["status"] != "ok" and "modle" in str(res), res


RUN_CONFIG_YAML = """\
# A MaxText-shaped run config: the script's loader (not in view) makes its config object.
mesh_axes: ['data', 'model']
mesh_shape: [2, 4]
data_sharding: [['data', 'model']]
embed_sharding: ['model', null]
logical_axis_rules: [['batch', 'data'], ['embed', 'model']]
dataset: {name: 'c4', split: 'train'}
"""


def test_a_yaml_run_config_is_read_as_the_config_object_maxtext_style(tmp_path, jax8):
    """A parameter called ``config`` (or ``cfg``), and ``self.config`` stored from one,
    is the run's config as the project's YAML config file (the one its logical rules come
    from) makes it; the map says which keys it read. JAX, run with a config loaded from
    that file, places exactly so."""
    from jax_snippets import run_snippets
    where = tmp_path / "yaml_script"  # not under the repository: its own discovery would find it
    (where / "configs").mkdir(parents=True)
    (where / "configs" / "base.yml").write_text(RUN_CONFIG_YAML)
    (where / "yaml_train.py").write_text((PROGRAMS / "yaml_script" / "yaml_train.py").read_text())
    code, out, _ = run(["specs", "--format", "json", "yaml_script"], tmp_path)
    assert code == 0, out
    sites = json.loads(out)["sites"]
    got = {(s["location"]["row"], s["kind"]): (s["spec"], s["mesh"]) for s in sites}
    assert got == {(14, "NamedSharding"): ("P(('data', 'model'))", MESH),
                   (15, "device_put"): ("P(('data', 'model'))", MESH),
                   (24, "device_put"): ("P('model', None)", MESH),
                   (24, "NamedSharding"): ("P('model', None)", MESH),
                   # annotated with the loader's dynamic class, called with its placeholder
                   (42, "device_put"): ("P(('data', 'model'))", MESH),
                   (42, "NamedSharding"): ("P(('data', 'model'))", MESH)}
    owner = "configs/base.yml:config"  # relative to the root: the checked directory
    assert {tuple(s["assumes"]) for s in sites} == {
        tuple(f"{owner}.{k}" for k in ("mesh_shape", "mesh_axes", "data_sharding")),
        tuple(f"{owner}.{k}" for k in ("mesh_shape", "mesh_axes", "embed_sharding"))}
    # the script named from a directory that does not hold it: its own folder's config
    (tmp_path / "elsewhere").mkdir()
    code, out, _ = run(["specs", "--format", "json", str(where / "yaml_train.py")],
                       tmp_path / "elsewhere")
    assert code == 0, out
    assert {(s["location"]["row"], s["kind"]): (s["spec"], s["mesh"])
            for s in json.loads(out)["sites"]} == got
    program = textwrap.dedent(f"""
        import sys, types, yaml
        import jax.numpy as jnp
        sys.path.insert(0, {str(where)!r})
        import yaml_train
        with open({str(where / "configs" / "base.yml")!r}) as f:
            config = types.SimpleNamespace(**yaml.safe_load(f))
        yaml_train.CONFIG = yaml_train.HyperParameters(vars(config))  # as the loader does
        RESULT = [repr(yaml_train.shard_batch(config, jnp.zeros((8, 4))).sharding.spec),
                  repr(yaml_train.Trainer(config).place_embedding(
                      jnp.zeros((16, 4))).sharding.spec),
                  repr(yaml_train.main(jnp.zeros((8, 4))).sharding.spec)]
        """)
    (res,) = run_snippets([program])
    assert res["status"] == "ok", res
    assert [_as_written(r) for r in res["result"]] == [
        got[(15, "device_put")][0], got[(24, "device_put")][0], got[(42, "device_put")][0]]


def test_a_config_parameter_is_read_from_yaml_only_in_the_map(tmp_path):
    """``check`` assumes nothing of a ``config`` parameter; in the map, a key the file
    lacks (or holds a mapping) stays unknown, and a ``config`` stored in ``__init__`` from
    a parameter annotated with a source class is that class's instance, not the YAML."""
    from shardcheck.analyzer.config import Config
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "base.yml").write_text(
        "logical_axis_rules: [['batch', 'data']]\nact: ['data']\nnested: {a: 1}\n")
    src = tmp_path / "t.py"
    src.write_text(textwrap.dedent("""
        import dataclasses
        import jax
        from jax.sharding import PartitionSpec as P

        @dataclasses.dataclass
        class ModelConfig:
            act: tuple = ("model",)

        def f(x, config):
            a = jax.lax.with_sharding_constraint(x, P(*config.act))
            b = jax.lax.with_sharding_constraint(x, P(*config.missing))
            c = jax.lax.with_sharding_constraint(x, P(*config.nested))
            return a, b, c

        class Model:
            def __init__(self, config: ModelConfig):
                self.config = config

            def __call__(self, x):
                return jax.lax.with_sharding_constraint(x, P(*self.config.act))
        """))
    from shardcheck.analyzer.logical_config import discover
    found = discover(str(tmp_path))
    assert found is not None and dict(found.fields) == {
        "logical_axis_rules": (("batch", "data"),), "act": ("data",)}  # no mapping
    specs = sharding_sites(src.read_text(), str(src),
                           Config(root=str(tmp_path), logical=found, assume_defaults=True))
    assert [(s.row, s.spec) for s in specs] == [
        (11, "P('data')"), (12, None), (13, None), (21, "P('model')")]
    checked = sharding_sites(src.read_text(), str(src), Config(root=str(tmp_path), logical=found))
    assert [(s.row, s.spec) for s in checked] == [(11, None), (12, None), (13, None), (21, None)]


def test_placing_on_one_device_is_not_a_sharding_site(jax8):
    """``device_put`` onto a device (named where it is assigned, or an element of a
    device list) places no sharding over a mesh: JAX gives it a SingleDeviceSharding."""
    from jax_snippets import run_snippets
    src = textwrap.dedent("""
        import jax
        import jax.numpy as jnp
        from jax.sharding import PartitionSpec as P

        def f(x, mesh):
            cpu = jax.local_devices(backend="cpu")[0]
            cpus = jax.devices("cpu")
            a = jax.device_put(x, cpu)
            b = jax.device_put(x, cpus[1])
            c = jax.device_put(x, jax.sharding.NamedSharding(mesh, P("data")))
            return a, b, c
        """)
    from shardcheck.analyzer.config import Config
    sites = sharding_sites(src, "dev.py", Config(assume_defaults=True))  # as `specs` runs
    assert sorted((s.row, s.kind) for s in sites) == [(11, "NamedSharding"), (11, "device_put")]
    (res,) = run_snippets([src + textwrap.dedent("""
        out = f(jnp.zeros((8,)), jax.make_mesh((8,), ("data",)))
        RESULT = [type(v.sharding).__name__ for v in out]
        """)])
    assert res["status"] == "ok", res
    assert res["result"] == ["SingleDeviceSharding", "SingleDeviceSharding", "NamedSharding"]


def test_parameter_defaults_are_read_where_no_caller_is_in_view(jax8):
    """A parameter's declared default (not None, or None where the body fills it in:
    ``if specs is None: specs = factory()``, ``spec = spec or ...``), and ``self.x`` that
    ``__init__`` stores from such a parameter (or from an attribute of one:
    ``config.shd_config``), stand for it where no call is in view, said so; a factory's
    early ``return`` under a branch Python takes is what it returns. JAX, run with those
    defaults, constrains exactly so."""
    from jax_snippets import run_snippets
    from shardcheck.analyzer.config import Config
    path = PROGRAMS / "param_defaults.py"
    sites = sharding_sites(path.read_text(), str(path), Config(assume_defaults=True))
    got = {(s.row, s.kind, s.via): (s.spec, s.assumes) for s in sites}
    assert got == {  # the helper's two callers pass different specs, each assumed
        (22, "with_sharding_constraint", None): (None, ()),
        (31, "with_sharding_constraint", "shard"): (
            "P('data', None, 'model')", ("Block.__init__.shd_config",)),
        (35, "with_sharding_constraint", None): ("P(None, 'model')", ("constrain.spec",)),
        # self.shd_config = config.shd_config: the annotated class's field default
        (48, "with_sharding_constraint", "shard"): ("P('data', 'model')", ("ModelConfig.shd_config",)),
        # None defaults the body fills in from the factory: its "default" and "tensor" returns
        (67, "with_sharding_constraint", None): ("P('data', None, None)", ("Dit.__init__.specs",)),
        (72, "with_sharding_constraint", None): ("P(None, 'model')", ("constrain_or.spec",))}
    assert sites[0].reason.startswith("set by the caller: resolved at 2 calls in view")
    checked = sharding_sites(path.read_text(), str(path))
    assert [(s.row, s.spec) for s in checked] == [(22, None), (35, None), (67, None), (72, None)]
    program = path.read_text() + textwrap.dedent("""
        import jax.numpy as jnp
        from jax.sharding import AxisType
        mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
        with jax.set_mesh(mesh):
            a = jax.jit(Block(16))(jnp.zeros((4, 8, 16)))
            b = jax.jit(constrain)(jnp.zeros((8, 16)))
            c = jax.jit(Mlp(ModelConfig()))(jnp.zeros((8, 16)))
            d = jax.jit(Dit())(jnp.zeros((4, 8, 16)))
            e = jax.jit(constrain_or)(jnp.zeros((8, 16)))
        RESULT = [repr(v.sharding.spec) for v in (a, b, c, d, e)]
        """)
    (res,) = run_snippets([program])
    assert res["status"] == "ok", res
    assert [_as_written(r) for r in res["result"]] == [_without_trailing_none(got[key][0]) for key in [
        (31, "with_sharding_constraint", "shard"), (35, "with_sharding_constraint", None),
        (48, "with_sharding_constraint", "shard"), (67, "with_sharding_constraint", None),
        (72, "with_sharding_constraint", None)]]


def test_branches_python_decides_from_constants_take_the_branch_jax_runs(jax8):
    """``if`` and ``x if t else y`` whose test folds to a constant (``//``, ``>=``,
    ``and``, ``or``, ``not`` over module constants and defaults) take Python's branch in
    the map; a test decided at run time leaves the site unknown and says why, and JAX,
    run both ways, places differently. ``check`` reads both branches (each has its
    findings) and takes the value of the branch Python runs, as JAX does."""
    from jax_snippets import run_snippets
    from shardcheck.analyzer.config import Config
    path = PROGRAMS / "branches.py"
    sites = sharding_sites(path.read_text(), str(path), Config(assume_defaults=True))
    assert [(s.function, s.kind, s.via, s.spec) for s in sites] == [
        ("place_batch", "NamedSharding", None, "P()"),
        ("place_batch", "NamedSharding", None, "P('data')"),
        ("place_batch", "device_put", None, "P('data')"),
        ("place_rows", "device_put", None, None),
        ("place_rows", "NamedSharding", None, None),
        ("constrain", "with_sharding_constraint", None, None),
        ("layer", "with_sharding_constraint", "constrain", "P('data', None)"),
        ("layer_t", "with_sharding_constraint", "constrain", "P(None, 'data')"),
        ("place_unpacked", "device_put", None, None),
        ("place_unpacked", "NamedSharding", None, None)]
    got = {(s.function, s.kind, s.via): s.spec for s in sites}
    why = {(s.function, s.kind): s.reason for s in sites if s.spec is None}
    assert why[("place_rows", "device_put")].startswith("`spec` is assigned in 2 places")
    assert why[("place_unpacked", "device_put")].startswith(  # unpacked, then set to None
        "P(?, 'model'): entry `rows` is not a known axis name (`rows` is assigned in 2 places")
    assert why[("constrain", "with_sharding_constraint")].startswith(
        "set by the caller: resolved at 2 calls in view")
    checked = {(s.function, s.kind): s.spec for s in sharding_sites(path.read_text(), str(path))}
    # check reads both branches for findings, and takes the value of the one Python runs
    assert checked[("place_batch", "device_put")] == "P('data')"
    program = path.read_text() + textwrap.dedent("""
        import jax.numpy as jnp
        from jax.sharding import AxisType
        mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
        with jax.set_mesh(mesh):
            out = {"place_batch": place_batch(jnp.zeros((8, 4)), mesh),
                   "layer": jax.jit(layer)(jnp.zeros((8, 8))),
                   "layer_t": jax.jit(layer_t)(jnp.zeros((8, 8))),
                   "rows": place_rows(jnp.zeros((8, 8)), mesh, False),
                   "cols": place_rows(jnp.zeros((8, 8)), mesh, True),
                   "unpacked": place_unpacked(jnp.zeros((8, 8)), mesh, 2),
                   "unpacked_none": place_unpacked(jnp.zeros((8, 8)), mesh, 3)}
        RESULT = {k: repr(v.sharding.spec) for k, v in out.items()}
        """)
    (res,) = run_snippets([program])
    assert res["status"] == "ok", res
    placed = {k: _without_trailing_none(_as_written(v)) for k, v in res["result"].items()}
    assert placed["place_batch"] == got[("place_batch", "device_put", None)]
    assert placed["layer"] == _without_trailing_none(got[("layer", "with_sharding_constraint", "constrain")])
    assert placed["layer_t"] == got[("layer_t", "with_sharding_constraint", "constrain")]
    assert placed["rows"] == "P(('data', 'model'))" and placed["cols"] == "P(None, ('data', 'model'))"
    assert placed["unpacked"] == "P('data', 'model')" and placed["unpacked_none"] == "P(None, 'model')"


def test_unknown_reasons_name_where_the_value_comes_from(tmp_path):
    """A tree of a model's parameter specs points at the parameters' own sites; an entry
    of a spec built in a called function is not explained with the caller's names; one
    stored by another function says where it was built; `jax.typeof(x).sharding.spec`
    is x's layout at run time."""
    from shardcheck.analyzer.config import Config
    src = tmp_path / "reasons.py"
    src.write_text(textwrap.dedent("""
        import dataclasses
        import os

        import jax
        from flax import nnx
        from jax.sharding import PartitionSpec as P

        def table(flag):
            fsdp = "data" if flag else None
            return P(fsdp, "model")

        def sharded(model, flag):
            pspecs = nnx.get_partition_spec(nnx.state(model))
            state = jax.lax.with_sharding_constraint(nnx.state(model), pspecs)
            state = jax.lax.with_sharding_constraint(state, table(flag))
            return jax.lax.with_sharding_constraint(state, Rules.make().embed)

        @dataclasses.dataclass
        class Rules:
            embed: tuple

            @staticmethod
            def make():
                fsdp = "data" if os.environ.get("FSDP") else None
                return Rules(P(fsdp, "model"))

        def update(x, y):  # y placed as x is
            return jax.sharding.reshard(y, jax.typeof(x).sharding.spec)
        """))
    sites = sharding_sites(src.read_text(), str(src), Config(assume_defaults=True))
    assert [(s.row, s.spec) for s in sites] == [(15, None), (16, None), (17, None), (29, None)]
    assert sites[3].reason == ("`jax.typeof(x).sharding.spec`: the sharding `x` has when it "
                               "runs, which the analyzer does not know here")
    assert sites[0].reason == ("`pspecs` is assigned from `nnx.get_partition_spec(...)`: a tree "
                               "with one spec per parameter of a model, each listed at the "
                               "parameter's own site")
    assert sites[1].reason == ("P(?, 'model'): built by `table(...)` with an entry that is not "
                               "a known axis name")
    assert sites[2].reason == ("P(?, 'model'): an entry is not a known axis name (the spec is "
                               "built in a function it calls)")


HELPER_RULES_YAML = """\
mesh_axes: ['data', 'fsdp', 'tensor']
logical_axis_rules: [
  ['activation_batch', ['data', 'fsdp']],
  ['activation_length', []],
  ['activation_embed', 'tensor'],
  ['embed', 'fsdp'],
  ['mlp', 'tensor'],
]
shard_mode: "auto"
emb_dim: 8
"""


def test_a_helper_in_another_module_is_listed_at_each_call_as_flax_resolves_it(tmp_path, jax8):
    """A project's ``maybe_shard_with_logical`` helper lives in its own module; a layer
    calls it with names it stores in ``__init__``. Each call lists what the helper's
    sites resolve to there (the helper's own sites stay with its module), and NNX
    parameters declared with ``out_sharding=``/``sharding=`` names are sites, listed at
    each construction of the module that declares them with the names it is passed.
    flax and JAX, under the YAML's rules on a mesh of its axes, shard exactly so."""
    from jax_snippets import run_snippets
    where = tmp_path / "helper_module"  # not under the repository (its discovery)
    (where / "configs").mkdir(parents=True)
    (where / "configs" / "base.yml").write_text(HELPER_RULES_YAML)
    for name in ("shard_utils.py", "layers.py"):
        (where / name).write_text((PROGRAMS / "helper_module" / name).read_text())
    code, out, _ = run(["specs", "--format", "json", "helper_module"], tmp_path)
    assert code == 0, out
    sites = [s for s in json.loads(out)["sites"] if s["filename"].endswith("layers.py")]
    got = {(s["location"]["row"], s["kind"], s["via"]): s["spec"] for s in sites}
    act = "P(('data', 'fsdp'), None, 'tensor')"
    assert got == {(16, "logical partitioning", None): "P('fsdp', 'tensor')",
                   (17, "logical partitioning", None): "P('tensor', 'fsdp')",
                   **{(20, k, "maybe_shard_with_logical"): act
                      for k in ("NamedSharding", "reshard", "with_sharding_constraint")},
                   **{(23, k, "shard_in"): act
                      for k in ("NamedSharding", "reshard", "with_sharding_constraint")},
                   # a module constructed with the sharding of the parameter it declares
                   (28, "partitioning", None): None,
                   (35, "logical partitioning", "Einsum"): "P('fsdp', None)",
                   (36, "logical partitioning", "Einsum"): "P(None, 'fsdp')"}
    assert [s["reason"] for s in sites if s["spec"] is None] == [
        "set by the caller: resolved at 2 calls in view, listed where they are made; here "
        "`sharding` is a parameter of `__init__`"]  # the constructions are the calls
    helper = [s for s in json.loads(out)["sites"] if s["filename"].endswith("shard_utils.py")]
    assert [s["spec"] for s in helper] == [None, None, None]  # decided by each caller
    program = textwrap.dedent(f"""
        import sys, types, warnings, yaml
        import jax
        import jax.numpy as jnp
        from flax import linen as nn, nnx
        from jax.sharding import AxisType
        sys.path.insert(0, {str(where)!r})
        import layers
        with open({str(where / "configs" / "base.yml")!r}) as f:
            config = types.SimpleNamespace(**yaml.safe_load(f))
        rules = [(k, tuple(v) if isinstance(v, list) else v) for k, v in config.logical_axis_rules]
        mesh = jax.make_mesh((2, 2, 2), tuple(config.mesh_axes), axis_types=(AxisType.Auto,) * 3)
        with jax.set_mesh(mesh), nn.logical_axis_rules(rules), warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # sharding=: flax 0.12 warns
            block = layers.MlpBlock(config, mesh, rngs=nnx.Rngs(0))
            act = jax.jit(block.shard_in)(jnp.zeros((4, 2, 8)))
            attention = layers.Attention(config)
        RESULT = [repr(block.wi[...].sharding.spec), repr(block.wo[...].sharding.spec),
                  repr(act.sharding.spec), repr(attention.q.w[...].sharding.spec),
                  repr(attention.o.w[...].sharding.spec)]
        """)
    (res,) = run_snippets([program])
    assert res["status"] == "ok", res
    assert [_as_written(r) for r in res["result"]] == [
        got[(16, "logical partitioning", None)], got[(17, "logical partitioning", None)],
        got[(20, "with_sharding_constraint", "maybe_shard_with_logical")],
        got[(35, "logical partitioning", "Einsum")], got[(36, "logical partitioning", "Einsum")]]


def test_axis_names_kept_as_class_and_enum_constants_resolve_as_jax_reads_them(jax8):
    """``class Axes: BATCH = "data"``, an enum member's ``.value`` and its ``.name``: the
    map reads the declared constant; JAX places on the same axes."""
    from jax_snippets import run_snippets
    from shardcheck.analyzer.config import Config
    path = PROGRAMS / "axis_constants.py"
    sites = [s for s in sharding_sites(path.read_text(), str(path), Config(assume_defaults=True))
             if s.kind == "device_put"]
    assert [s.spec for s in sites] == [
        "P('data', 'model')", "P('data', None)", "P(None, ('data', 'model'))", "P('model')",
        "P(None, 'model')"]
    assert sites[-1].mesh == "Mesh('data': 2, 'model': 4, axis_types=(Explicit, Explicit))"
    (res,) = run_snippets([path.read_text() + "\nRESULT = [repr(v.sharding.spec) for v in (a, b, c, d, e)]\n"])
    assert res["status"] == "ok", res
    assert [_as_written(r) for r in res["result"]] == [s.spec for s in sites]


def test_a_none_default_counts_as_filled_only_where_the_body_fills_it_once_at_its_top():
    """``fills_none``: the spellings of "a call that leaves it None gets v", and what is
    not one (a fill under a branch, a second assignment, a test of another name)."""
    import libcst as cst
    from shardcheck.analyzer.interp.objects import fills_none

    def filled(body: str):
        fdef = cst.parse_module(f"def g(s=None, t=None):\n{textwrap.indent(body, '    ')}").body[0]
        v = fills_none(fdef, "s")
        return None if v is None else cst.Module([]).code_for_node(v)

    assert filled("if s is None:\n    s = make()\nreturn s\n") == "make()"
    assert filled("if s is None: s = make()\n") == "make()"
    assert filled("if not s:\n    s = P('data')\n") == "P('data')"
    assert filled("s = s or P('data')\n") == "P('data')"
    assert filled("s = P('data') if s is None else s\n") == "P('data')"
    assert filled("s: tuple = s or ('data',)\n") == "('data',)"
    assert filled("if flag:\n    if s is None:\n        s = make()\n") is None  # under a branch
    assert filled("if s is None:\n    s = make()\ns = other()\n") is None  # assigned again
    assert filled("if t is None:\n    s = make()\n") is None  # another name's test
    assert filled("if s is None:\n    s = make()\nelse:\n    s = s\n") is None
    assert filled("s = t or P('data')\n") is None


def test_a_spec_given_only_when_its_value_is_there_is_that_spec_assumed(jax8):
    """``None if k_scale is None else P(...)`` (and ``P(...) if s is not None else
    None``) is listed as the spec, assuming the value is there: when it is None there is
    no array to shard. JAX splits the scale by that spec, and places by the other."""
    from jax_snippets import run_snippets
    from shardcheck.analyzer.config import Config
    path = PROGRAMS / "optional_specs.py"
    sites = sharding_sites(path.read_text(), str(path), Config(assume_defaults=True))
    scale = next(s for s in sites if s.kind == "shard_map in_specs" and s.path == "[2]")
    assert (scale.spec, scale.mesh) == ("P('data')", MESH)
    assert "`k_scale` is not None" in scale.assumes
    placed = [s for s in sites if s.kind == "device_put"]
    assert [s.spec for s in placed] == ["P('data', 'model')", "P('data')", "P('model')"]
    assert not any("is not None" in a for s in placed for a in s.assumes)
    # `check` assumes nothing: unknown in attend's own analysis (k_scale is None at one
    # call, an array at the other), P('data') at the call that passes a scale
    checked = sharding_sites(path.read_text(), str(path))
    assert [(s.spec, s.via) for s in checked
            if s.kind == "shard_map in_specs" and s.path == "[2]"] == [(None, None),
                                                                       ("P('data')", "attend")]
    (res,) = run_snippets([path.read_text() + "\nRESULT = [SEEN, repr(s.sharding.spec)]\n"])
    assert res["status"] == "ok", res
    seen, spec = res["result"]
    assert seen == [None, [4]]  # the (8,) scale split over 'data' (2): P('data')
    assert _as_written(spec) == "P('model')"


def test_a_presence_test_of_a_call_is_not_read_as_a_presence(tmp_path):
    """Only a name or attribute chain is "the value that is there": ``None if load() is
    None else spec`` calls ``load()`` again for the spec's value, so it stays unknown."""
    from shardcheck.analyzer.config import Config
    src = textwrap.dedent("""
        import jax
        from jax.sharding import PartitionSpec as P
        mesh = jax.make_mesh((2, 4), ("data", "model"))
        with jax.set_mesh(mesh):
            a = jax.device_put(x, None if scale is None else P("data"))
            b = jax.device_put(x, None if load() is None else P("data"))
        """)
    sites = sharding_sites(src, "m.py", Config(assume_defaults=True))
    assert [(s.row, s.spec, s.assumes) for s in sites] == [
        (6, "P('data')", ("`scale` is not None",)), (7, None, ())]


def test_a_mesh_built_on_either_branch_with_the_same_axes_keeps_its_axes(jax8):
    """Two ``return Mesh(devices, names)`` with the same names: the mesh's axis names are
    known whichever runs (``mesh.axis_names`` read back too), its sizes are not; JAX
    places on those axes."""
    from jax_snippets import run_snippets
    from shardcheck.analyzer.config import Config
    path = PROGRAMS / "mesh_factory.py"
    for config in (Config(assume_defaults=True), Config()):  # the map, and `check` alike
        (site,) = [s for s in sharding_sites(path.read_text(), str(path), config)
                   if s.kind == "NamedSharding"]
        assert (site.spec, site.mesh) == ("P(None, ('x', 'y'))", "Mesh('x': ?, 'y': ?)")
    (res,) = run_snippets([path.read_text() + "\nRESULT = repr(w.sharding.spec)\n"])
    assert res["status"] == "ok", res
    assert _as_written(res["result"]) == site.spec


def test_meshes_that_differ_in_names_or_types_join_to_unknown():
    from shardcheck.analyzer.values import UNKNOWN, MeshVal, join
    from sharding_types import AxisType
    auto, explicit = (AxisType.Auto,) * 2, (AxisType.Explicit,) * 2
    a = MeshVal(("x", "y"), (8, 1), auto)
    joined = join(a, MeshVal(("x", "y"), (4, 1), auto))
    assert isinstance(joined, MeshVal) and (joined.names, joined.sizes) == (("x", "y"), (None, 1))
    assert join(a, MeshVal(("x", "z"), (8, 1), auto)) is UNKNOWN
    assert join(a, MeshVal(("x", "y"), (8, 1), explicit)) is UNKNOWN


def test_what_a_set_up_method_stores_is_read_by_the_other_methods(jax8):
    """``self.mesh`` built in ``setUp`` (and in ``__init__`` from locals) is the mesh the
    test methods place on; an attribute another method reassigns stays unknown."""
    from jax_snippets import run_snippets
    from shardcheck.analyzer.config import Config
    path = PROGRAMS / "set_up_stores.py"
    sites = {(s.function, s.kind): s for s in
             sharding_sites(path.read_text(), str(path), Config(assume_defaults=True))}
    test = sites[("ShardingTest.test_placement", "device_put")]
    assert (test.spec, test.mesh) == ("P('data', None)", "Mesh('data': ?, 'model': ?)")
    place = sites[("Engine.place", "device_put")]
    assert (place.spec, place.mesh) == ("P(None, 'model')", MESH)
    layout = sites[("Engine.place_layout", "device_put")]
    assert layout.spec is None and layout.mesh == MESH  # `layout` is reassigned elsewhere
    (res,) = run_snippets([path.read_text() + "\nRESULT = [repr(placed.sharding.spec), "
                           "repr(by_engine.sharding.spec), placed.sharding.mesh.axis_names]\n"])
    assert res["status"] == "ok", res
    assert [_as_written(r) for r in res["result"][:2]] == [test.spec, place.spec]
    assert tuple(res["result"][2]) == ("data", "model")


def test_a_config_with_a_default_maker_is_read_as_the_default_it_makes(jax8):
    """A config parameter annotated ``Cfg | None`` (or ``Optional[Cfg]``, keyword-only or
    not) with no call in view, whose class declares no field defaults but a static
    method with ``default`` in its name that takes no argument: the map reads the
    instance that method makes, and says so. flax, run with that instance, places the
    parameters and the activation exactly so."""
    from jax_snippets import run_snippets
    from shardcheck.analyzer.config import Config
    path = PROGRAMS / "default_makers.py"
    sites = sharding_sites(path.read_text(), str(path), Config(assume_defaults=True))
    got = {(s.row, s.kind): (s.spec, s.assumes) for s in sites}
    maker = "ShardingConfig.get_default_sharding()"
    fields = (f"{maker}.kernel", f"{maker}.bias", f"{maker}.act")
    assert got == {  # each body's assumptions so far (self.shd_config: __init__'s reads too)
        (31, "partitioning"): ("P('data', 'model')", fields[:1]),
        (33, "partitioning"): ("P('model')", fields[:2]),
        (40, "with_sharding_constraint"): ("P('data', None, 'model')", fields),
        (45, "with_sharding_constraint"): ("P('data', None, 'model')", fields[2:])}
    checked = sharding_sites(path.read_text(), str(path))
    assert all(s.spec is None for s in checked)  # `check` assumes no config
    program = path.read_text() + textwrap.dedent("""
        import jax.numpy as jnp
        from jax.sharding import AxisType
        mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
        with jax.set_mesh(mesh):
            cfg = ShardingConfig.get_default_sharding()
            layer = Projection(16, rngs=nnx.Rngs(0), shd_config=cfg)
            y = jax.jit(layer)(jnp.ones((4, 2, 16)))
            z = jax.jit(embed, static_argnums=1)(jnp.ones((4, 2, 16)), cfg)
        RESULT = [repr(v.sharding.spec) for v in
                  (layer.proj.kernel[...], layer.proj.bias[...], y, z)]
        """)
    (res,) = run_snippets([program])
    assert res["status"] == "ok", res
    assert [_as_written(r) for r in res["result"]] == [
        _without_trailing_none(got[k][0]) for k in [(31, "partitioning"), (33, "partitioning"),
                                                   (40, "with_sharding_constraint"),
                                                   (45, "with_sharding_constraint")]]
