"""confirm on a package (issue 37): a src-layout project whose types live in the modules
its scripts import. Those modules are instrumented as the program imports them, their
types compared with the analysis of the program's calls into them, and JAX's errors
matched to the findings by file and line, each shown with its file."""

import json
import os
import pathlib

from shardcheck.confirm import instrument, options, programs as confirm

MODEL = """\
import jax
import jax.numpy as jnp
from jax import P


@jax.jit
def forward(x, w):
    h = jnp.dot(x, w)  # row: h
    return jax.nn.relu(h)


def make_inputs():
    x = jax.device_put(jnp.zeros((8, 16)), P('data', None))
    w = jax.device_put(jnp.zeros((16, 4)), P(None, 'model'))
    return x, w
"""

# the typo sits on the same line number as an error-level finding in broken.py that the
# run never reaches: matched by line alone, that finding would pass for a prediction
TYPO = """\
import jax
from jax import P


def shard_batch(x):
    # the batch dimension over the data axis
    #
    #
    y = jax.device_put(x, P('dtaa', None))  # typo
    return y
"""

TRAIN = """\
import jax
from pkg.model import forward, make_inputs


def main():
    with jax.set_mesh(jax.make_mesh((2, 4), ('data', 'model'))):
        x, w = make_inputs()
        y = forward(x, w)
    return y


if __name__ == "__main__":
    main()
"""

BROKEN = """\
import jax
import jax.numpy as jnp
from jax import P
from pkg.typo import shard_batch

if __name__ == "__main__":
    with jax.set_mesh(jax.make_mesh((2, 4), ('data', 'model'))):
        x = shard_batch(jnp.zeros((8, 16)))  # raises
        z = jax.device_put(x, P('modle'))  # never reached
"""


def _line(text: str, mark: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if mark in line)


def _project(root: pathlib.Path) -> None:
    files = {"pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n\n[tool.shardcheck]\n',
             "src/pkg/__init__.py": "", "src/pkg/model.py": MODEL, "src/pkg/typo.py": TYPO,
             "scripts/train.py": TRAIN, "scripts/broken.py": BROKEN}
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_confirm_compares_and_predicts_inside_the_imported_package(tmp_path, monkeypatch, capsys):
    """`confirm scripts/` with the package on PYTHONPATH (relative, as `PYTHONPATH=src`
    or an editable install put it): rows inside src/pkg/model.py agree and show under
    their file; the typo inside the package is JAX's error, predicted at its file:line."""
    assert _line(TYPO, "# typo") == _line(BROKEN, "# never reached")
    _project(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)  # Python would cache them
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(["src"] + (
        [os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])))
    ran: list = []
    run_scripts = options.run_scripts
    monkeypatch.setattr(options, "run_scripts", lambda *a: ran.extend(run_scripts(*a)) or ran)
    from shardcheck.cli import main
    code = main(["confirm", "scripts/", "-j", "2"])
    text = capsys.readouterr().out
    assert code == 1, text  # the broken program fails, predicted or not
    results = {pathlib.Path(r.path).name: r for r in ran}
    train, broken = results["train.py"], results["broken.py"]

    assert train.error is None and train.imported == ["src/pkg/__init__.py", "src/pkg/model.py"]
    inside = {(r.line, r.name): r for r in train.rows if r.path == "src/pkg/model.py"}
    h = inside[(_line(MODEL, "# row: h"), "h")]
    assert (h.status, h.static, h.runtime) == ("agree", "float32[8@data,4@model]",
                                               ["float32[8@data,4@model]"])
    assert sum(r.status == "agree" for r in inside.values()) >= 3  # h, and make_inputs' x, w
    assert not [r for r in train.rows if r.status == "disagree"]
    # the program's rows under its header, then the package's under its file
    lines = text.splitlines()
    under = lines.index("  src/pkg/model.py (imported):")
    assert lines.index("scripts/train.py (8 cpu devices)") < under
    assert lines[under + 1].split()[:2] == [f"{_line(MODEL, '# row: h')}:5", "h"]

    typo = _line(TYPO, "# typo")
    assert broken.error["type"] == "ValueError" and "dtaa" in broken.error["message"]
    assert (broken.error["file"], broken.error["line"]) == ("src/pkg/typo.py", typo)
    assert broken.error["trace"] == [["scripts/broken.py", _line(BROKEN, "# raises")],
                                     ["src/pkg/typo.py", typo]]
    assert broken.predicted == [f"SC101 unknown-mesh-axis (src/pkg/typo.py:{typo})"]
    assert f"the program raised ValueError at src/pkg/typo.py:{typo}: Resource axis" in text
    assert f"predicted by SC101 unknown-mesh-axis (src/pkg/typo.py:{typo})" in text
    [entry] = [e for e in json.loads(confirm.render_json(ran)) if e["path"] == broken.path]
    assert entry["predictions"] == [{"code": "SC101", "name": "unknown-mesh-axis",
                                     "path": "src/pkg/typo.py", "line": typo}]
    assert entry["error"]["file"] == "src/pkg/typo.py"
    # instrumented in memory: no bytecode of the instrumented code is left behind
    assert not list((tmp_path / "src").rglob("__pycache__"))
    assert (tmp_path / "src/pkg/model.py").read_text() == MODEL


def test_only_the_projects_own_modules_are_instrumented(tmp_path):
    """Files under the project's directories; never an environment inside it (a
    site-packages, a hidden .venv or .tox), nothing outside it, never JAX."""
    project = tmp_path / "proj"
    importer = instrument.ProjectImporter(lambda key, value: value, [str(project)],
                                          outside=[str(tmp_path / "python")])
    assert importer.is_project_file(str(project / "src/pkg/model.py"))
    assert importer.is_project_file(str(project / "train.py"))
    for path in ["src/pkg/data.json", ".venv/lib/python3.11/site-packages/flax/core.py",
                 ".tox/py311/x.py", "vendor/dist-packages/y.py", "../elsewhere/z.py",
                 "../python/lib/os.py"]:
        assert not importer.is_project_file(str(project / path)), path
    assert importer.find_spec("jax.numpy") is None and importer.find_spec("shardcheck") is None


def test_a_project_below_the_interpreters_prefix_is_still_the_projects():
    """The environment is the interpreter's library and package directories, not its
    prefix: a system Python in /usr, a project in /usr/src/app."""
    import sys
    app = os.path.join(sys.base_prefix, "src", "app")
    importer = instrument.ProjectImporter(lambda key, value: value,
                                          [app, os.path.dirname(os.__file__)])
    assert importer.is_project_file(os.path.join(app, "train.py"))
    assert not importer.is_project_file(os.__file__)  # the standard library, even when inside
