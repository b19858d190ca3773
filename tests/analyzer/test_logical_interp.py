"""Flax logical axis names in the interpreter: rule tables from source and from
``[tool.shardcheck.logical]``, the resolved spec at each site (with the logical names it
came from), and the constrained types, checked against flax and JAX on 8 CPU devices."""

import json
import pathlib
import subprocess
import sys

import libcst as cst
import pytest

from shardcheck.check.config import ConfigError, from_table
from shardcheck.analyzer.engine import analyze, check_source
from shardcheck.analyzer.inferred_types import infer_types
from shardcheck.analyzer.jaxapi.logical import LogicalResolution

ROOT = pathlib.Path(__file__).resolve().parents[1]
PROGRAMS = sorted((ROOT / "logical").glob("*.py"))


def _resolutions(source, config=None):
    it = analyze(cst.parse_module(source), "m", config or from_table({}))
    return [(f.node, f.fact) for f in it.events.facts if isinstance(f.fact, LogicalResolution)]


@pytest.fixture(scope="module")
def recorded(jax8):
    pytest.importorskip("flax", reason="flax is not installed (pip install -e '.[test]')")
    from ground_truth import record_all
    return dict(zip(PROGRAMS, record_all([str(p) for p in PROGRAMS])))


@pytest.mark.parametrize("path", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_types_match_jax(recorded, path):
    runtime, error = recorded[path]
    assert error is None, f"{path.name} failed under flax/JAX: {error}"
    static = {(t.row, t.column, t.name): t.type for t in infer_types(path.read_bytes(), str(path))}
    known = {k: v for k, v in static.items() if v is not None}
    wrong = {k: (v, sorted(runtime.get(k, ()))) for k, v in known.items() if runtime.get(k) != {v}}
    assert not wrong
    assert not check_source(path.read_bytes(), str(path))


def test_constrained_types_are_known():
    path = ROOT / "logical" / "linen_constraints.py"
    static = {t.name: t.type for t in infer_types(path.read_bytes(), str(path))}
    assert static["y"] == "float32[8@data,4,16@model]"
    assert static["w2"] == "float32[16@model,8]"  # vocab's rule skipped: model is taken
    assert static["v"] == "float32[8@data,4,16]"
    assert static["d"] == "float32[8@data,16@model]"  # set_logical_axis_rules


def test_each_site_records_its_logical_names():
    path = ROOT / "logical" / "linen_constraints.py"
    found = {(f.api.rsplit(".", 1)[-1], f.names): f.entries for _, f in
             _resolutions(path.read_text())}
    assert found[("with_logical_constraint", ("embed", "vocab"))] == ("model", None)
    assert found[("with_logical_constraint", ("batch", None, None))] == ("data", None, None)
    assert found[("logical_to_mesh_axes", ("mlp", "embed"))] == (None, "model")  # embed first
    nnx = {f.names: (f.entries, f.library) for _, f in
           _resolutions((ROOT / "logical" / "nnx_params.py").read_text())}
    assert nnx[("embed", "mlp")] == (("data", "model"), "nnx")
    assert nnx[("embed", "hidden")] == (("data", "model"), "nnx")  # sharding_rules=


def test_no_rules_in_view_is_unknown_not_a_guess():
    src = """import flax.linen as nn
def f(x):
    return nn.with_logical_constraint(x, ("batch", "embed"))
"""
    assert _resolutions(src) == []


YAML = """model:
  mesh_axes: ['data', 'fsdp', 'tensor']
  logical_axis_rules: [['batch', ['data', 'fsdp']], ['embed', 'fsdp'], ['mlp', 'tensor'],
                       ['norm', null]]
"""

LIBRARY = """import flax.linen as nn
from mylib.sharding import maybe_shard_with_logical

def layer(x):
    h = nn.with_logical_constraint(x, ("batch", "embed"))
    return maybe_shard_with_logical(h, ("batch", "mlp"))
"""


def _yaml_config(tmp_path, **extra):
    (tmp_path / "cfg.yml").write_text(YAML)
    table = {"file": "cfg.yml", "rules-key": "model.logical_axis_rules",
             "mesh-axes-key": "model.mesh_axes"}
    table.update(extra)
    return from_table({"logical": table}, root=str(tmp_path))


def test_rules_and_mesh_axes_from_yaml(tmp_path):
    cfg = _yaml_config(tmp_path)
    assert cfg.logical.mesh_axes == ("data", "fsdp", "tensor")
    assert cfg.logical.rules[0] == ("batch", ("data", "fsdp"))
    assert cfg.logical.rules[3] == ("norm", None)
    [(_, f)] = _resolutions(LIBRARY, cfg)
    assert (f.names, f.entries) == (("batch", "embed"), (("data", "fsdp"), None))


def test_declared_wrapper_resolves_like_flax(tmp_path):
    cfg = _yaml_config(tmp_path, wrappers={"mylib.sharding.maybe_shard_with_logical":
                                           {"array": 0, "names": 1}})
    found = [(f.names, f.entries) for _, f in _resolutions(LIBRARY, cfg)]
    assert (("batch", "mlp"), (("data", "fsdp"), "tensor")) in found


def test_rules_in_source_win_over_declared(tmp_path):
    cfg = _yaml_config(tmp_path)
    src = """import flax.linen as nn
with nn.logical_axis_rules([("batch", "x")]):
    spec = nn.logical_to_mesh_axes(("batch", "embed"))
"""
    [(_, f)] = _resolutions(src, cfg)
    assert f.entries == ("x", None) and f.unmatched == ("embed",)


def test_name_without_rule_is_a_warning(tmp_path):
    src = """import flax.linen as nn
with nn.logical_axis_rules([("batch", "data")]):
    spec = nn.logical_to_mesh_axes(("batch", "embd"))
"""
    [f] = check_source(src)
    assert (f.code, f.severity, f.row) == ("SC110", "warning", 3) and "'embd'" in f.message


@pytest.mark.parametrize("table,needle", [
    ({"rules": "batch"}, "must be a list of [logical name, mesh axes] pairs"),
    ({"rules": [["batch", 3]]}, "is not a [logical name, mesh axes] pair"),
    ({"rules": [], "file": "x.yml"}, "not both"),
    ({"file": "missing.yml"}, "cannot read it"),
    ({"mesh-axes": "data"}, "mesh-axes must be a list of axis names"),
    ({"wrappers": {"f": {"array": 0}}}, "wrappers['f'] must be"),
    ({"bogus": 1}, "unknown key 'bogus'"),
])
def test_bad_logical_config_is_one_clear_line(tmp_path, table, needle):
    with pytest.raises(ConfigError) as e:
        from_table({"logical": table}, root=str(tmp_path))
    assert needle in str(e.value) and "\n" not in str(e.value)


def test_bad_yaml_exits_2(tmp_path):
    (tmp_path / "cfg.yml").write_text("logical_axis_rules: [[\n")
    (tmp_path / "pyproject.toml").write_text('[tool.shardcheck.logical]\nfile = "cfg.yml"\n')
    (tmp_path / "a.py").write_text("x = 1\n")
    r = subprocess.run([sys.executable, "-m", "shardcheck", "check", str(tmp_path / "a.py"),
                        "--no-cache", "--config", str(tmp_path / "pyproject.toml")],
                       capture_output=True, text=True)
    assert r.returncode == 2, r
    assert "does not parse" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_nnx_logical_names_in_a_spec_are_not_mesh_axes():
    path = ROOT / "logical" / "nnx_spec_names.py"
    [(_, f)] = _resolutions(path.read_text())
    assert (f.names, f.entries, f.library) == (("embed", "mlp"), ("data", "model"), "nnx")
    assert not check_source(path.read_bytes(), str(path))


# -- discovery: a MaxText-style project with its rules in a YAML config ------------------------
BASE_YML = """# the model's defaults
mesh_axes: ['data', 'fsdp', 'tensor']
logical_axis_rules: [['activation_batch', ['data', 'fsdp']], ['activation_embed', 'tensor'],
                     ['embed', 'fsdp'], ['mlp', 'tensor']]
"""

LAYER = """import flax.linen as nn

def mlp_block(x):
    x = nn.with_logical_constraint(x, ("activation_batch", None, "activation_embed"))
    return x
"""


def _project(tmp_path, pyproject="[project]\nname = 'p'\n"):
    (tmp_path / "configs" / "models").mkdir(parents=True)
    (tmp_path / "configs" / "base.yml").write_text(BASE_YML)
    (tmp_path / "configs" / "models" / "big.yml").write_text("base_emb_dim: 8192\n")
    (tmp_path / "configs" / "broken.yml").write_text("logical_axis_rules: [[\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "layer.py").write_text(LAYER)
    if pyproject is not None:
        (tmp_path / "pyproject.toml").write_text(pyproject)


def _specs(tmp_path):
    r = subprocess.run([sys.executable, "-m", "shardcheck", "specs", "--format", "json",
                        str(tmp_path / "src")], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.mark.parametrize("pyproject", ["[project]\nname = 'p'\n", None])
def test_rules_in_a_yaml_config_are_discovered(tmp_path, pyproject):
    _project(tmp_path, pyproject)
    if pyproject is None:  # no pyproject.toml: the directory checked is the root
        (tmp_path / "src" / "configs").mkdir()
        (tmp_path / "src" / "configs" / "base.yml").write_text(BASE_YML)
    data = _specs(tmp_path)
    [site] = data["sites"]
    assert site["logical"] == ["activation_batch", None, "activation_embed"]
    assert site["spec"] == "P(('data', 'fsdp'), None, 'tensor')"
    assert data["logical_rules"]["discovered"] is True
    assert data["logical_rules"]["source"].replace("\\", "/") == "configs/base.yml"
    assert data["logical_rules"]["mesh_axes"] == ["data", "fsdp", "tensor"]


def test_discovery_can_be_turned_off_and_never_overrides_declared_rules(tmp_path):
    _project(tmp_path, "[tool.shardcheck.logical]\ndiscover = false\n")
    data = _specs(tmp_path)
    assert data["sites"][0]["spec"] is None and data["logical_rules"] is None
    cfg = from_table({"logical": {"rules": [["activation_batch", "x"]]}}, root=str(tmp_path))
    assert cfg.logical.rules == (("activation_batch", "x"),)
    assert not cfg.logical.discovered
    with pytest.raises(ConfigError, match="discover must be true or false"):
        from_table({"logical": {"discover": "no"}}, root=str(tmp_path))


def test_discovery_order_and_what_it_passes_over(tmp_path):
    from shardcheck.analyzer.logical_config import discover
    assert discover(str(tmp_path)) is None
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "exp.json").write_text(json.dumps({"logical_axis_rules": [["b", "x"]]}))
    (tmp_path / "notes.yml").write_text("text: logical_axis_rules are elsewhere\n")
    (tmp_path / "bad.yaml").write_text("logical_axis_rules: 3\n")
    found = discover(str(tmp_path))
    assert found.source.replace("\\", "/") == "a/exp.json" and found.mesh_axes is None
    (tmp_path / "a" / "default.yaml").write_text("logical_axis_rules: [['b', 'y']]\n")
    assert discover(str(tmp_path)).rules == (("b", "y"),)  # a default file comes first


def test_discovery_never_opens_what_is_not_a_regular_file(tmp_path):
    import os
    from shardcheck.analyzer.logical_config import discover
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    os.mkfifo(tmp_path / "base.yml")  # opening it for reading would block forever
    (tmp_path / "default.json").write_text(json.dumps({"logical_axis_rules": [["b", "x"]]}))
    assert discover(str(tmp_path)).source == "default.json"


DECLARED_YML = ("mesh_axes: ['data', 'fsdp', 'tensor']\n"
                "logical_axis_rules: [['batch', ['data', 'fsdp']], ['embed', '{embed}'], "
                "['mlp', 'tensor']]\n")
BLOCK = '''import flax.linen as nn
import jax.numpy as jnp


def block(x):
    h = nn.with_logical_constraint(x, ("batch", "embed"))
    return nn.with_logical_constraint(h @ jnp.ones((16, 32)), ("batch", "mlp"))
'''


@pytest.mark.parametrize("embed", ["tensr", "tensor"])
def test_a_rule_to_an_axis_the_declared_mesh_lacks(tmp_path, embed):
    """No mesh in view: the rules are checked against the project's declared mesh_axes.
    Under flax/JAX on that mesh, the misspelt rule raises where shardcheck says so."""
    from jax_snippets import run_snippets
    from shardcheck.check import config as cfgmod
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "base.yml").write_text(DECLARED_YML.format(embed=embed))
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "block.py").write_text(BLOCK)
    cfg = cfgmod.load(None, start=str(tmp_path))
    found = [f for f in check_source(BLOCK, str(tmp_path / "block.py"), cfg) if f.severity == "error"]
    probe = BLOCK + f'''
import jax, yaml
from jax.sharding import AxisType
doc = yaml.safe_load({DECLARED_YML.format(embed=embed)!r})
rules = [(k, tuple(v) if isinstance(v, list) else v) for k, v in doc["logical_axis_rules"]]
mesh = jax.make_mesh((2, 2, 2), tuple(doc["mesh_axes"]), axis_types=(AxisType.Auto,) * 3)
with jax.set_mesh(mesh), nn.logical_axis_rules(rules):
    y = jax.jit(block)(jnp.ones((8, 16)))
RESULT = str(y.sharding.spec)
'''
    (res,) = run_snippets([probe])
    if embed == "tensr":
        (f,) = found
        assert (f.code, f.row) == ("SC101", 6) and "'tensr'" in f.message
        assert "configs/base.yml" in f.message and "did you mean 'tensor'" in f.message
        assert res["status"] == "error" and "tensr" in res["error"], res
    else:
        assert found == [] and res["status"] == "ok", res
    # without declared axes there is nothing to check against: no finding
    bare = cfgmod.from_table({"logical": {"rules": [["batch", ["data", "fsdp"]], ["embed", embed],
                                                     ["mlp", "tensor"]]}}, str(tmp_path))
    assert [f for f in check_source(BLOCK, "block.py", bare) if f.code == "SC101"] == []


