"""YAML and JSON configs are read within limits (``analyzer/config_data.py``): a 600-byte
alias bomb with ``logical_axis_rules`` anywhere in the project made every check take
42-69 s and 5.5 GB, in the daemon too. A refused file is passed over with a warning that
names it; the run's findings are unchanged."""

from __future__ import annotations

import json
import textwrap
import time

import pytest

from shardcheck.analyzer import config_data
from test_robustness import BAD, cli, run

# nine levels of nine aliases: 9**9 (387 million) strings once expanded
BOMB = "mesh_axes: [data]\na: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + \
    "".join(f"{n}: &{n} [{', '.join(['*' + p] * 9)}]\n" for p, n in zip("abcdefgh", "bcdefghi")) + \
    "logical_axis_rules: *i\n"


def test_the_bomb_is_small_and_expands_past_the_limit_before_anything_walks_it():
    import yaml
    assert len(BOMB) < 600
    shared = yaml.safe_load(BOMB)["i"]  # PyYAML builds it as shared references, quickly
    assert shared[0] is shared[1]
    start = time.monotonic()
    with pytest.raises(config_data.Refused, match="past 100,000 nodes"):
        config_data.load(BOMB, "base.yml")
    assert time.monotonic() - start < 1


@pytest.mark.parametrize("text,why", [
    ("logical_axis_rules: &x [[batch, *x]]\n", "refers to a node that holds it"),
    ("logical_axis_rules: [[batch, data]]\n# " + "x" * (1 << 20) + "\n", "larger than 1 MiB"),
])
def test_what_else_the_limits_refuse(text, why):
    with pytest.raises(config_data.Refused, match=why):
        config_data.load(text, "base.yml")


def test_nesting_too_deep_for_the_pure_python_parser_is_refused(monkeypatch):
    """libyaml stops at 1,000 levels itself (a parse error); PyYAML's own composer,
    used where libyaml is not installed, recurses until Python's limit."""
    import yaml
    monkeypatch.delattr(yaml, "CSafeLoader", raising=False)
    with pytest.raises(config_data.Refused, match="nested too deeply"):
        config_data.load("logical_axis_rules: " + "[" * 5000 + "]" * 5000 + "\n", "base.yml")


def test_json_too_deep_to_read_is_refused():
    with pytest.raises(config_data.Refused, match="nested too deeply"):
        config_data.load("[" * 200_000 + "]" * 200_000, "base.json")


def test_aliases_within_the_limits_are_read_as_yaml_reads_them():
    """The correct twin: anchors and merge keys, as real configs use them."""
    import yaml
    text = textwrap.dedent("""\
        defaults: &defaults {mesh_axes: [data, model], dtype: bfloat16}
        small: {<<: *defaults, layers: 2}
        logical_axis_rules: &rules [[batch, data], [mlp, model]]
        copy: *rules
        """)
    assert config_data.load(text, "base.yml") == yaml.safe_load(text)


def _project(tmp_path, config_name, config_text):
    (tmp_path / "pyproject.toml").write_text("[tool.shardcheck]\n")
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / config_name).write_text(config_text)
    (tmp_path / "bad.py").write_text(BAD)


def test_a_bomb_in_the_project_is_passed_over_with_a_warning(tmp_path):
    _project(tmp_path, "base.yml", BOMB)
    start = time.monotonic()
    code, out, err = cli(["check", "--no-cache", "bad.py"], tmp_path)
    assert time.monotonic() - start < 30
    assert code == 1 and "bad.py:5:" in out and "SC101" in out
    assert err.splitlines() == ["shardcheck: warning: configs/base.yml: not read for "
                                "logical_axis_rules: its aliases expand it past 100,000 nodes "
                                "(a YAML alias bomb?)"]


def test_a_large_file_without_rules_is_passed_over_in_silence(tmp_path):
    """A tokenizer's vocab.json is no config: no warning for it."""
    _project(tmp_path, "vocab.json", json.dumps({f"tok{i}": i for i in range(200_000)}))
    code, out, err = run(["check", "--no-cache", "bad.py"], tmp_path)
    assert code == 1 and "SC101" in out and err == ""


def test_a_large_rules_file_is_passed_over_with_a_warning(tmp_path):
    _project(tmp_path, "base.yml", "logical_axis_rules: [[batch, data]]\n" +
             "".join(f"k{i}: {i}\n" for i in range(200_000)))
    code, _, err = run(["check", "--no-cache", "bad.py"], tmp_path)
    assert code == 1
    assert "configs/base.yml: not read for logical_axis_rules: it is larger than 1 MiB" in err


def test_a_named_rules_file_past_the_limits_is_a_config_error(tmp_path):
    _project(tmp_path, "base.yml", BOMB)
    (tmp_path / "pyproject.toml").write_text('[tool.shardcheck.logical]\nfile = "configs/base.yml"\n')
    code, out, err = run(["check", "--no-cache", "bad.py"], tmp_path)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "file 'configs/base.yml' is not read: its aliases expand it past 100,000 nodes" in err


def test_a_fifo_named_like_a_config_is_never_waited_on(tmp_path):
    import os
    _project(tmp_path, "base.yml", "logical_axis_rules: [[batch, data]]\n")
    os.mkfifo(tmp_path / "configs" / "other.yml")
    code, out, err = cli(["check", "--no-cache", "bad.py"], tmp_path, timeout=60)
    assert code == 1 and "SC101" in out and err == ""


def test_a_small_config_with_no_anchor_is_not_parsed_to_look_for_a_bomb(tmp_path, monkeypatch):
    """Discovery asks each rule file whether the limits refuse it; an alias needs an `&`
    anchor, so a `*` with none (a comment's `heads * head_dim`) is no reason to parse.
    A file with an anchor still is."""
    parsed = []
    monkeypatch.setattr(config_data, "load", lambda text, name: parsed.append(name))
    path = tmp_path / "base.yml"
    path.write_text("# heads : num_heads * head_dim\nlogical_axis_rules: [[batch, data]]\n")
    assert config_data.refusal(str(path), "logical_axis_rules") is None and parsed == []
    path.write_text("a: &x [1]\nb: *x\nlogical_axis_rules: [[batch, data]]\n")
    assert config_data.refusal(str(path), "logical_axis_rules") is None and parsed == [str(path)]
