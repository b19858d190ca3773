"""Findings in YAML/JSON sharding configs (analyzer/config_checks.py, SC113): MaxText-style
variants with ``base_config``, overrides, suppressions, files that are not sharding
configs, and the check command reading the configs it is given or finds. What JAX does
with each config is run by the rule's own examples (tests/analyzer/test_rules.py) and,
for a repeated mesh axis, here.
"""

import json
import textwrap

import pytest

from shardcheck.analyzer import config_checks
from shardcheck.analyzer.rules import all_rules
from shardcheck.analyzer.rules.config_mesh_axes import BASE_CONFIG
from shardcheck.cli import run

BASE = BASE_CONFIG  # mesh_axes (line 1), four rule lines (2-6), data_sharding (line 7)


def _write(tmp_path, files):
    for name, text in files.items():
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))


def _rows(path):
    return [(f.row, f.column) for f in config_checks.check(str(path))]


def test_the_rule_and_the_checker_agree_on_code_and_name():
    rule = all_rules()[config_checks.CODE]
    assert (rule.NAME, rule.CONFIG) == (config_checks.NAME, True)


def test_a_consistent_config_and_its_variant_are_silent(tmp_path):
    _write(tmp_path, {"base.yml": BASE, "models/big.yml": """\
        base_config: "../base.yml"
        mesh_axes: ['data', 'fsdp', 'tensor', 'expert']
        logical_axis_rules: [['batch', 'data'], ['embed', 'fsdp'], ['heads', 'tensor'],
                             ['exp', 'expert']]
        """})
    assert _rows(tmp_path / "base.yml") == []
    assert _rows(tmp_path / "models/big.yml") == []


def test_a_rule_to_a_missing_axis_is_reported_at_the_axis(tmp_path):
    _write(tmp_path, {"base.yml": BASE.replace("['embed', 'fsdp']", "['embed', 'fdsp']")})
    (f,) = config_checks.check(str(tmp_path / "base.yml"))
    assert (f.row, f.column, f.severity) == (4, 13, "warning")
    assert "'embed' -> 'fdsp'" in f.message and "('data', 'fsdp', 'tensor')" in f.message


def test_a_variant_that_drops_an_axis_is_reported_at_its_mesh_axes(tmp_path):
    _write(tmp_path, {"base.yml": BASE, "models/small.yml": """\
        base_config: "../base.yml"
        mesh_axes: ['data', 'fsdp']
        """})
    found = config_checks.check(str(tmp_path / "models/small.yml"))
    assert [(f.row, f.column) for f in found] == [(2, 1), (2, 1)]
    rules, batch = found
    assert "'heads'" in rules.message and rules.related[0].row == 5
    assert "data_sharding" in batch.message and batch.related[0].row == 7
    assert _rows(tmp_path / "base.yml") == []  # the base itself is consistent


def test_an_axis_no_mesh_has_is_reported_once_at_the_rule(tmp_path):
    _write(tmp_path, {"base.yml": BASE.replace("['heads', 'tensor']", "['heads', 'model']"),
                      "models/small.yml": 'base_config: "../base.yml"\nmesh_axes: [data, fsdp, tensor]\n'})
    assert _rows(tmp_path / "base.yml") == [(5, 13)]
    assert _rows(tmp_path / "models/small.yml") == []


def test_an_override_is_checked_in_the_variant(tmp_path):
    _write(tmp_path, {"base.yml": BASE, "models/moe.yml": """\
        base_config: "../base.yml"
        override_logical_axis_rules: [['heads', 'tensr']]
        """})
    assert _rows(tmp_path / "models/moe.yml") == [(2, 41)]


def test_malformed_rules_and_repeated_axes(tmp_path):
    _write(tmp_path, {"base.yml": BASE.replace("['data', 'fsdp', 'tensor']\n", "['data', 'fsdp', 'fsdp']\n", 1)
                      .replace("  ['embed', 'fsdp'],\n", "  ['embed'],\n")})
    found = config_checks.check(str(tmp_path / "base.yml"))
    messages = {(f.row, f.column): f.message for f in found}
    assert "listed twice" in messages[(1, 29)]
    assert "not a [logical name" in messages[(4, 3)]


