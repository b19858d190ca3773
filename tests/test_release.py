"""tools/release.py: the tag scheme the README names (``vX.Y.Z`` per release, a moving
``v0.Y``/``vX``), tried on a throwaway git repository."""

import importlib.util
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("release", ROOT / "tools" / "release.py")
release = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(release)


def _git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t",
                           *args], check=True, capture_output=True, text=True).stdout.strip()


def _repo(tmp_path, version="0.3.1", changelog="## 0.3.1\n"):
    (tmp_path / "shardcheck").mkdir()
    (tmp_path / "shardcheck" / "_version.py").write_text(f'__version__ = "{version}"\n')
    (tmp_path / "CHANGELOG.md").write_text(f"# Changelog\n\n{changelog}")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "-m", "release")
    return tmp_path


def test_the_projects_own_version_is_read_and_has_a_changelog_section():
    version = release.version_of(ROOT)
    assert (ROOT / "CHANGELOG.md").read_text().count(f"\n## {version}\n") == 1


def test_moving_tags_are_per_minor_before_1_0_and_per_major_after():
    assert release.moving_tag("0.3.1") == "v0.3" and release.moving_tag("1.4.2") == "v1"


def test_a_release_tags_its_version_and_moves_the_line_tag(tmp_path, monkeypatch):
    repo = _repo(tmp_path)
    monkeypatch.setenv("GIT_COMMITTER_NAME", "t")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "t@t")
    assert release.main(["--root", str(repo)]) == 0
    head = _git(repo, "rev-parse", "HEAD")
    assert _git(repo, "rev-list", "-n1", "v0.3.1") == _git(repo, "rev-list", "-n1", "v0.3") == head
    (repo / "shardcheck" / "_version.py").write_text('__version__ = "0.3.2"\n')
    (repo / "CHANGELOG.md").write_text("# Changelog\n\n## 0.3.2\n\n## 0.3.1\n")
    _git(repo, "commit", "-q", "-am", "0.3.2")
    assert release.main(["--root", str(repo)]) == 0
    new = _git(repo, "rev-parse", "HEAD")
    assert _git(repo, "rev-list", "-n1", "v0.3") == new != head  # moved
    assert _git(repo, "rev-list", "-n1", "v0.3.1") == head  # a release's tag never moves


@pytest.mark.parametrize("problem, why", [
    ("dirty", "working tree has changes"),
    ("tagged", "tagged already"),
    ("no section", "no `## 0.3.1` section"),
])
def test_it_refuses_and_says_why(tmp_path, capsys, monkeypatch, problem, why):
    monkeypatch.setenv("GIT_COMMITTER_NAME", "t")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "t@t")
    repo = _repo(tmp_path, changelog="## 0.3.0\n" if problem == "no section" else "## 0.3.1\n")
    if problem == "dirty":
        (repo / "CHANGELOG.md").write_text("edited\n")
    if problem == "tagged":
        _git(repo, "tag", "v0.3.1")
    assert release.main(["--root", str(repo), "--dry-run"]) == 1
    assert why in capsys.readouterr().err
    assert release.main(["--root", str(repo), "--dry-run"]) == 1  # nothing was tagged
