"""`pip install shardcheck` installs no JAX (issue 40): every command but `confirm` works
in a Python that cannot import it, with the answers they give beside JAX, and `confirm`
says which extra is missing. The slow pre-commit test installs the hook's environment
from this checkout, without JAX, and runs it."""

import os
import re
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "examples")

# a Python in which jax and jaxlib cannot be found, as in an environment without them
_NO_JAX = textwrap.dedent('''
    import importlib.abc, sys

    class _NoJax(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("jax", "jaxlib"):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, _NoJax())
    for m in [m for m in sys.modules if m.split(".")[0] in ("jax", "jaxlib")]:
        del sys.modules[m]
    from shardcheck.cli import main
    status = main(sys.argv[1:])
    assert not [m for m in sys.modules if m.split(".")[0] in ("jax", "jaxlib")]
    sys.exit(status)
    ''')


def _run(*argv, jax=False):
    cmd = [sys.executable, "-m", "shardcheck"] if jax else [sys.executable, "-c", _NO_JAX]
    return subprocess.run(cmd + list(argv), cwd=EXAMPLES, capture_output=True, text=True,
                          timeout=300)


@pytest.mark.parametrize("argv", [
    ("check", "--no-cache", "broken/"),
    # the whole examples tree, twice (12 s): CI's -m slow leg; broken/ above is the default's
    pytest.param(("check", "--no-cache", "--format", "json", "."), marks=pytest.mark.slow),
    ("specs", "broken/"),
    ("types", "broken/"),
    ("explain", "SC101"),
])
def test_a_command_needs_no_jax_and_answers_as_beside_it(argv):
    without, beside = _run(*argv), _run(*argv, jax=True)
    assert "Traceback" not in without.stderr, without.stderr
    assert (without.returncode, without.stdout) == (beside.returncode, beside.stdout)


def test_confirm_without_jax_names_the_extra_it_needs():
    r = _run("confirm", "broken/")
    assert r.returncode == 2 and "shardcheck[jax]" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


def test_the_package_requires_no_jax_and_its_extra_does():
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        project = tomllib.load(f)["project"]

    def names(requirements):
        return {re.split(r"[<>=!~;\[ ]", r, maxsplit=1)[0].lower() for r in requirements}
    assert not names(project["dependencies"]) & {"jax", "jaxlib"}
    assert {"jax", "jaxlib"} <= names(project["optional-dependencies"]["jax"])