def test_suppressions_in_a_yaml_comment(tmp_path):
    text = BASE.replace("['embed', 'fsdp'],", "['embed', 'fdsp'],  # shardcheck: ignore[SC113]")
    _write(tmp_path, {"a.yml": text, "b.yml": text.replace("ignore[SC113]", "ignore[SC101]")})
    assert _rows(tmp_path / "a.yml") == []
    assert _rows(tmp_path / "b.yml") == [(4, 13)]


def test_json_configs_and_files_that_are_no_sharding_config(tmp_path):
    _write(tmp_path, {
        "c.json": json.dumps({"mesh_axes": ["data", "model"],
                              "logical_axis_rules": [["batch", "data"], ["mlp", "modle"]]}, indent=1),
        "workflow.yml": "on: push\njobs: {test: {runs-on: ubuntu-latest}}\n",
        "list.yml": "- 1\n- 2\n",
        "broken.yml": "mesh_axes: [data\n",
        "bomb.yml": "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
            f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
            for p, c in zip("abcdefg", "bcdefgh")) + "mesh_axes: [*h]\n",
    })
    (f,) = config_checks.check(str(tmp_path / "c.json"))
    assert "'mlp' -> 'modle'" in f.message
    for name in ("workflow.yml", "list.yml", "broken.yml", "bomb.yml"):
        assert _rows(tmp_path / name) == [], name


def test_a_missing_or_circular_base_is_no_finding(tmp_path):
    _write(tmp_path, {"a.yml": 'base_config: "b.yml"\nmesh_axes: [data]\n',
                      "b.yml": 'base_config: "a.yml"\nlogical_axis_rules: [[batch, data]]\n',
                      "c.yml": 'base_config: "nowhere.yml"\nmesh_axes: [data]\n'})
    assert _rows(tmp_path / "a.yml") == [] and _rows(tmp_path / "c.yml") == []


def test_check_reads_the_configs_it_is_given_and_finds(tmp_path, capsys, monkeypatch):
    _write(tmp_path, {"pyproject.toml": "", "src/model.py": "x = 1\n",
                      "configs/base.yml": BASE.replace("['embed', 'fsdp']", "['embed', 'fdsp']"),
                      "configs/other.yml": "name: not a sharding config\n"})
    monkeypatch.chdir(tmp_path)
    assert run(["check", "--no-cache", "."]) == 0  # warnings only
    out = capsys.readouterr().out
    assert "configs/base.yml:4:13: SC113 warning" in out and "4 |   ['embed', 'fdsp']," in out
    assert "in 1 of 2 files" in out  # model.py and base.yml; other.yml holds no sharding key
    assert run(["check", "--no-cache", "--format", "json", "configs/other.yml",
                "configs/base.yml"]) == 0
    (finding,) = json.loads(capsys.readouterr().out)
    assert (finding["code"], finding["location"]) == ("SC113", {"row": 4, "column": 13})
    assert run(["check", "--no-cache", "--ignore", "SC113", "configs/base.yml"]) == 0
    assert "All checks passed (1 file)" in capsys.readouterr().out


@pytest.fixture(scope="module")
def repeated_axis_run(jax8):
    from jax_snippets import run_snippets
    driver = all_rules()[config_checks.CODE].VALID[0].driver
    config = BASE.replace("'fsdp', 'tensor']\n", "'fsdp', 'tensor', 'fsdp']\n", 1)
    return run_snippets([f"CONFIG = {config!r}\n{driver}\nassert mesh.shape['fsdp'] == 2\n"])[0]


