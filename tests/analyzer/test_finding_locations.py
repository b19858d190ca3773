"""Where a finding points: at the line a user changes, with the other lines involved as
related locations (``note:`` lines in text, ``related`` in JSON, ``relatedLocations`` in
SARIF); a finding inside an imported module is reported once, at its own file and line."""

import io
import json
import re
import os
import textwrap
from contextlib import redirect_stdout

import pytest

from shardcheck.analyzer.engine import check_source
from shardcheck.cli import main

HELPERS = '''\
import jax
from jax import P


def shard(x):
    return jax.device_put(x, P("batch"))


def local_sum(xb):
    return xb * 2
'''

MAIN = '''\
import jax
import jax.numpy as jnp
from jax import P
from pkg.helpers import local_sum, shard

mesh = jax.make_mesh((8,), ("data",))
with jax.set_mesh(mesh):
    x = shard(jnp.zeros((8,)))
    y = jax.shard_map(local_sum, in_specs=P("data"), out_specs=P())(x)
'''


def _check(tmp_path, fmt, *paths):
    out = io.StringIO()
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        with redirect_stdout(out):
            main(["check", *paths, "--no-cache", "-j", "1", "--format", fmt, "--exit-zero"])
    finally:
        os.chdir(old)
    return out.getvalue()


@pytest.fixture
def pkg(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "helpers.py").write_text(HELPERS)
    (tmp_path / "pkg" / "main.py").write_text(MAIN)
    return tmp_path


def test_a_finding_in_an_imported_helper_is_reported_at_the_helpers_line(pkg):
    found = json.loads(_check(pkg, "json", "pkg/main.py"))
    sc101 = [f for f in found if f["code"] == "SC101"]
    assert [(f["filename"], f["location"]["row"]) for f in sc101] == [("pkg/helpers.py", 6)]
    assert not any(f["location"]["row"] == 1 and f["location"]["column"] == 1 for f in found)


def test_a_finding_is_reported_once_when_both_files_are_checked(pkg):
    found = json.loads(_check(pkg, "json", "pkg/"))
    keys = [(f["filename"], f["location"]["row"], f["code"]) for f in found]
    assert len(keys) == len(set(keys))
    assert ("pkg/helpers.py", 6, "SC101") in keys


def test_a_suppression_in_the_helper_applies_there(pkg):
    text = HELPERS.replace('P("batch"))', 'P("batch"))  # shardcheck: ignore[SC101]')
    (pkg / "pkg" / "helpers.py").write_text(text)
    found = json.loads(_check(pkg, "json", "pkg/main.py"))
    assert not [f for f in found if f["code"] == "SC101"]


def test_missing_collective_points_at_the_out_spec_and_notes_the_return(pkg):
    found = json.loads(_check(pkg, "json", "pkg/main.py"))
    (f,) = [f for f in found if f["code"] == "SC201"]
    assert (f["filename"], f["location"]["row"]) == ("pkg/main.py", 9)
    col = MAIN.splitlines()[8].index("P()") + 1
    assert f["location"]["column"] == col
    (note,) = f["related"]
    assert (note["filename"], note["location"]["row"]) == ("pkg/helpers.py", 10)
    assert "varies over 'data'" in note["message"]


def test_text_output_shows_related_locations_as_note_lines(pkg):
    lines = _check(pkg, "text", "pkg/main.py").splitlines()
    i = next(i for i, line in enumerate(lines) if "SC201" in line)
    assert lines[i].startswith("pkg/main.py:9:")
    # the code frame (`9 | ...` and its caret line) comes first, then the notes
    rest = [line for line in lines[i + 1:] if not re.match(r"^\s*\d* \|", line)]
    assert rest[0].startswith("pkg/helpers.py:10:5: note: ")


def test_sarif_output_has_related_locations(pkg):
    doc = json.loads(_check(pkg, "sarif", "pkg/main.py"))
    (res,) = [r for r in doc["runs"][0]["results"] if r["ruleId"] == "SC201"]
    (rel,) = res["relatedLocations"]
    assert rel["physicalLocation"]["artifactLocation"]["uri"] == "pkg/helpers.py"
    assert rel["physicalLocation"]["region"]["startLine"] == 10
    assert rel["message"]["text"]


ARITY = textwrap.dedent('''\
    import jax
    import jax.numpy as jnp
    from jax import P

    def body(x):
        return x * 2

    mesh = jax.make_mesh((2, 4), ("data", "model"))
    with jax.set_mesh(mesh):
        x = jax.device_put(jnp.ones((8,)), P("data"))
        y = jax.shard_map(body, in_specs=(P("data"), P()), out_specs=P("data"))(x)
    ''')


def test_an_extra_in_specs_entry_is_reported_at_that_entry():
    (f,) = [f for f in check_source(ARITY, "a.py") if f.code == "SC203"]
    line = ARITY.splitlines()[10]
    assert (f.row, f.column) == (11, line.index("P()") + 1)
    assert [(r.row, r.message) for r in f.related] == [(5, "`body` is defined here")]


def test_findings_in_json_carry_a_related_list():
    (f,) = [f for f in check_source(ARITY, "a.py") if f.code == "SC203"]
    d = f.as_json()
    assert d["related"][0]["location"]["row"] == 5
    assert type(f).from_json(d) == f


HELPER_SPEC = textwrap.dedent('''\
    import jax
    import jax.numpy as jnp
    from jax import P


    def batch_spec(rank, axis="batch"):
        return P(axis, *([None] * (rank - 1)))


    mesh = jax.make_mesh((2, 4), ("data", "model"))
    with jax.set_mesh(mesh):
        x = jax.device_put(jnp.zeros((8, 16)), batch_spec(2, axis="data"))
        y = jax.device_put(jnp.zeros((8, 16)), batch_spec(2))
    ''')


def test_a_spec_built_by_a_helper_is_reported_at_the_call_that_decides_it():
    (f,) = [f for f in check_source(HELPER_SPEC, "a.py") if f.code == "SC101"]
    line = HELPER_SPEC.splitlines()[12]
    assert (f.row, f.column) == (13, line.index("batch_spec") + 1)
    assert [(r.row, r.column) for r in f.related] == [(7, 12)]
    assert "helper" in f.related[0].message
