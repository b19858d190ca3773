"""shardcheck confirm runs programs as a test runner would: each in its own temporary
cwd, stdin closed, its own process group, a timeout; program endings; the exit status
contract; where it runs (``--platform``, ``--devices``) and its refusals."""

import json
import os
import pathlib
import subprocess
import sys
import textwrap
import time

import pytest

from shardcheck.confirm import sandbox as rn

ROOT = pathlib.Path(__file__).resolve().parents[2]

HEAD = "import jax\nimport jax.numpy as jnp\nfrom jax import P\n"
MESH8 = ("mesh = jax.make_mesh((2, 4), ('x', 'y'))\n"
         "with jax.set_mesh(mesh):\n    a = jax.device_put(jnp.zeros((8, 4)), P('x'))\n")

CLEAN = {  # programs that end normally, each in its own way
    "exit_zero.py": HEAD + "import sys\n\ndef main():\n" + textwrap.indent(MESH8, "    ")
    + "    return 0\n\nsys.exit(main())\n",
    "exit_none.py": HEAD + "import sys\n\ndef main():\n    b = jnp.ones((4,))\n\n"
    "raise SystemExit(main())\n",  # absl's app.run(main) ends so: SystemExit(None)
    "writes_and_reads.py": HEAD + "import sys\n" + MESH8
    + "data = sys.stdin.read()\nopen('out.txt', 'w').write('x' + data)\n"
    "import helper_mod\nc = jnp.zeros((helper_mod.N,))\n",
    "helper_mod.py": "N = 4\n",
    "no_newline.py": HEAD + "import io, sys\nb = jnp.ones((4,))\n"
    "print('no final newline', end='')\nsys.stdout = io.StringIO()\n",
    "background.py": HEAD + "import subprocess, sys\nb = jnp.ones((4,))\n"
    "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])\n",
}

FAILING = {
    "hang.py": HEAD + "import time\nb = jnp.ones((4,))\ntime.sleep(600)\n",
    "os_exit.py": HEAD + "import os\nb = jnp.ones((4,))\nos._exit(3)\n",
    "exit_two.py": HEAD + "import sys\nb = jnp.ones((4,))\nsys.exit(2)\n",
}