LINEN_PARAM = '''import flax.linen as nn


class MLP(nn.Module):
    @nn.compact
    def __call__(self, x):
        w = self.param("w", nn.with_logical_partitioning(nn.initializers.ones, ("embed", "mlp")),
                       (16, {mlp}))
        return x @ w
'''


@pytest.mark.parametrize("mlp", [6, 8])
def test_a_linen_param_indivisible_on_the_declared_mesh(tmp_path, mlp):
    """self.param(name, nn.with_logical_partitioning(init, names), shape): on the declared
    production mesh under the declared rules, a dim its axes do not divide is SC104.
    Flax/JAX: init raises IndivisibleError, eagerly and under jit with the logical shardings."""
    from jax_snippets import run_snippets
    from shardcheck.check import config as cfgmod
    (tmp_path / "pyproject.toml").write_text(
        '[tool.shardcheck]\ndefault-mesh = "production"\n'
        '[tool.shardcheck.meshes.production]\ndata = 2\nmodel = 4\n'
        '[tool.shardcheck.logical]\nrules = [["embed", "data"], ["mlp", "model"]]\n')
    src = LINEN_PARAM.format(mlp=mlp)
    (tmp_path / "model.py").write_text(src)
    cfg = cfgmod.load(None, start=str(tmp_path))
    found = [f for f in check_source(src, str(tmp_path / "model.py"), cfg) if f.severity == "error"]
    probe = src + '''
import jax, jax.numpy as jnp
from jax.sharding import AxisType
mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
RULES = [("embed", "data"), ("mlp", "model")]
out = []
with jax.set_mesh(mesh), nn.logical_axis_rules(RULES):
    abstract = jax.eval_shape(MLP().init, jax.random.key(0), jnp.ones((8, 16)))
    shardings = nn.logical_to_mesh_sharding(nn.get_partition_spec(abstract), mesh, RULES)
    for init in (MLP().init, jax.jit(MLP().init, out_shardings=shardings)):
        try:
            init(jax.random.key(0), jnp.ones((8, 16)))
            out.append("ok")
        except ValueError as e:
            out.append(type(e).__name__)
RESULT = out
'''
    (res,) = run_snippets([probe])
    assert res["status"] == "ok", res
    if mlp == 6:
        (f,) = found
        assert (f.code, f.row) == ("SC104", 7) and "Linen param 'w'" in f.message
        assert res["result"] == ["IndivisibleError", "IndivisibleError"]
    else:
        assert found == [] and res["result"] == ["ok", "ok"]


