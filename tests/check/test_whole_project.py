"""The project is the unit (issue 37): checking part of a project gives the project's
answer for that part, whichever part, in whatever order, cold or warm.

The project (``tests/tinylm_project.py``): ``model.py``'s ``D_FF = 250`` does not divide
over the model axis of the mesh ``train.py`` passes to ``init_params`` (JAX raises
there, as the first test shows); ``scripts/demo.py`` misspells an axis of the package's
mesh. An outside review found ``check model.py`` (what pre-commit runs when only
``model.py`` is staged) passing, and a single-file run's cached answer given to the
whole tree."""

from __future__ import annotations

import itertools
import json
import shutil

import pytest

import tinylm_project
from test_robustness import run

MODEL, TRAIN, DEMO = "src/tinylm/model.py", "src/tinylm/train.py", "scripts/demo.py"


def _found(out: str):
    """(file, row, code) of each finding of a JSON report, and the notes of each."""
    return sorted((f["filename"], f["location"]["row"], f["code"],
                   tuple((r["filename"], r["location"]["row"]) for r in f["related"]))
                  for f in json.loads(out))


def _check(root, *args):
    code, out, err = run(["check", "--format", "json", *args], root)
    assert code in (0, 1), err
    return _found(out)


@pytest.fixture
def project(tmp_path):
    tinylm_project.write(tmp_path)
    return tmp_path


def test_what_jax_says_of_the_project(tmp_path):
    tinylm_project.write(tmp_path / "broken")
    tinylm_project.write(tmp_path / "fixed", d_ff=256)
    broken = tinylm_project.run(tmp_path / "broken")
    assert broken["status"] == "error" and "does not evenly divide the dimension size 250" \
        in broken["error"]
    fixed = tinylm_project.run(tmp_path / "fixed")
    assert fixed["status"] == "ok" and fixed["result"] == [16, 64], fixed


def test_a_file_alone_gets_the_findings_its_importers_calls_cause(project):
    whole = _check(project, "--no-cache", ".")
    alone = _check(project, "--no-cache", MODEL)
    in_model = [f for f in whole if f[0] == MODEL]
    assert alone == in_model and [f[1:3] for f in alone] == [(10, "SC104"), (11, "SC104")]
    # each names the call in train.py that gave init_params the mesh
    assert all(f[3] == (("src/tinylm/train.py", 17),) for f in alone)
    tinylm_project.write(project, d_ff=256)
    assert _check(project, "--no-cache", MODEL) == []


def test_a_script_beside_the_package_resolves_it_alone_as_in_the_whole_tree(project):
    alone = _check(project, "--no-cache", DEMO)
    assert [f[:3] for f in alone] == [(DEMO, 10, "SC101")]
    assert alone == [f for f in _check(project, "--no-cache", ".") if f[0] == DEMO]


TARGETS = {"model": [MODEL], "train": [TRAIN], "demo": [DEMO], "subset": [MODEL, DEMO],
           "tree": ["."]}


def _answers(root):
    return {name: _check(root, "--no-cache", *paths) for name, paths in TARGETS.items()}


@pytest.mark.parametrize("order", [("model", "tree", "demo", "subset", "train"),
                                   ("tree", "model", "train", "demo", "subset"),
                                   ("demo", "subset", "train", "tree", "model")])
def test_every_order_of_runs_gives_each_run_the_projects_answer(project, order):
    """The review's cache case: a single-file run whose entry the whole-tree run took
    (and the other way round). Each run, cold then warm, must equal its --no-cache run."""
    expected = _answers(project)
    assert expected["model"] and expected["demo"] and expected["tree"]
    cache = project / ".shardcheck_cache"
    for name in order + order:  # cold, then every entry warm
        assert _check(project, *TARGETS[name]) == expected[name], (name, order)
    shutil.rmtree(cache)


def test_an_edit_of_an_importer_reaches_the_cached_answer_of_the_file_it_imports(project):
    assert [f[2] for f in _check(project, MODEL)] == ["SC104", "SC104"]
    train = project / TRAIN
    train.write_text(train.read_text().replace("make_mesh()", "make_mesh(model=2)"))
    assert _check(project, MODEL) == []  # 250 divides over 2: the cached answer is not kept