def test_a_repeated_mesh_axis_fails_under_jax(repeated_axis_run, tmp_path):
    """JAX 0.10.2's make_mesh keeps the last size of a repeated name (the first 'fsdp'
    of size 2 is lost: the witness fails); 0.12's rejects the names."""
    assert repeated_axis_run["status"] == "error"
    assert repeated_axis_run["type"] in ("AssertionError", "ValueError"), repeated_axis_run
    _write(tmp_path, {"base.yml": BASE.replace("'fsdp', 'tensor']\n", "'fsdp', 'tensor', 'fsdp']\n", 1)})
    assert "listed twice" in config_checks.check(str(tmp_path / "base.yml"))[0].message


MODEL = '''\
import flax.linen as nn


class Block(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.with_logical_constraint(x, ("batch", "length", "embed"))
        init = nn.with_logical_partitioning(nn.initializers.lecun_normal(), ("embed", "heads"))
        return nn.Dense(64, kernel_init=init)(x)
'''


def test_logical_names_the_code_uses(tmp_path):
    _write(tmp_path, {"model.py": MODEL, "other.py": "names = ('not', 'a', 'call')\n"})
    used = config_checks.logical_names_used([str(tmp_path / "model.py"), str(tmp_path / "other.py")])
    assert sorted(used) == ["batch", "embed", "heads", "length"]
    assert used["heads"] == [(str(tmp_path / "model.py"), 8, 87)]


def test_a_variant_replacing_the_rules_wholesale_loses_names_the_code_uses(tmp_path, capsys,
                                                                            monkeypatch):
    _write(tmp_path, {"pyproject.toml": "", "src/model.py": MODEL, "configs/base.yml": BASE,
                      "configs/models/tiny.yml": """\
        base_config: "../base.yml"
        logical_axis_rules: [['batch', 'data'], ['embed', 'fsdp']]
        """,
                      "configs/models/full.yml": """\
        base_config: "../base.yml"
        logical_axis_rules: [['batch', 'data'], ['embed', 'fsdp'], ['heads', null]]
        """})
    used = config_checks.logical_names_used([str(tmp_path / "src/model.py")])
    (f,) = config_checks.check(str(tmp_path / "configs/models/tiny.yml"), used=used)
    assert (f.row, f.column) == (2, 1) and "'heads'" in f.message and "'length'" not in f.message
    assert f.related[0].filename.endswith("model.py") and f.related[0].row == 8
    # replicating on purpose (`null`) maps the name; the base itself replaces nothing
    assert config_checks.check(str(tmp_path / "configs/models/full.yml"), used=used) == []
    assert config_checks.check(str(tmp_path / "configs/base.yml"), used=used) == []
    monkeypatch.chdir(tmp_path)
    assert run(["check", "--no-cache", "--output-format", "concise", "."]) == 0
    out = capsys.readouterr().out
    assert "configs/models/tiny.yml:2:1: SC113 warning" in out
    assert "src/model.py:8:87: note: 'heads' is used here" in out


def test_mesh_sizes_of_another_length_than_the_axes(tmp_path):
    """At the list where a file sets it; at a variant's own mesh_axes where the variant
    adds an axis and keeps its base's sizes; silent where the lengths agree."""
    _write(tmp_path, {"base.yml": BASE + "ici_mesh_shape: [2, 2, 2]\ndcn_mesh_shape: [1, 1]\n",
                      "models/big.yml": """\
        base_config: "../base.yml"
        mesh_axes: ['data', 'fsdp', 'tensor', 'expert']
        dcn_mesh_shape: [1, 1, 1, 1]
        """})
    (f,) = config_checks.check(str(tmp_path / "base.yml"))
    assert (f.row, f.column) == (9, 17) and "`dcn_mesh_shape` lists 2 sizes" in f.message
    (g,) = config_checks.check(str(tmp_path / "models/big.yml"))
    assert g.row == 2 and "`ici_mesh_shape` lists 3 sizes" in g.message and "names 4 axes" in g.message
    assert g.related[0].filename.endswith("base.yml") and g.related[0].row == 8