NNX_BLOCK = '''from flax import nnx


class Block(nnx.Module):
    def __init__(self, rngs):
        self.proj = nnx.Linear(16, 32, rngs=rngs, kernel_init=nnx.with_partitioning(
            nnx.initializers.xavier_uniform(), ("embed", "mlp")))
'''
NO_MLP_YML = ("mesh_axes: ['data', 'fsdp', 'tensor']\n"
              "logical_axis_rules: [['batch', ['data', 'fsdp']], ['embed', 'fsdp']]\n")


def _checked_under_base_yml(tmp_path, src, named):
    """``src`` checked in a project whose configs/base.yml holds NO_MLP_YML: named in
    ``[tool.shardcheck.logical]``, or (``named`` False) found by discovery."""
    from shardcheck.check import config as cfgmod
    (tmp_path / "configs").mkdir(exist_ok=True)
    (tmp_path / "configs" / "base.yml").write_text(NO_MLP_YML)
    (tmp_path / "pyproject.toml").write_text(
        "[project]\nname = 'p'\n" +
        ("[tool.shardcheck.logical]\nfile = 'configs/base.yml'\n" if named else ""))
    (tmp_path / "block.py").write_text(src)
    cfg = cfgmod.load(None, start=str(tmp_path))
    assert cfg.logical.discovered is not named
    assert cfg.logical.source.replace("\\", "/") == "configs/base.yml"
    return check_source(src, str(tmp_path / "block.py"), cfg)


