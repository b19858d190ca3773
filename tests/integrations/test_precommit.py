"""The pre-commit hook in .pre-commit-hooks.yaml, run by pre-commit itself on a temporary
repository; it fails on a file with a finding and passes on a clean one.

The default run gives pre-commit the hook exactly as the manifest declares it, with the
installed ``shardcheck`` standing in for the environment pre-commit would build
(``language: system``). The slow test (``-m slow``; CI runs it) is the whole thing:
pre-commit installs shardcheck from a snapshot of this checkout into its own
environment (a real, non-editable install, without JAX: under 60 MB) and runs the hook
from there, leaving no process behind.
"""

import contextlib
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BAD = '''import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ("data", "model"))
x = jax.device_put(jnp.zeros((8, 16)), NamedSharding(mesh, P("batch", None)))
'''


def _user_repo(tmp_path, project=None):
    """A git repository with a bad and a good file (or what ``project(repo)`` writes);
    pre-commit's environment."""
    pytest.importorskip("pre_commit")
    assert shutil.which("git")
    repo = tmp_path / "user_repo"
    repo.mkdir()
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "pc_home"), GIT_AUTHOR_NAME="t",
               GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")
    git = lambda *args: subprocess.run(["git", *args], cwd=repo, check=True,  # noqa: E731
                                       capture_output=True, env=env)
    git("init", "-q")
    if project is not None:
        project(repo)
        return repo, env, git
    (repo / "good.py").write_text("import jax\nx = jax.numpy.zeros((8,))\n")
    (repo / "bad.py").write_text(BAD)
    return repo, env, git


@contextlib.contextmanager
def _daemon_dir(env):
    """A hook given ``args: [--daemon]`` (or one that started a daemon by mistake): its
    daemons go to a private directory of the test's (a short path: Unix socket paths are
    short), stopped when the test ends."""
    directory = tempfile.mkdtemp(prefix="scd-")
    env["SHARDCHECK_DAEMON_DIR"] = directory
    env.pop("SHARDCHECK_DAEMON", None)
    try:
        yield directory
    finally:
        if os.listdir(directory):  # a start writes the daemon's log before it runs
            _stop_daemons(directory)
        shutil.rmtree(directory, ignore_errors=True)


def _stop_daemons(directory, wait=10.0):
    """Stop every daemon serving a socket in ``directory``, whichever installation runs
    it (``try-repo``'s environment is deleted when it returns; its daemon is not). A
    daemon holds its ``.lock`` for life: wait for the one a hook run started to take it,
    ask each socket to stop, and return once no lock is held. One that never took its
    lock fails to once the directory is gone."""
    import fcntl
    import time

    from shardcheck.integrations.daemon import stop
    deadline = time.monotonic() + wait
    seen_alive = False
    while time.monotonic() < deadline:
        alive = False
        for name in os.listdir(directory):
            if name.endswith(".lock"):
                with open(os.path.join(directory, name)) as f:
                    try:
                        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                        fcntl.flock(f, fcntl.LOCK_UN)
                    except OSError:
                        alive = True
        if not alive and seen_alive:
            return
        seen_alive = seen_alive or alive
        for name in os.listdir(directory):
            if name.endswith(".sock"):
                stop(os.path.join(directory, name))
        time.sleep(0.1)


