"""``shardcheck.analyzer.workspace``: the analysis as a library that answers for any
subset of a project (issue 37), with no cache, workers or CLI."""

from __future__ import annotations

import os

import tinylm_project
from shardcheck.analyzer.config import Config
from shardcheck.analyzer.workspace import Workspace, merge, restrict


def _project(tmp_path):
    files = tinylm_project.write(tmp_path)
    py = [str(p) for p in files.values() if p.suffix == ".py"]
    return files, Workspace(Config(root=str(tmp_path)), py)


def test_the_import_graph_and_the_importers_of_a_module(tmp_path):
    files, ws = _project(tmp_path)
    model, train, mesh = (str(files[f"src/tinylm/{n}.py"]) for n in ("model", "train", "mesh"))
    assert set(ws.imports_of(train)) == {model, mesh, str(files["src/tinylm/__init__.py"])}
    assert ws.importers([model]) == [train]
    assert set(ws.importers([mesh])) == {train, str(files["scripts/demo.py"])}
    assert ws.importers([train]) == []


def test_a_memo_spares_a_second_workspace_reading_the_files(tmp_path, monkeypatch):
    files, ws = _project(tmp_path)
    memo: dict = {}
    first = Workspace(ws.config, ws.files, memo).importers([str(files["src/tinylm/model.py"])])
    from shardcheck.analyzer import workspace
    monkeypatch.setattr(workspace, "read_source", lambda p: (_ for _ in ()).throw(AssertionError(p)))
    assert Workspace(ws.config, ws.files, memo).importers(
        [str(files["src/tinylm/model.py"])]) == first
    files["src/tinylm/train.py"].write_text("import os\n")  # changed: read again
    os.utime(files["src/tinylm/train.py"], ns=(1, 1))
    monkeypatch.undo()
    assert Workspace(ws.config, ws.files, memo).importers([str(files["src/tinylm/model.py"])]) == []


def test_check_answers_for_a_file_with_its_importers_findings(tmp_path):
    files, ws = _project(tmp_path)
    model = str(files["src/tinylm/model.py"])
    found = ws.check([model])
    assert [(f.filename, f.row, f.code) for f in found] == [(model, 10, "SC104"), (model, 11, "SC104")]
    assert [(r.filename, r.row) for r in found[0].related] == [(str(files["src/tinylm/train.py"]), 17)]


def test_restrict_keeps_the_checked_files_findings_and_merge_one_per_span(tmp_path):
    from shardcheck.analyzer.ftypes import Finding, Related
    a, b, c = (str(tmp_path / n) for n in ("a.py", "b.py", "c.py"))

    def at(path, row, code="SC101", note=None):
        related = (Related(note, a, 1, 1, 1, 2),) if note else ()
        return Finding(code, "x", "m", "error", path, row, 1, row, 2, related=related)
    results = {a: [at(a, 1), at(c, 3)],  # a's own analysis places one in c (its call)
               b: [at(a, 1, note="via b"), at(b, 2), at(c, 4)]}  # b imports a
    kept = restrict(results, [a])
    assert [(f.filename, f.row) for f in kept] == [(a, 1), (c, 3)]
    assert [r.message for r in kept[0].related] == ["via b"]  # the two at a:1, merged
    assert len(merge([at(a, 1), at(a, 1, "SC104"), at(a, 1)])) == 2


def test_importing_a_library_the_analysis_models_is_no_edge(tmp_path):
    """In jax's own tree, ``import jax`` names the project's ``jax/__init__.py``, but the
    analysis reads jax as the library it models, never as project code: a file that
    imports only that is no importer of it (a pre-commit run on one of jax's modules
    analysed 856 of them)."""
    (tmp_path / "jax").mkdir()
    (tmp_path / "jax" / "__init__.py").write_text("from jax.core import f\n")
    (tmp_path / "jax" / "core.py").write_text("def f(x):\n    return x\n")
    (tmp_path / "mine.py").write_text("def g(x):\n    return x\n")
    (tmp_path / "user.py").write_text("import jax\nimport jax.core\nimport mine\n")
    files = [str(tmp_path / p) for p in ("jax/__init__.py", "jax/core.py", "mine.py", "user.py")]
    ws = Workspace(Config(root=str(tmp_path)), files)
    assert ws.imports_of(files[3]) == (files[2],)
    assert ws.importers([files[1]]) == [] and ws.importers([files[2]]) == [files[3]]
