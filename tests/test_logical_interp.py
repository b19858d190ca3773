"""Flax logical axis names in the interpreter: rule tables from source and from
``[tool.shardcheck.logical]``, the resolved spec at each site (with the logical names it
came from), and the constrained types, checked against flax and JAX on 8 CPU devices."""

import pathlib
import subprocess
import sys

import libcst as cst
import pytest

from shardcheck.analyzer.config import ConfigError, from_table
from shardcheck.analyzer.engine import analyze, check_source, infer_types
from shardcheck.analyzer.jaxapi.logical import LogicalResolution

ROOT = pathlib.Path(__file__).resolve().parent
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
