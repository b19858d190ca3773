"""shardcheck confirm: static types against jax.typeof, value by value, and JAX's errors
next to the static findings."""

import json
import pathlib
import subprocess
import sys

import pytest

from shardcheck import confirm

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
BROKEN = sorted((ROOT / "examples" / "broken").glob("*.py"))


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "shardcheck.cli", "confirm", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)


def test_confirm_examples_agrees_everywhere_and_exits_0():
    r = _cli("examples/", "--format", "json")
    assert r.returncode == 0, r.stdout + r.stderr
    results = json.loads(r.stdout)
    assert len(results) == len(EXAMPLES)
    rows = [row for res in results for row in res["rows"]]
    assert all(res["error"] is None for res in results)
    assert not [row for row in rows if row["status"] == "disagree"]
    assert sum(row["status"] == "agree" for row in rows) >= 45
    assert all(res["devices"] == 8 for res in results)


def test_a_wrong_static_rule_is_a_disagreement(monkeypatch, tmp_path):
    """Test-only hook: break the reduction rule (forget keepdims) in-process; the
    runtime half still records what JAX says, so confirm must disagree and exit 1."""
    from shardcheck.analyzer import transfer
    real = transfer.reduce
    monkeypatch.setattr(transfer, "reduce",
                        lambda x, axes, keepdims, node=None, kind="sum": real(x, axes, False, node, kind))
    prog = tmp_path / "prog.py"
    prog.write_text("import jax\nimport jax.numpy as jnp\nfrom jax import P\n"
                    "mesh = jax.make_mesh((2, 4), ('x', 'y'))\n"
                    "with jax.set_mesh(mesh):\n"
                    "    a = jax.device_put(jnp.zeros((8, 4)), P('x'))\n"
                    "    m = jnp.max(a, axis=1, keepdims=True)\n")
    from shardcheck.cli import main
    code = main(["confirm", str(prog)])
    assert code == 1
    res = confirm.confirm_file(str(prog))
    bad = [r for r in res.rows if r.status == "disagree"]
    assert [(r.name, r.static, r.runtime) for r in bad] == [("m", "float32[8@x]", ["float32[8@x,1]"])]
    assert "disagree" in confirm.render_text([res])


@pytest.mark.parametrize("name", ["kv_cache_concat", "gram_matrix", "missing_collective",
                                  "shard_map_wrong_in_specs", "sharded_cumsum"])
def test_broken_examples_show_jax_error_next_to_the_finding(name):
    path = ROOT / "examples" / "broken" / f"{name}.py"
    res = confirm.confirm_file(str(path))
    assert res.error is not None and res.predicted, res
    marked = [i for i, l in enumerate(path.read_text().splitlines(), 1) if "# error:" in l]
    assert any(f"(line {marked[0]})" in p for p in res.predicted)
    assert res.ok


def test_an_unpredicted_runtime_error_fails(tmp_path):
    prog = tmp_path / "prog.py"
    prog.write_text("import jax.numpy as jnp\nx = jnp.zeros((3,))\nraise ValueError('boom')\n")
    res = confirm.confirm_file(str(prog))
    assert res.error["type"] == "ValueError" and res.error["line"] == 3
    assert not res.predicted and not res.ok
    assert "NOT predicted" in confirm.render_text([res])


def test_the_recorder_api():
    import jax
    import jax.numpy as jnp
    import sharding_types as st
    rec = st.Recorder()
    st.record("ignored", jnp.zeros(2))  # no recorder active: a no-op

    @jax.jit
    def f(x):
        return st.record("y", x * 2)
    with rec:
        f(jnp.zeros((4,)))
        st.record("host", 3)  # not an array: skipped
    assert rec.types == {"y": {"float32[4]"}}