# edits of imported modules: (file, old, new); some leave what an importer read alone (its
# cached result stands), others change it (the importer is analysed again)
EDITS = [
    (MODEL, "\n\ndef mlp(", "\n\ndef unused():\n    return D_MODEL\n\n\ndef mlp("),
    (MODEL, "D_MODEL = 64\n", "D_MODEL = 64  # the width\n"),
    (MODEL, '    h = jnp.dot(x, params["w_in"])', '    h = jnp.dot(x, params["w_in"]) * 2'),
    ("src/tinylm/mesh.py", "data: int = 2", "data: int = 1"),  # what every caller reads
    (MODEL, "D_FF = 250", "D_FF = 256"),
    ("src/tinylm/mesh.py", '("data", "model")', '("data", "modle")'),
    ("src/tinylm/mesh.py", "import jax\n", "import jax\n\nTOP = 1\n"),  # rows move
]


def test_after_each_edit_of_an_imported_module_every_run_gives_the_projects_answer(project):
    """An importer's cached result depends on what it looked up in the module edited
    (``analyzer.slices``): whichever edit, each run warm equals its --no-cache run."""
    for name in TARGETS:
        _check(project, *TARGETS[name])  # every entry warm
    changed = []
    for path, old, new in EDITS:
        f = project / path
        assert old in f.read_text(), (path, old)
        f.write_text(f.read_text().replace(old, new, 1))
        for name in ("model", "tree"):  # a file its importers' calls reach, and all
            expected = _check(project, "--no-cache", *TARGETS[name])
            assert _check(project, *TARGETS[name]) == expected, (path, new, name)
        changed.append(expected)
    assert len({tuple(c) for c in changed}) >= 3  # the edits changed the answer too


def test_one_finding_per_mistake_and_the_summary_counts_the_files_it_names(tmp_path):
    """One spec that two uses check is one finding, its notes merged; a finding a
    checked file's call places in a module it calls is counted as that module's."""
    (tmp_path / "pyproject.toml").write_text("[tool.shardcheck]\n")
    (tmp_path / "shapes.py").write_text(
        "import jax\nfrom jax.sharding import NamedSharding, PartitionSpec as P\n\n\n"
        "def place(mesh, x):\n    return jax.device_put(x, NamedSharding(mesh, P('data', 'model')))\n")
    (tmp_path / "main.py").write_text(
        "import jax\nimport jax.numpy as jnp\nfrom jax.sharding import NamedSharding, PartitionSpec as P\n"
        "from shapes import place\n\n"
        "mesh = jax.make_mesh((2, 4), ('data', 'model'))\nspec = P('batch')\n"
        "f = jax.jit(lambda x: x, in_shardings=NamedSharding(mesh, spec), "
        "out_shardings=NamedSharding(mesh, spec))\n"
        "y = place(mesh, jnp.zeros((8, 6)))\n")
    code, out, _ = run(["check", "--no-cache", "--output-format", "concise", "main.py"], tmp_path)
    lines = out.splitlines()
    assert code == 1
    assert sum(": SC101 " in ln for ln in lines) == 1  # P('batch'): one finding, two uses
    assert any(ln.startswith("shapes.py:6:") and "SC104" in ln for ln in lines)
    assert "main.py:9:5: note: `place` is called here" in out
    assert lines[-2] == ("Found 2 errors and 0 warnings in 1 of 1 file checked, and in 1 "
                         "file whose functions they call.")


@pytest.mark.parametrize("paths", [p for n in (1, 2) for p in itertools.combinations(
    [MODEL, TRAIN, DEMO], n)])
def test_a_subset_is_the_whole_trees_answer_for_it_plus_what_its_calls_place_elsewhere(
        project, paths):
    whole = _check(project, "--no-cache", ".")
    part = _check(project, "--no-cache", *paths)
    assert [f for f in whole if f[0] in paths] == [f for f in part if f[0] in paths]
