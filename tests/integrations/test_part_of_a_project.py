"""The commands that take part of a project give the project's answer for that part
(issue 37): ``types`` and ``specs`` resolve a file's imports as they do when the whole
tree is named, and ``check`` takes the config files pre-commit stages beside the Python
ones without reading them as Python."""

from __future__ import annotations

import json

import tinylm_project
from test_cli_check import run


def _rows(command, named, cwd, path):
    code, out, err = run([command, *named, "--format", "json"], cwd)
    assert code == 0, err
    data = json.loads(out)
    if command == "types":
        return [r for r in data["types"] if r["path"] == path]
    return [r for r in data["sites"] if r["filename"] == path]


def test_types_and_specs_of_one_file_resolve_its_imports_as_the_whole_trees(tmp_path):
    files = tinylm_project.write(tmp_path)
    # a script beside the package: its directory is not where `tinylm` is found
    (tmp_path / "scripts" / "train.py").write_text(files["src/tinylm/train.py"].read_text())
    for path in ("scripts/train.py", "src/tinylm/train.py"):
        types = _rows("types", [path], tmp_path, path)
        # y = step(params, x): the type of tinylm.model's mlp under the package's mesh
        assert [(r["name"], r["type"]) for r in types] == [
            ("x", "float32[16@data,64]"), ("y", "float32[16@data,64]")], path
        assert types == _rows("types", ["."], tmp_path, path)
        specs = _rows("specs", [path], tmp_path, path)
        assert specs and all("'model': 4" in (s["mesh"] or "") for s in specs), specs
        assert specs == _rows("specs", ["."], tmp_path, path)
