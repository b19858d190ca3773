"""shardcheck confirm: static types against jax.typeof, value by value, and JAX's errors
next to the static findings."""

import json
import pathlib
import subprocess
import sys

import pytest

from shardcheck.confirm import programs as confirm

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
BROKEN = sorted((ROOT / "examples" / "broken").glob("*.py"))


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "shardcheck.cli", "confirm", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def examples_run():
    r = _cli("examples/", "--format", "json")
    return r.returncode, r.stdout + r.stderr, json.loads(r.stdout) if r.stdout.startswith("[") else None


@pytest.mark.slow  # confirm runs every example: CI's -m slow leg
def test_confirm_examples_agrees_everywhere_and_exits_0(examples_run):
    code, out, results = examples_run
    assert code == 0, out
    assert len(results) == len(EXAMPLES)
    rows = [row for res in results for row in res["rows"]]
    assert all(res["error"] is None for res in results)
    assert not [row for row in rows if row["status"] == "disagree"]
    assert sum(row["status"] == "agree" for row in rows) >= 50
    assert all(res["devices"] == 8 for res in results)


def _functions(results, example):
    [res] = [r for r in results if r["path"].endswith(f"{example}.py")]
    return {m["function"]: m for m in res["collectives"]}


@pytest.mark.slow  # confirm runs every example: CI's -m slow leg
def test_tensor_parallel_mlp_reports_the_row_parallel_all_reduce(examples_run):
    _, _, results = examples_run
    mlp = _functions(results, "tensor_parallel_mlp")["mlp"]
    [c] = mlp["collectives"]
    # the row-parallel dot contracts over F, sharded over 'model': each device's partial
    # [B/2, D] block is summed over the 4 'model' devices (x @ w_in needs nothing)
    row_parallel = [i for i, l in enumerate((ROOT / "examples/tensor_parallel_mlp.py").read_text()
                                            .splitlines(), 1) if "return jnp.dot(h, w_out" in l]
    assert (c["kind"], c["axes"], c["line"]) == ("all-reduce", ["model"], row_parallel[0])
    assert c["shape"] == "f32[64,64]" and c["result_bytes"] == 64 * 64 * 4
    assert c["bytes"] == 2 * 3 * c["result_bytes"] // 4
    assert mlp["mesh"] == {"data": 2, "model": 4} and mlp["bytes"] == c["bytes"]


@pytest.mark.slow  # confirm runs every example: CI's -m slow leg
def test_data_parallel_reports_the_gradient_all_reduce(examples_run):
    _, _, results = examples_run
    step = _functions(results, "data_parallel")["train_step"]
    reduces = [c for c in step["collectives"] if c["kind"] == "all-reduce"]
    assert reduces and all(c["axes"] == ["data"] for c in reduces)
    # the gradients of the replicated parameters are summed over the 8 'data' devices
    # (XLA combines them, and the loss, into one tuple all-reduce)
    params = (32 * 128 + 128 + 128 * 8 + 8) * 4
    assert sum(c["result_bytes"] for c in reduces) >= params
    assert not [c for c in step["collectives"] if c["kind"] == "all-gather"]


@pytest.mark.slow  # confirm runs every example: CI's -m slow leg
def test_fsdp_reports_the_weight_all_gathers(examples_run):
    _, _, results = examples_run
    step = _functions(results, "fsdp")["train_step"]
    gathers = sorted(c["shape"] for c in step["collectives"] if c["kind"] == "all-gather")
    assert gathers == ["f32[256,16]", "f32[64,256]"]  # reshard(w, P()) of both weights
    assert all(c["axes"] == ["data"] for c in step["collectives"])


def test_a_collective_budget_fails_the_run():
    r = _cli("examples/tensor_parallel_mlp.py", "examples/data_parallel.py",
             "--max-collective-bytes", "30KiB", "--format", "json")
    assert r.returncode == 1, r.stdout + r.stderr
    results = json.loads(r.stdout)
    over = {m["function"]: m["over_budget"] for res in results for m in res["collectives"]}
    assert over == {"mlp": False, "train_step": True}  # 24 KiB of all-reduce vs 36 KiB
    assert all(res["max_collective_bytes"] == 30 * 1024 for res in results)
    text = confirm.render_text([confirm.FileResult(
        "x.py", [], None, [], "cpu", 8,
        [confirm.hlo.HloModule("jit_f", 8, [confirm.hlo.Collective(
            "all-gather", "f32[1024]{0}", ((0, 1),), 4096, 2048)])], 1024)])
    assert "OVER the budget of 1.0 KiB" in text and "1 function(s) over the collective budget" in text


@pytest.mark.slow  # a second confirm run for the budget's source (6 s): CI's -m slow leg
def test_the_budget_can_come_from_config(tmp_path):
    import shutil
    shutil.copy(ROOT / "examples" / "tensor_parallel_mlp.py", tmp_path / "mlp.py")
    (tmp_path / "pyproject.toml").write_text('[tool.shardcheck]\nmax-collective-bytes = "1KiB"\n')
    r = subprocess.run([sys.executable, "-m", "shardcheck.cli", "confirm", str(tmp_path / "mlp.py")],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 1 and "OVER the budget of 1.0 KiB" in r.stdout, r.stdout + r.stderr
    r = subprocess.run([sys.executable, "-m", "shardcheck.cli", "confirm", str(tmp_path / "mlp.py"),
                        "--max-collective-bytes", "nope"], capture_output=True, text=True)
    assert r.returncode == 2 and "64MiB" in r.stderr and "Traceback" not in r.stderr


def test_a_wrong_static_rule_is_a_disagreement(wrong_reduce_rule, tmp_path):
    """Test-only hook: break the reduction rule (forget keepdims) in-process; the
    runtime half still records what JAX says, so confirm must disagree and exit 1."""
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


# The default run confirms a few broken programs of different kinds; CI's `-m slow` leg
# confirms them all. That each one fails under JAX with its finding on the marked line
# is tested for every program in the default run too (tests/test_examples_analyzed.py).
SAMPLE = ["missing_collective.py", "unknown_axis_typo.py", "deprecated_check_rep.py",
          "shard_map_arity.py"]


@pytest.mark.parametrize("which", [
    pytest.param(SAMPLE, id="sample"),
    pytest.param(None, id="all", marks=pytest.mark.slow)])
def test_every_broken_example_shows_jax_error_next_to_the_finding(which):
    """Each program in examples/broken/ fails under JAX; confirm names JAX's error and,
    beside it, the static finding on the line marked ``# error:``."""
    paths = ["examples/broken/"] if which is None else [f"examples/broken/{n}" for n in which]
    r = _cli(*paths, "--format", "json")
    # every error was predicted, yet each program is broken: a CI job must fail
    assert r.returncode == 1, r.stdout + r.stderr
    results = json.loads(r.stdout)
    assert len(results) == (len(BROKEN) if which is None else len(which))
    for res in results:
        marked = [i for i, l in enumerate(pathlib.Path(res["path"]).read_text().splitlines(), 1)
                  if "# error:" in l]
        assert res["error"] is not None and res["predicted"], res["path"]
        assert any(f"(line {marked[0]})" in p for p in res["predicted"]), (res["path"], res["predicted"])


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
