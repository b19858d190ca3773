"""``types`` and ``specs`` run each file in the budgeted workers ``check`` uses
(``per_file.listed``): the same answer as one process, in the files' order, and a file
past a budget or that does not parse is said to be while the others are listed."""

from __future__ import annotations

import json

from test_robustness import SLOW, cli

GOOD = ("import jax\nimport jax.numpy as jnp\n"
        "from jax.sharding import NamedSharding, PartitionSpec as P\n"
        "mesh = jax.make_mesh((2, 4), ('data', 'model'))\n"
        "x = jax.device_put(jnp.zeros((8, 16)), NamedSharding(mesh, P('data', 'model')))\n"
        "y = x * 2\n")


def _tree(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.shardcheck]\ntimeout-per-file = 0.5\n')
    (tmp_path / "a_good.py").write_text(GOOD)
    (tmp_path / "b_bad.py").write_text("x = (\n")
    (tmp_path / "c_slow.py").write_text(SLOW)
    (tmp_path / "d_good.py").write_text(GOOD.replace("'data', 'model')))", "'data', None)))"))


def test_specs_in_workers_lists_what_one_process_does_and_says_what_it_skipped(tmp_path):
    _tree(tmp_path)
    code, out, err = cli(["specs", "--format", "json", "-j", "2", "."], tmp_path)
    assert code == 2 and "Traceback" not in err
    assert "b_bad.py: this file does not parse" in err
    assert "c_slow.py: this file was not analysed: its analysis ran past timeout-per-file (0.5 s)" in err
    sites = json.loads(out)["sites"]
    assert [(s["filename"].split("/")[-1], s["location"]["column"], s["spec"]) for s in sites] \
        == [("a_good.py", 5, "P('data', 'model')"), ("a_good.py", 40, "P('data', 'model')"),
            ("d_good.py", 5, "P('data', None)"), ("d_good.py", 40, "P('data', None)")]
    (tmp_path / "c_slow.py").unlink()  # in one process there is no budget
    code1, out1, _ = cli(["specs", "--format", "json", "-j", "1", "."], tmp_path)
    assert code1 == 2 and json.loads(out1) == json.loads(out)


def test_types_in_workers_lists_what_one_process_does(tmp_path):
    _tree(tmp_path)
    code, out, err = cli(["types", "--format", "json", "-j", "2", "."], tmp_path)
    assert code == 2 and "c_slow.py: this file was not analysed" in err and "b_bad.py: this file does not parse" in err
    rows = json.loads(out)
    assert [(r["path"].split("/")[-1], r["line"], r["type"]) for r in rows["types"]] == [
        ("a_good.py", 5, "float32[8@data,16@model]"), ("a_good.py", 6, "float32[8@data,16@model]"),
        ("d_good.py", 5, "float32[8@data,16]"), ("d_good.py", 6, "float32[8@data,16]")]
    (tmp_path / "c_slow.py").unlink()
    code1, out1, _ = cli(["types", "--format", "json", "-j", "1", "."], tmp_path)
    assert code1 == 2 and json.loads(out1) == rows


def test_jobs_out_of_range_is_a_usage_error(tmp_path):
    for command in ("types", "specs"):
        code, _, err = cli([command, "-j", "0", "."], tmp_path)
        assert code == 2 and "must be from 1 to 1024, got 0" in err and "Traceback" not in err
