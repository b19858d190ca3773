"""``project_checks.project_findings``: the project-wide findings (SC114, SC115) kept
between runs beside the mesh index, while nothing they read has changed."""

from shardcheck.analyzer import parallelism_order, project_axes
from shardcheck.analyzer.config import Config
from shardcheck.analyzer.ftypes import Finding
from shardcheck.check import project_checks

from test_project_axes import MODEL, TRAIN  # a mesh in train.py; P('modle', ...) in model.py


def _run(tmp_path, found=()):
    files = [str(tmp_path / "train.py"), str(tmp_path / "model.py")]
    return project_checks.project_findings(files, files, Config(root=str(tmp_path)), list(found),
                                           memo_file=str(tmp_path / "cache" / "project_axes.index"))


def test_the_findings_are_kept_while_nothing_they_read_changes(tmp_path, monkeypatch):
    (tmp_path / "train.py").write_text(TRAIN)
    (tmp_path / "model.py").write_text(MODEL)
    computed = []
    for module in (project_axes, parallelism_order):
        real = module.check
        monkeypatch.setattr(module, "check", lambda *a, _real=real, **k: computed.append(1) or
                            _real(*a, **k))
    first = _run(tmp_path)
    assert [f.code for f in first] == ["SC114"] and len(computed) == 2
    assert _run(tmp_path) == first and len(computed) == 2  # kept: nothing read again
    # what the files' own analysis says filters them: another SC101 is another answer
    sc101 = Finding("SC101", "unknown-mesh-axis", "m", "error", str(tmp_path / "model.py"),
                    first[0].row, 1, first[0].row, 2)
    assert _run(tmp_path, [sc101]) == [] and len(computed) == 4
    (tmp_path / "train.py").write_text(TRAIN.replace('"model")', '"modle")'))  # now it exists
    assert _run(tmp_path) == [] and len(computed) == 6
    (tmp_path / "cache" / "project_axes.index.findings").write_text("{not json")
    assert _run(tmp_path) == [] and len(computed) == 8  # corrupt: computed again
