"""confirm compares types, not strings: a disagreement lists why, in text and JSON.

A disagreement is seeded without touching the analyzer's rules: the static half is
handed a wrong type for one name (``seed_static``), while the runtime half records what
JAX says."""

import dataclasses
import json

import pytest

from sharding_types import MeshModel
from shardcheck.confirm import programs as confirm, scale

PROGRAM = ("import jax\nimport jax.numpy as jnp\nfrom jax import P\n"
           "mesh = jax.make_mesh((2, 4), ('x', 'y'))\n"
           "with jax.set_mesh(mesh):\n"
           "    a = jax.device_put(jnp.zeros((8, 4)), P('x'))\n"
           "    m = jnp.max(a, axis=1, keepdims=True)\n")


@pytest.fixture
def seed_static(monkeypatch):
    """``seed_static({"m": "float32[8,1]"})``: the analyzer infers these types instead."""
    from shardcheck.analyzer import inferred_types

    def seed(wrong):
        real = inferred_types.infer_types

        def infer_types(*args, **kwargs):
            return [dataclasses.replace(t, type=wrong.get(t.name, t.type))
                    for t in real(*args, **kwargs)]
        monkeypatch.setattr(inferred_types, "infer_types", infer_types)
    return seed


@pytest.mark.parametrize("static,runtime,status,reasons", [
    ("float32[8@x,1]", ["float32[8@x,1]"], "agree", []),
    (None, ["float32[8]"], "unknown", []),
    ("float32[8]", [], "not-run", []),
    ("float32[8,1]", ["float32[8@x,1]"], "disagree",
     ["dim 0: JAX says sharded over 'x', the analyzer says replicated"]),
    ("float32[8@x]", ["float32[8@x,1]"], "disagree",
     ["rank: JAX says 2 dims, the analyzer says 1 (shape (8,))"]),
    ("~float32[]", ["float32[]"], "disagree",
     ["weak type: JAX says a strongly typed value, the analyzer says a weakly typed one (~)"]),
    ("bfloat16[4]{V:x}", ["float32[4]{V:(x,y)}"], "disagree",
     ["dtype: JAX says float32, the analyzer says bfloat16",
      "varying axes: JAX says {x, y}, the analyzer says {x}"]),
    ("float32[4]{V:(y,x)}", ["float32[4]{V:(x,y)}"], "disagree",
     ["the same type printed differently: JAX float32[4]{V:(x,y)}, "
      "the analyzer float32[4]{V:(y,x)}"]),
    ("int32[2]", ["int32[2]", "int32[3]"], "disagree",
     ["JAX records 2 different types here, the analyzer one",
      "int32[3]: dim 0: JAX says size 3, the analyzer says 2"]),
])
def test_compare_gives_the_status_and_the_reasons(static, runtime, status, reasons):
    assert confirm.compare(static, runtime) == (status, reasons)


def test_a_disagreement_prints_its_reasons(seed_static, tmp_path):
    prog = tmp_path / "prog.py"
    prog.write_text(PROGRAM)
    seed_static({"m": "bfloat16[8,1]"})
    res = confirm.confirm_file(str(prog))
    [bad] = [r for r in res.rows if r.status == "disagree"]
    assert (bad.name, bad.static, bad.runtime) == ("m", "bfloat16[8,1]", ["float32[8@x,1]"])
    assert bad.reasons == ["dtype: JAX says float32, the analyzer says bfloat16",
                           "dim 0: JAX says sharded over 'x', the analyzer says replicated"]
    text = confirm.render_text([res])
    row_line = next(i for i, line in enumerate(text.splitlines()) if " m " in line)
    assert text.splitlines()[row_line + 1:row_line + 3] == [
        "    - dtype: JAX says float32, the analyzer says bfloat16",
        "    - dim 0: JAX says sharded over 'x', the analyzer says replicated"]
    [entry] = json.loads(confirm.render_json([res]))
    rows = {r["name"]: r for r in entry["rows"]}
    assert rows["m"]["reasons"] == bad.reasons and rows["a"]["reasons"] == []
    assert not res.ok


def test_a_disagreement_at_scale_prints_its_reasons(seed_static, tmp_path):
    prog = tmp_path / "prog.py"
    prog.write_text("import jax\nimport jax.numpy as jnp\nfrom jax import P\n\n"
                    "@jax.jit\ndef f(a):\n    m = jnp.max(a, axis=1, keepdims=True)\n    return m\n\n"
                    "with jax.set_mesh(jax.make_mesh((8,), ('x',))):\n"
                    "    a = jax.device_put(jnp.zeros((64, 4)), P('x'))\n    f(a)\n")
    seed_static({"m": "float32[64@x]"})
    [res] = scale.confirm_scale([str(prog)], MeshModel(("x",), (64,)))
    [bad] = [r for r in res.rows if r.status == "disagree"]
    assert bad.reasons == ["rank: JAX says 2 dims, the analyzer says 1 (shape (64,))"]
    text = scale.render_text([res])
    assert "      - rank: JAX says 2 dims, the analyzer says 1 (shape (64,))" in text
    assert text.splitlines()[0].endswith("at x=64 (64 devices, abstract)")
    [entry] = scale.json_rows([res])
    assert entry["mesh"] == {"x": 64} and entry["rows"][0]["reasons"] == bad.reasons