@pytest.mark.parametrize("named", [True, False])
def test_an_nnx_name_no_rule_maps_is_an_error_only_under_the_file_the_project_names(
        tmp_path, named):
    """NNX passes a name no rule maps to JAX as a mesh axis: under flax with this file's
    rules and mesh, creating the parameter raises ValueError ('mlp' is not found in the
    mesh). Where the project names the file, that is SC101; where discovery picked it
    (a project may hold several configs, and run this model with another that maps
    'mlp'), it is no proof: no error, and SC110 warns of the name."""
    from jax_snippets import run_snippets
    found = _checked_under_base_yml(tmp_path, NNX_BLOCK, named)
    errors = [(f.code, f.row) for f in found if f.severity == "error"]
    assert errors == ([("SC101", 7)] if named else []), found
    if not named:
        assert [(f.code, f.row) for f in found if "'mlp'" in f.message] == [("SC110", 7)], found
    probe = NNX_BLOCK + f'''
import jax, yaml
from jax.sharding import AxisType
doc = yaml.safe_load({NO_MLP_YML!r})
rules = [(k, tuple(v) if isinstance(v, list) else v) for k, v in doc["logical_axis_rules"]]
mesh = jax.make_mesh((2, 2, 2), tuple(doc["mesh_axes"]), axis_types=(AxisType.Auto,) * 3)
with jax.set_mesh(mesh), nnx.logical_axis_rules(rules):
    Block(nnx.Rngs(0))
'''
    (res,) = run_snippets([probe])
    assert res["status"] == "error" and "mlp" in res["error"], res


LINEN_BLOCK = '''import flax.linen as nn


def block(x):
    return nn.with_logical_constraint(x, ("batch", "mlp", "mlpp"))
'''


@pytest.mark.parametrize("named", [True, False])
def test_a_name_another_config_maps_is_no_typo_under_a_discovered_table(tmp_path, named):
    """Discovery picks configs/base.yml, which has no rule for 'mlp'; the project's other
    config maps it, so only 'mlpp', which no config maps, is a likely typo. A file the
    project names is the table in force: both names are reported there. (Linen leaves a
    dim whose name has no rule unsharded: SC110's own examples run that under flax.)"""
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "wan.yml").write_text(
        NO_MLP_YML.replace("['embed', 'fsdp']", "['embed', 'fsdp'], ['mlp', 'tensor']"))
    [warning] = [f for f in _checked_under_base_yml(tmp_path, LINEN_BLOCK, named)
                 if f.code == "SC110"]
    if named:
        assert "names 'mlp', 'mlpp' in" in warning.message
        assert "in the logical axis rules in force" in warning.message
    else:
        assert "name 'mlpp' in" in warning.message and "'mlp'," not in warning.message
        assert "discovered in configs/base.yml, nor in any other rule file" in warning.message