def _served(script, env) -> int:
    """How many runs the daemon of ``script``'s installation has served (it must be up)."""
    r = subprocess.run([script, "daemon", "status"], env=env, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    return int(r.stdout.split(" run(s) served")[0].rsplit(", ", 1)[1])


def _assert_fails_on_bad_and_passes_on_good(hook):
    r = hook("bad.py", "good.py")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "bad.py:5:60: SC101" in r.stdout and "[unknown-mesh-axis]" in r.stdout
    r = hook("good.py")
    assert r.returncode == 0, r.stdout + r.stderr


def _local_hook(tmp_path, hook_id, project=None, **overrides):
    """The manifest's hook ``hook_id`` as a user's repository (``_user_repo``) configures
    it, with the installed package as its environment (``language: system``): (repo,
    env, script, run), where ``run(*files)`` is ``pre-commit run HOOK --files ...``."""
    from pre_commit.clientlib import load_manifest  # pre-commit's own manifest validation
    hooks = {h["id"]: h for h in load_manifest(str(ROOT / ".pre-commit-hooks.yaml"))}
    assert sorted(hooks) == ["shardcheck", "shardcheck-fix"]
    assert hooks[hook_id]["language"] == "python"
    script = shutil.which("shardcheck", path=os.path.dirname(sys.executable))
    if script is None:
        pytest.skip("needs the shardcheck script installed beside this Python")
    repo, env, git = _user_repo(tmp_path, project)
    env["PATH"] = os.path.dirname(script) + os.pathsep + env.get("PATH", "")
    local = dict(hooks[hook_id], language="system", **overrides)
    config = {"repos": [{"repo": "local", "hooks": [local]}]}
    (repo / ".pre-commit-config.yaml").write_text(json.dumps(config))  # JSON is YAML

    def run(*files):
        git("add", ".")
        return subprocess.run([sys.executable, "-m", "pre_commit", "run", hook_id,
                               "--files", *files], cwd=repo, capture_output=True, text=True,
                              env=env, timeout=300)

    return repo, env, script, run


def test_pre_commit_runs_the_hook_as_declared_in_its_own_process(tmp_path):
    """The hooks run in-process by default: a commit leaves no process behind (a
    daemon's start writes its log beside its socket before it runs: none is there)."""
    _, env, _, hook = _local_hook(tmp_path, "shardcheck")
    with _daemon_dir(env) as directory:
        _assert_fails_on_bad_and_passes_on_good(hook)
        assert os.listdir(directory) == []


def test_a_hook_given_daemon_is_served_by_one(tmp_path):
    _, env, script, hook = _local_hook(tmp_path, "shardcheck", args=["--daemon"])
    with _daemon_dir(env):
        # the first run finds no daemon: it checks in-process and starts one
        _assert_fails_on_bad_and_passes_on_good(hook)
        subprocess.run([script, "daemon", "start"], env=env, capture_output=True, timeout=120)
        before = _served(script, env)
        _assert_fails_on_bad_and_passes_on_good(hook)  # the same answers, served
        assert _served(script, env) == before + 2


def test_a_hook_given_no_daemon_runs_in_its_own_process(tmp_path):
    _, env, _, hook = _local_hook(tmp_path, "shardcheck", args=["--no-daemon"])
    with _daemon_dir(env) as directory:
        _assert_fails_on_bad_and_passes_on_good(hook)
        assert os.listdir(directory) == []


@pytest.mark.slow
@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="needs this project as a git checkout")
def test_pre_commit_hook(tmp_path):
    repo, env, git = _user_repo(tmp_path)
    # this checkout as it is now (uncommitted changes too), as a repository of one commit
    snapshot = tmp_path / "shardcheck_repo"
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, capture_output=True, text=True, check=True).stdout
    for rel in filter(None, listed.split("\0")):
        if (ROOT / rel).is_file():
            (snapshot / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, snapshot / rel)
    run = dict(cwd=snapshot, check=True, capture_output=True, env=env)
    subprocess.run(["git", "init", "-q"], **run)
    subprocess.run(["git", "add", "-A"], **run)
    subprocess.run(["git", "-c", "user.email=t@t", "commit", "-q", "-m", "snapshot"], **run)
    rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=snapshot, capture_output=True,
                         text=True, check=True).stdout.strip()
    config = {"repos": [{"repo": str(snapshot), "rev": rev, "hooks": [{"id": "shardcheck"}]}]}
    (repo / ".pre-commit-config.yaml").write_text(json.dumps(config))
    git("add", ".")

    def hook(*files):
        return subprocess.run([sys.executable, "-m", "pre_commit", "run", "shardcheck",
                               "--files", *files], cwd=repo, capture_output=True, text=True,
                              env=env, timeout=900)

    with _daemon_dir(env) as directory:
        _assert_fails_on_bad_and_passes_on_good(hook)
        assert os.listdir(directory) == []  # no daemon was started
    (environment,) = (tmp_path / "pc_home").glob("repo*/py_env-*")
    site = list(environment.glob("lib/python*/site-packages")) or \
        list(environment.glob("Lib/site-packages"))
    assert site and not (site[0] / "jax").exists() and not (site[0] / "jaxlib").exists()
    size = sum(f.stat().st_size for f in environment.rglob("*") if f.is_file() and not f.is_symlink())
    assert size < 60 * 2**20, f"the hook's environment holds {size / 2**20:.1f} MiB"