def _confirm(cwd, *args, timeout=600):
    return subprocess.run([sys.executable, "-m", "shardcheck.cli", "confirm", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)


def _write(folder: pathlib.Path, programs: dict) -> None:
    folder.mkdir()
    for name, text in programs.items():
        (folder / name).write_text(text)


@pytest.mark.slow  # end to end, child processes and their budgets: CI's `-m slow` leg
def test_programs_that_end_normally_pass_and_leave_the_cwd_clean(tmp_path):
    """sys.exit(0), sys.exit(main()), SystemExit(None), a program writing in its cwd and
    reading stdin, one printing no final newline and replacing sys.stdout, one leaving
    a background child holding stdout: every type agrees, exit 0, nothing stalls."""
    _write(tmp_path / "progs", CLEAN)
    before = sorted(os.listdir(tmp_path))
    started = time.monotonic()
    programs = sorted(set(CLEAN) - {"helper_mod.py"})  # a module they import: no program
    r = _confirm(tmp_path, *(f"progs/{p}" for p in programs), "--format", "json", "-j", "2")
    assert time.monotonic() - started < 110, "a background child stalled confirm"
    assert r.returncode == 0, r.stdout + r.stderr
    results = {pathlib.Path(res["path"]).name: res for res in json.loads(r.stdout)}
    assert sorted(results) == programs
    for name, res in results.items():
        assert res["error"] is None and res["ok"], (name, res)
        assert res["backend"] == "cpu" and res["devices"] == 8 and res["device_kind"] == "cpu"
    statuses = {(name, row["name"]): row["status"] for name, res in results.items()
                for row in res["rows"]}
    for key in [("exit_zero.py", "a"), ("exit_none.py", "b"), ("writes_and_reads.py", "a"),
                ("no_newline.py", "b"), ("background.py", "b")]:
        assert statuses[key] == "agree", (key, statuses)
    assert sorted(os.listdir(tmp_path)) == before and not (tmp_path / "progs" / "out.txt").exists()


@pytest.mark.slow  # end to end, child processes and their budgets: CI's `-m slow` leg
def test_a_hang_and_abnormal_exits_fail_with_their_status(tmp_path):
    """A program past --timeout is killed and reported; os._exit(3) and sys.exit(2) are
    failures with their status; the types recorded before an exit survive it."""
    _write(tmp_path / "progs", FAILING)
    # the hang alone under a short --timeout (it times out wherever it is, JAX's import
    # included); the exits beside it, concurrently, under the default one
    hang = subprocess.Popen([sys.executable, "-m", "shardcheck.cli", "confirm", "progs/hang.py",
                             "--timeout", "3", "--format", "json"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    r = _confirm(tmp_path, "progs/os_exit.py", "progs/exit_two.py", "-j", "2", "--format", "json")
    hang_out, hang_err = hang.communicate(timeout=600)
    assert r.returncode == 1, r.stdout + r.stderr
    assert hang.returncode == 1, hang_out + hang_err
    results = {pathlib.Path(res["path"]).name: res
               for res in json.loads(r.stdout) + json.loads(hang_out)}
    errors = {name: (res["error"]["type"], res["error"]["message"]) for name, res in results.items()}
    assert errors == {"hang.py": ("Timeout", "timed out after 3 s"),
                      "os_exit.py": ("os._exit", "exited with status 3"),
                      "exit_two.py": ("SystemExit", "exited with status 2")}
    for name in ("os_exit.py", "exit_two.py"):
        assert [(row["name"], row["status"]) for row in results[name]["rows"]] == [("b", "agree")]
    assert not any(res["ok"] for res in results.values())


@pytest.mark.slow  # end to end, child processes and their budgets: CI's `-m slow` leg
def test_devices_are_honoured_or_the_program_is_not_run(tmp_path):
    """--platform cpu --devices 4: a (2, 2) mesh runs on 4 CPU devices; a (2, 4) one is
    "not run: needs 8 devices", not an unpredicted runtime error, unless the program set
    up too few devices itself (SC109's prediction); exit 1."""
    _write(tmp_path / "progs", {
        "four.py": HEAD + "mesh = jax.make_mesh((2, 2), ('x', 'y'))\nwith jax.set_mesh(mesh):\n"
        "    a = jax.device_put(jnp.zeros((8, 4)), P('x'))\n",
        "eight.py": HEAD + MESH8,
        # too few devices set up by the program itself: its bug, which SC109 predicts
        "own_four.py": HEAD + "jax.config.update('jax_num_cpu_devices', 4)\n" + MESH8})
    r = _confirm(tmp_path, "progs/four.py", "progs/eight.py", "progs/own_four.py", "--platform",
                 "cpu", "--devices", "4", "--format", "json")
    assert r.returncode == 1, r.stdout + r.stderr
    results = {pathlib.Path(res["path"]).name: res for res in json.loads(r.stdout)}
    assert results["four.py"]["ok"] and results["four.py"]["devices"] == 4
    assert results["four.py"]["needs_devices"] == 4
    eight = results["eight.py"]
    assert eight["not_run"] == "needs 8 devices; ran with 4 cpu" and not eight["ok"]
    own = results["own_four.py"]
    assert own["not_run"] is None and own["error"]["type"] == "ValueError"
    assert [p.split()[:2] for p in own["predicted"]] == [["SC109", "mesh-device-count"]]
    text = _confirm(tmp_path, "progs/eight.py", "--devices", "4").stdout
    assert "not run: needs 8 devices" in text and "NOT predicted" not in text


def test_device_options_that_cannot_be_honoured_are_refused(tmp_path):
    prog = tmp_path / "p.py"
    prog.write_text(HEAD + "b = jnp.ones((4,))\n")
    found = rn.platforms()
    absent = next(p for p in ("tpu", "gpu") if p not in found)  # no machine has both here
    for flag, said in [(["--devices", "0"], "--devices must be at least 1"),
                       (["--timeout", "-1"], "--timeout takes a number of seconds"),
                       (["--mesh", "x=4", "--devices", "4"], "--devices cannot apply with --mesh"),
                       (["--platform", absent], f"--platform {absent}: JAX finds no {absent}")]:
        r = _confirm(tmp_path, str(prog), *flag)
        assert r.returncode == 2 and said in r.stderr and "Traceback" not in r.stderr, (flag, r.stderr)
    (tmp_path / "pyproject.toml").write_text("[tool.shardcheck]\nconfirm-timeout = 'soon'\n")
    r = _confirm(tmp_path, str(prog))
    assert r.returncode == 2 and "confirm-timeout takes a number of seconds" in r.stderr, r.stderr


def test_devices_are_chosen_like_a_user_would():
    gpu = {"cpu": rn.Platform("cpu", "cpu", 0), "gpu": rn.Platform("gpu", "NVIDIA H100", 1)}
    def where(*args):
        plan = rn.choose_devices(gpu, *args)
        return plan.platform, plan.devices
    plan = rn.choose_devices(gpu, 8)
    assert (plan.platform, plan.devices) == ("cpu", 8)
    assert plan.note == ("needs 8 devices; this machine has 1 gpu: ran on 8 cpu devices; "
                         "`--platform gpu` to force")
    assert where(None) == ("gpu", 1)  # a mesh sized by jax.device_count()
    assert where(1) == ("gpu", 1)
    assert where(8, "gpu") == ("gpu", 1)  # forced
    assert where(None, "cpu") == ("cpu", 8)
    assert where(None, None, 4) == ("cpu", 4)
    assert rn.choose_devices({"cpu": gpu["cpu"]}, 16).devices == 16
    with pytest.raises(rn.UsageError, match="--devices 4: the gpu has 1 device and JAX cannot"):
        rn.check_options(gpu, "gpu", 4)
    with pytest.raises(rn.UsageError, match="--platform tpu: JAX finds no tpu"):
        rn.check_options(gpu, "tpu", None)


def test_the_devices_a_source_states():
    src = (ROOT / "examples" / "tensor_parallel_mlp.py").read_bytes()
    assert rn.mesh_devices(src, "examples/tensor_parallel_mlp.py") == 8
    sized = (HEAD + "n = jax.device_count()\nmesh = jax.make_mesh((n,), ('x',))\n").encode()
    assert rn.mesh_devices(sized, "p.py") is None


def test_errors_are_cut_between_words():
    text = "Sharding spec ('model',) implies that array axis 2 is partitioned 8 times " * 4
    short = rn.shorten(text, 80)
    assert len(short) <= 80 and short.endswith("…") and text.startswith(short[:-1])
    assert text[len(short) - 1] in " ,"  # the cut falls between words
    assert rn.shorten("short", 80) == "short"


@pytest.mark.slow  # end to end, child processes and their budgets: CI's `-m slow` leg
def test_a_module_that_hangs_on_import_times_out_at_scale(tmp_path):
    """--mesh imports each file: one that never finishes importing is stopped too."""
    prog = tmp_path / "p.py"
    prog.write_text("import time\nimport jax\n\n@jax.jit\ndef f(x):\n    return x\n\n"
                    "time.sleep(600)\n")
    r = _confirm(tmp_path, "--mesh", "x=4", str(prog), "--timeout", "3", timeout=120)
    assert r.returncode == 1 and "importing it timed out after 3 s" in r.stdout, r.stdout + r.stderr


@pytest.mark.slow  # end to end, child processes and their budgets: CI's `-m slow` leg
def test_progress_shows_on_a_terminal_only(tmp_path):
    """A progress line per finished program when stderr is a terminal; none when piped
    (every other test here pipes it) or when CI is set."""
    import pty
    prog = tmp_path / "p.py"
    prog.write_text(HEAD + "b = jnp.ones((4,))\n")
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["TERM"] = "xterm"
    seen = {}
    for ci in (False, True):
        master, slave = pty.openpty()
        proc = subprocess.Popen([sys.executable, "-m", "shardcheck.cli", "confirm", str(prog)],
                                cwd=tmp_path, stdout=subprocess.PIPE, stderr=slave, text=True,
                                env=dict(env, CI="true") if ci else env)
        os.close(slave)
        out = proc.communicate(timeout=300)[0]
        chunks = []
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:  # the terminal closed with the process
                break
            if not data:
                break
            chunks.append(data.decode())
        os.close(master)
        assert proc.returncode == 0, out
        seen[ci] = "".join(chunks)
    assert "1/1  " in seen[False] and "p.py: ok" in seen[False], seen
    assert seen[True] == "", seen


# -- what confirm runs (issue 36): programs only, and it says it runs your code --------

def test_a_directory_runs_its_programs_only(tmp_path):
    """`confirm .` executed every .py file as __main__: setup.py, library modules (an
    ImportError on their relative imports) and scripts with no JAX. Now: files with an
    `if __name__ == "__main__":` guard, and those confirm-programs lists."""
    ran = tmp_path / "ran"
    ran.mkdir()

    def marks(name: str) -> str:
        return f"open({str(ran / name)!r}, 'w').close()\n"
    _write(tmp_path / "proj", {
        "setup.py": marks("setup.py") + "from setuptools import setup\n",
        "lib.py": marks("lib.py") + HEAD + "b = jnp.ones((4,))\n",
        "script.py": HEAD + "\ndef main():\n    b = jnp.ones((4,))\n\n\nif __name__ == '__main__':\n"
                     "    " + marks("script.py") + "    main()\n",
        "listed.py": marks("listed.py") + HEAD + "c = jnp.ones((4,))\n"})
    (tmp_path / "pyproject.toml").write_text('[tool.shardcheck]\nconfirm-programs = ["proj/listed.py"]\n')
    r = _confirm(tmp_path, "proj", "--format", "json", "-j", "2")
    assert r.returncode == 0, r.stdout + r.stderr
    assert sorted(pathlib.Path(res["path"]).name for res in json.loads(r.stdout)) == [
        "listed.py", "script.py"]
    assert sorted(os.listdir(ran)) == ["listed.py", "script.py"]
    assert r.stderr.count("\n") == 1 and "not run: 2 file(s) found that are not programs" in r.stderr
    assert "proj/lib.py" in r.stderr and "proj/setup.py" in r.stderr
    # a file named is run, program or not
    r = _confirm(tmp_path, "proj/lib.py", "--format", "json")
    assert r.returncode == 0 and (ran / "lib.py").exists(), r.stdout + r.stderr


def test_a_directory_without_programs_is_refused(tmp_path):
    _write(tmp_path / "lib", {"a.py": HEAD + "b = jnp.ones((4,))\n", "setup.py": "x = 1\n"})
    r = _confirm(tmp_path, "lib")
    assert r.returncode == 2 and "confirm found no program to run under lib" in r.stderr
    assert r.stdout == ""


def test_help_says_confirm_runs_your_code():
    r = subprocess.run([sys.executable, "-m", "shardcheck.cli", "confirm", "--help"],
                       capture_output=True, text=True)
    assert "confirm EXECUTES YOUR CODE" in " ".join(r.stdout.split())
    top = subprocess.run([sys.executable, "-m", "shardcheck.cli", "--help"], capture_output=True,
                         text=True).stdout
    assert "(it executes your code)" in " ".join(top.split())


@pytest.fixture
def small_disk(tmp_path):
    """A 4 MiB file system (tmpfs; root only), or a skip."""
    where = tmp_path / "disk"
    where.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(where)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a small file system here: {r.stderr.strip()}")
    yield where
    subprocess.run(["umount", "-l", str(where)], capture_output=True)


def test_a_program_that_fills_the_disk_says_so(tmp_path, small_disk):
    """A real full disk: the sandbox lives in TMPDIR, a 4 MiB file system the program
    fills; neither the program's output nor the driver's results can be written."""
    prog = tmp_path / "fill.py"
    prog.write_text(HEAD + "b = jnp.ones((4,))\n"
                    "with open('big.bin', 'wb') as f:\n    f.write(b'x' * (8 << 20))\n")
    env = dict(os.environ, TMPDIR=str(small_disk))
    r = subprocess.run([sys.executable, "-m", "shardcheck.cli", "confirm", str(prog)],
                       cwd=tmp_path, capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 1, r.stdout + r.stderr
    assert f"the program ran out of disk space (No space left on device) in {small_disk}" in r.stdout
    assert "1 ran out of disk space" in r.stdout and "Traceback" not in r.stderr
