"""shardcheck confirm --mesh: the jitted functions traced on a production-sized
AbstractMesh with no devices, JAX's errors at that scale next to the static analysis
at that scale, and the types JAX records there held against the inferred ones."""

import json
import pathlib
import subprocess
import sys
import textwrap

import pytest

from shardcheck.confirm import scale
from sharding_types import MeshModel
from shardcheck.check.config import parse_mesh_option

ROOT = pathlib.Path(__file__).resolve().parents[2]
PROD = "data=64,model=8"


def _cli(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "shardcheck.cli", "confirm", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def examples_at_scale():
    r = _cli("--mesh", PROD, "examples/", "--format", "json")
    return r.returncode, json.loads(r.stdout)


def _file(results, stem):
    [res] = [r for r in results if r["path"].endswith(f"/{stem}.py")]
    return res


def test_examples_at_512_devices(examples_at_scale):
    code, results = examples_at_scale
    assert code == 1  # kv_heads and shard_map_matmul do not fit the production mesh
    assert all(r["mesh"] == {"data": 64, "model": 8} for r in results)
    for stem in ("attention", "data_parallel", "fsdp", "tensor_parallel_mlp"):
        res = _file(results, stem)
        assert res["ok"], res
        assert res["calls"] and all(c["outputs"] and not c["error"] for c in res["calls"])
    rows = [row for r in results for row in r["rows"]]
    assert len(rows) >= 15 and all(row["status"] == "agree" for row in rows)


def test_a_dimension_that_divides_8_devices_but_not_512(examples_at_scale):
    """examples/kv_heads.py runs on the 2x4 mesh (12 heads over 4); at model=8 JAX
    rejects the reshard inside the jitted function, and the static analysis at that
    scale flags the same line."""
    _, results = examples_at_scale
    res = _file(results, "kv_heads")
    reshard = [i for i, l in enumerate((ROOT / "examples/kv_heads.py").read_text().splitlines(), 1)
               if "return reshard(" in l][0]
    [call] = res["calls"]
    assert call["target"] == "project_kv" and call["error"]["type"] == "ValueError"
    assert "does not evenly divide the dimension size 12" in call["error"]["message"]
    assert call["error"]["line"] == reshard
    assert f"SC104 indivisible-dimension (line {reshard})" in call["predicted"]


@pytest.mark.slow  # confirm over an example on devices (6 s): CI's -m slow leg, which runs every example
def test_kv_heads_is_clean_on_8_devices():
    from shardcheck.confirm import programs as confirm
    res = confirm.confirm_file(str(ROOT / "examples" / "kv_heads.py"))
    assert res.error is None and res.ok
    assert {r.status for r in res.rows} == {"agree"}


def test_local_shapes_inside_shard_map_at_scale(tmp_path):
    prog = tmp_path / "prog.py"
    prog.write_text(textwrap.dedent('''
        import jax
        import jax.numpy as jnp
        from jax.sharding import PartitionSpec as P

        @jax.jit
        def local(x):
            def body(b):
                c = b * 2
                return jax.lax.psum(c, "model")
            return jax.shard_map(body, in_specs=P("data", "model"), out_specs=P("data", None))(x)

        def main():
            with jax.set_mesh(jax.make_mesh((2, 4), ("data", "model"))):
                w = jax.device_put(jnp.zeros((1024, 512)), P("data", "model"))
                z = local(w)

        if __name__ == "__main__":
            main()
    '''))
    [res] = scale.confirm_scale([str(prog)], parse_mesh_option(PROD))
    assert res.ok, res
    rows = {r.name: (r.static, r.runtime, r.status) for r in res.rows}
    assert rows["c"] == ("float32[16,64]{V:(data,model)}", ["float32[16,64]{V:(data,model)}"], "agree")
    assert res.calls[0].outputs == ["float32[1024@data,64]"]  # [16,64] blocks over data only
    # and at the device scale, the same line holds a different local shape
    [small] = scale.confirm_scale([str(prog)], parse_mesh_option("data=2,model=4"))
    assert {r.name: r.runtime for r in small.rows}["c"] == ["float32[512,128]{V:(data,model)}"]


def test_a_disagreement_at_scale_is_reported(tmp_path, wrong_reduce_rule):
    """Test-only hook: the inferred type of the body is wrong; the run must say so."""
    prog = tmp_path / "prog.py"
    prog.write_text("import jax\nimport jax.numpy as jnp\nfrom jax import P\n\n"
                    "@jax.jit\ndef f(a):\n    m = jnp.max(a, axis=1, keepdims=True)\n    return m\n\n"
                    "with jax.set_mesh(jax.make_mesh((8,), ('x',))):\n"
                    "    a = jax.device_put(jnp.zeros((64, 4)), P('x'))\n    f(a)\n")
    [res] = scale.confirm_scale([str(prog)], parse_mesh_option("x=64"))
    bad = [(r.name, r.static, r.runtime) for r in res.rows if r.status == "disagree"]
    assert bad == [("m", "float32[64@x]", ["float32[64@x,1]"])]
    assert not res.ok and "disagree" in scale.render_text([res])


def test_calls_that_cannot_be_traced_say_why(tmp_path):
    prog = tmp_path / "prog.py"
    prog.write_text(textwrap.dedent('''
        import jax
        import jax.numpy as jnp
        from jax.sharding import PartitionSpec as P

        def main(data):
            @jax.jit
            def inner(x):
                return x + 1
            with jax.set_mesh(jax.make_mesh((8,), ("data",))):
                x = jax.device_put(jnp.zeros((64,)), P("data"))
                inner(x)
                outer(data)

        @jax.jit
        def outer(x):
            return x * 2
    '''))
    [res] = scale.confirm_scale([str(prog)], parse_mesh_option("data=16"))
    why = {c.target: c.skipped for c in res.calls}
    assert why == {"inner": "inner is not defined at module level",
                   "outer": "the type of argument 1 is unknown"}
    assert res.ok  # nothing traced, nothing wrong
    assert "not traced" in scale.render_text([res])


def test_an_input_the_production_mesh_cannot_hold(tmp_path):
    """The program shards over 'model'; a production mesh without it cannot build the
    input, and says so (it is not JAX's error)."""
    [res] = scale.confirm_scale([str(ROOT / "examples" / "tensor_parallel_mlp.py")],
                                parse_mesh_option("data=64"))
    [call] = res.calls
    assert call.error["stage"] == "inputs" and "lacks" in call.error["message"]
    assert any("unknown-mesh-axis" in p for p in call.predicted)
    assert "cannot be built at this scale" in scale.render_text([res])


def test_a_declared_mesh_by_name_and_bad_input(tmp_path):
    import shutil
    shutil.copy(ROOT / "examples" / "kv_heads.py", tmp_path / "kv.py")
    (tmp_path / "pyproject.toml").write_text(
        "[tool.shardcheck.meshes.production]\ndata = 64\nmodel = 8\n")
    r = _cli("--mesh", "production", str(tmp_path / "kv.py"), cwd=tmp_path)
    assert r.returncode == 1 and "512 devices, abstract" in r.stdout, r.stdout + r.stderr
    assert "does not evenly divide the dimension size 12" in r.stdout
    for bad, said in [("data=0", "positive size"), ("prod", "neither AXIS=SIZE"),
                      ("data=2,data=4", "names an axis twice")]:
        r = _cli("--mesh", bad, str(tmp_path / "kv.py"), cwd=tmp_path)
        assert r.returncode == 2 and said in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_check_at_the_production_mesh_needs_no_jax():
    r = subprocess.run([sys.executable, "-m", "shardcheck.cli", "check", "--no-cache", "--mesh", PROD,
                        "examples/kv_heads.py", "examples/data_parallel.py"], cwd=ROOT,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 1 and "kv_heads.py:36:" in r.stdout and "SC104" in r.stdout, r.stdout
    assert "the production mesh of --mesh" in r.stdout and "data_parallel" not in r.stdout


def test_the_program_main_block_does_not_run(tmp_path):
    prog = tmp_path / "prog.py"
    marker = tmp_path / "ran"
    prog.write_text(f"import jax\n\n@jax.jit\ndef f(x):\n    return x\n\n"
                    f"if __name__ == '__main__':\n    open({str(marker)!r}, 'w').write('x')\n")
    [res] = scale.confirm_scale([str(prog)], MeshModel(("x",), (4,)))
    assert res.ok and not marker.exists()


def test_abstract_array_is_an_input_of_that_type_on_an_abstract_mesh():
    import jax
    from jax.sharding import AbstractMesh, AxisType

    import sharding_types as st
    mesh = AbstractMesh((64, 8), ("data", "model"), axis_types=(AxisType.Explicit,) * 2)
    for t in ["float32[4096@data,8192]", "~float32[]", "key<fry>[]",
              "bfloat16[1024@(data,model),8]", "int32[8@model]{U:data}"]:
        x = st.abstract_array(t, mesh)
        with jax.sharding.use_abstract_mesh(mesh):
            [aval] = jax.jit(lambda a: a).trace(x).jaxpr.in_avals
        assert str(aval) == t
    for bad, said in [("float32[B@data]", "symbolic"), ("float32[8]{V:data}", "shard_map"),
                      ("float32[8@foo]", "lacks"), ("float32[", "expected")]:
        with pytest.raises(ValueError, match=said):
            st.abstract_array(bad, mesh)


def test_a_named_function_runs_alone_on_devices():
    """PATH::NAME: the function alone, on the program's own 2x4 mesh, with zeros of
    its call site's inferred input types; types and collectives as for a whole run."""
    r = _cli("examples/tensor_parallel_mlp.py::mlp", "--format", "json")
    assert r.returncode == 0, r.stdout + r.stderr
    [res] = json.loads(r.stdout)
    [call] = res["calls"]
    assert call["target"] == "mlp" and call["error"] is None
    assert call["outputs"] == ["float32[128@data,64]"] and res["devices"] == 8
    assert [(row["name"], row["status"]) for row in res["rows"]] == [("h", "agree")]
    [mod] = res["collectives"]
    assert [(c["kind"], c["axes"]) for c in mod["collectives"]] == [("all-reduce", ["model"])]


def test_a_named_function_that_cannot_run_fails(tmp_path):
    r = _cli("examples/fsdp.py::nope")
    assert r.returncode == 1 and "no call of a jitted function nope" in r.stdout, r.stdout + r.stderr
    r = _cli("examples/fsdp.py::1x")
    assert r.returncode == 2 and "PATH::NAME" in r.stderr


def test_a_file_that_fails_to_import_traces_nothing(tmp_path):
    prog = tmp_path / "prog.py"
    prog.write_text("import jax\nimport jax.numpy as jnp\nfrom jax import P\n\n"
                    "@jax.jit\ndef f(a):\n    return a * 2\n\n"
                    "with jax.set_mesh(jax.make_mesh((8,), ('x',))):\n"
                    "    a = jax.device_put(jnp.zeros((64,)), P('x'))\n    f(a)\n"
                    "raise RuntimeError('needs a dataset')\n")
    [res] = scale.confirm_scale([str(prog)], parse_mesh_option("x=64"))
    assert res.import_error["type"] == "RuntimeError" and not res.ok
    assert [(c.target, c.skipped, c.outputs) for c in res.calls] == [
        ("f", "the file failed to import", None)]
    assert "0 call(s) traced" in scale.render_text([res])