def test_the_fix_hook_rewrites_legacy_spellings_and_pre_commit_reports_the_change(tmp_path):
    repo, env, _, hook = _local_hook(tmp_path, "shardcheck-fix")
    legacy = ("import jax\nmesh = jax.sharding.Mesh(jax.devices(), ('data',))\n"
              "with mesh:\n    pass\n")
    (repo / "legacy.py").write_text(legacy)
    with _daemon_dir(env):
        r = hook("legacy.py")
    assert r.returncode == 1 and "files were modified by this hook" in r.stdout, r.stdout
    assert (repo / "legacy.py").read_text() == legacy.replace("with mesh:",
                                                              "with jax.set_mesh(mesh):")


def test_a_commit_of_one_module_gets_the_projects_answer_and_its_configs_pass(tmp_path):
    """The review's case (issue 37): a commit staging only model.py passed, though
    train.py's call of its init_params shards D_FF = 250 four ways."""
    import tinylm_project
    repo, env, _, _ = _local_hook(tmp_path, "shardcheck", args=["--no-daemon"],
                                  project=lambda r: tinylm_project.write(r, d_ff=256))
    git = lambda *args: subprocess.run(["git", *args], cwd=repo, capture_output=True,  # noqa: E731
                                       text=True, env=env, timeout=300)
    git("add", ".")
    assert git("commit", "-q", "--no-verify", "-m", "tinylm").returncode == 0
    installed = subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=repo,
                               capture_output=True, text=True, env=env, timeout=60)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    model = repo / "src" / "tinylm" / "model.py"
    model.write_text(tinylm_project.MODEL.format(d_ff=250))  # the change: only it is staged
    git("add", "src/tinylm/model.py")
    r = git("commit", "-m", "D_FF = 250")
    said = r.stdout + r.stderr  # git shows its hook's output on stderr
    assert r.returncode == 1, said
    assert "src/tinylm/model.py:10:75: SC104" in said
    assert "src/tinylm/train.py:17:18: note: `init_params` is called here" in said
    # a config staged beside it goes to the hook too, and is not read as Python
    (repo / "configs").mkdir()
    (repo / "configs" / "mesh.yaml").write_text("mesh:\n  data: 2\n  model: 4\n")
    (repo / "configs" / "rules.json").write_text('{"rules": [["embed", "model"]]}\n')
    model.write_text(tinylm_project.MODEL.format(d_ff=512))
    git("add", ".")
    r = git("commit", "-m", "D_FF = 512, and the mesh's config")
    assert r.returncode == 0, r.stdout + r.stderr
    (repo / "configs" / "mesh.yaml").write_text("mesh:\n  data: 4\n  model: 2\n")
    git("add", ".")
    r = subprocess.run([sys.executable, "-m", "pre_commit", "run", "shardcheck", "--verbose"],
                       cwd=repo, capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0 and "Passed" in r.stdout, r.stdout + r.stderr  # not Skipped
    assert "All checks passed (0 files)." in r.stdout  # no syntax error in a YAML file
    # a staged sharding config is checked: its rule names an axis its mesh_axes lacks
    (repo / "configs" / "base.yml").write_text(
        "mesh_axes: ['data', 'model']\nlogical_axis_rules: [['embed', 'modle']]\n")
    git("add", ".")
    r = subprocess.run([sys.executable, "-m", "pre_commit", "run", "shardcheck", "--verbose"],
                       cwd=repo, capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr  # a warning does not fail the commit
    assert "configs/base.yml:2:32: SC113 warning" in r.stdout, r.stdout
