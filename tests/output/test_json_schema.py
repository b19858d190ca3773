"""``--output-format json`` against its published schema (``docs/schema/findings-v1.json``):
every finding the broken examples give (related places and a fix among them), a
notebook's (``cell``), and an unsafe fix's, through the CLI; and the schema rejects
what is not a finding, so the check can fail."""

import io
import json
import os
import pathlib
import textwrap
from contextlib import redirect_stderr, redirect_stdout

import jsonschema
import pytest

from shardcheck.cli import main

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "docs" / "schema" / "findings-v1.json").read_text())

# `with mesh:` on a mesh with Explicit axes: SC401's fix to `jax.set_mesh` is unsafe there
UNSAFE = textwrap.dedent('''\
    import jax
    from jax.sharding import AxisType

    mesh = jax.make_mesh((8,), ("data",), axis_types=(AxisType.Explicit,))
    with mesh:
        pass
    ''')

NOTEBOOK = json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
    {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
     "source": ["import jax\n", "from jax.sharding import NamedSharding, PartitionSpec as P\n"]},
    {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
     "source": ["mesh = jax.make_mesh((2, 4), ('data', 'model'))\n",
                "s = NamedSharding(mesh, P('modle'))\n"]}]})


def _json(args, cwd):
    out, err = io.StringIO(), io.StringIO()
    old = os.getcwd()
    os.chdir(cwd)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            main(["check", "--output-format", "json", "--no-cache", *args])
    finally:
        os.chdir(old)
    return json.loads(out.getvalue())


def test_the_schema_is_a_valid_json_schema_of_version_1():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["version"] == 1 and SCHEMA["$id"].endswith(":1")


def test_every_finding_of_the_examples_a_notebook_and_an_unsafe_fix_fits_it(tmp_path):
    found = _json(["examples/broken/"], ROOT)
    (tmp_path / "unsafe.py").write_text(UNSAFE)
    (tmp_path / "demo.ipynb").write_text(NOTEBOOK)
    found += _json(["unsafe.py", "demo.ipynb"], tmp_path)
    jsonschema.validate(found, SCHEMA, cls=jsonschema.Draft202012Validator)
    # what the schema's optional parts describe is there to check
    assert any(f["related"] for f in found)
    assert {f["fix"]["applicability"] for f in found if f["fix"]} == {"safe", "unsafe"}
    assert any(f.get("cell") == 2 for f in found)


@pytest.mark.parametrize("broken", [
    lambda f: f.pop("severity"),
    lambda f: f.update(severity="fatal"),
    lambda f: f.update(code="E501"),
    lambda f: f["location"].update(row="5"),
    lambda f: f.update(fix={"message": "m", "applicability": "safe", "edits": []}),
])
def test_it_rejects_what_is_not_a_finding(broken):
    finding = {"code": "SC101", "name": "unknown-mesh-axis", "message": "m", "severity": "error",
               "filename": "a.py", "location": {"row": 1, "column": 1},
               "end_location": {"row": 1, "column": 2}, "fix": None, "related": []}
    jsonschema.validate([finding], SCHEMA)
    broken(finding)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate([finding], SCHEMA, cls=jsonschema.Draft202012Validator)
