"""The pre-commit hook in .pre-commit-hooks.yaml, run by pre-commit itself on a temporary
repository: it installs shardcheck from this checkout (a real, non-editable install) and
fails on a file with a finding, passes on a clean one."""

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
BAD = '''import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ("data", "model"))
x = jax.device_put(jnp.zeros((8, 16)), NamedSharding(mesh, P("batch", None)))
'''


@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="needs this project as a git checkout")
def test_pre_commit_hook(tmp_path):
    pytest.importorskip("pre_commit")
    repo = tmp_path / "user_repo"
    repo.mkdir()
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "pc_home"), GIT_AUTHOR_NAME="t",
               GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")

    def git(*args):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, env=env)

    def hook(*files):
        return subprocess.run([sys.executable, "-m", "pre_commit", "try-repo", str(ROOT),
                               "shardcheck", "--files", *files], cwd=repo, capture_output=True,
                              text=True, env=env, timeout=900)

    git("init", "-q")
    (repo / "good.py").write_text("import jax\nx = jax.numpy.zeros((8,))\n")
    (repo / "bad.py").write_text(BAD)
    git("add", ".")
    r = hook("bad.py", "good.py")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "bad.py:5:60: SC101" in r.stdout and "[unknown-mesh-axis]" in r.stdout
    r = hook("good.py")
    assert r.returncode == 0, r.stdout + r.stderr
    assert shutil.which("git")
