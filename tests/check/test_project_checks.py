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


def test_the_configs_values_are_kept_while_no_config_or_base_changes(tmp_path, monkeypatch):
    """The YAML configs' lists (``config_checks.string_lists``) are read once: a run with
    every config and every base it names unchanged parses no YAML."""
    import os

    from shardcheck.analyzer import config_checks
    (tmp_path / "base.yml").write_text("mesh_axes: ['data', 'model']\n")
    (tmp_path / "run.yml").write_text("base_config: base.yml\nper_device_batch_size: 4\n")
    memo = str(tmp_path / "cache" / "project_axes.index")
    parsed = []
    real = config_checks.read
    monkeypatch.setattr(config_checks, "read", lambda *a, **k: parsed.append(a[0]) or real(*a, **k))

    def run():
        return project_checks._config_values([str(tmp_path / "run.yml")], memo + ".configs")
    first = run()
    assert first == {"mesh_axes": [(str(tmp_path / "run.yml"), ["data", "model"])]}
    assert parsed == [str(tmp_path / "run.yml"), str(tmp_path / "base.yml")]
    kept = run()  # from the memo, as JSON holds it: each pair a list
    assert kept == {"mesh_axes": [[str(tmp_path / "run.yml"), ["data", "model"]]]}
    assert len(parsed) == 2
    (tmp_path / "base.yml").write_text("mesh_axes: ['data', 'fsdp', 'model']\n")
    os.utime(tmp_path / "base.yml", ns=(1, 1))  # the base changed: read again
    assert run()["mesh_axes"][0][1] == ["data", "fsdp", "model"] and len(parsed) == 4
    (tmp_path / "cache" / "project_axes.index.configs").write_text("{not json")
    assert run()["mesh_axes"][0][1] == ["data", "fsdp", "model"] and len(parsed) == 6
    assert project_checks._config_values([str(tmp_path / "run.yml")], None) and len(parsed) == 8
