"""The GitHub Action (action.yml): its shell steps, run here as the runner would run them
(inputs at their defaults, shardcheck already installed), on a copy of examples/broken."""

from __future__ import annotations

import json
import pathlib
import re
import shutil
import subprocess

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _action():
    return yaml.safe_load((ROOT / "action.yml").read_text())


def _expand(command: str, inputs: dict) -> str:
    return re.sub(r"\$\{\{\s*inputs\.([\w-]+)\s*\}\}", lambda m: inputs[m.group(1)], command)


def _environment(step: dict, inputs: dict) -> dict:
    """The step's environment as the runner sets it (its `env:` with the inputs
    substituted), over this process's."""
    import os
    env = dict(os.environ)
    env.update({k: _expand(str(v), inputs) for k, v in (step.get("env") or {}).items()})
    return env


def test_no_input_is_pasted_into_a_script():
    """`${{ inputs.x }}` in `run:` is script injection (actionlint): inputs go through
    `env:` and the scripts read variables."""
    for step in _action()["runs"]["steps"]:
        assert "${{" not in step.get("run", ""), step["name"]


def test_third_party_actions_are_pinned_by_commit():
    """A tag can be moved to other code; a commit cannot. Each pin names its release."""
    text = (ROOT / "action.yml").read_text()
    uses = [step["uses"] for step in _action()["runs"]["steps"] if "uses" in step]
    assert uses
    for use in uses:
        _, _, ref = use.partition("@")
        assert re.fullmatch(r"[0-9a-f]{40}", ref), use
        assert re.search(re.escape(use) + r"  # v\d+\.\d+\.\d+\n", text), use


def test_the_action_is_a_composite_action_with_documented_inputs():
    action = _action()
    assert action["runs"]["using"] == "composite"
    assert all(v.get("description") for v in action["inputs"].values())
    uses = [s["uses"].split("@")[0] for s in action["runs"]["steps"] if "uses" in s]
    assert uses == ["actions/setup-python", "github/codeql-action/upload-sarif"]
    upload = next(s for s in action["runs"]["steps"] if "upload-sarif" in s.get("uses", ""))
    assert "!github.event.pull_request.head.repo.fork" in upload["if"]  # skipped on forks


def test_its_check_steps_annotate_and_write_sarif(tmp_path):
    action = _action()
    inputs = {k: str(v.get("default", "")) for k, v in action["inputs"].items()}
    for f in (ROOT / "examples" / "broken").glob("*.py"):
        shutil.copy(f, tmp_path / f.name)
    checks = [s for s in action["runs"]["steps"] if "shardcheck check" in s.get("run", "")]
    assert len(checks) == 2
    shardcheck = str(pathlib.Path(__import__("sys").executable).parent / "shardcheck")
    results = []
    for step in checks:
        command = step["run"].replace("shardcheck check", f"{shardcheck} check", 1)
        results.append(subprocess.run(["bash", "-c", command], cwd=tmp_path, text=True,
                                      capture_output=True, env=_environment(step, inputs)))
    annotate, sarif = results
    assert annotate.returncode == 1  # the job fails on an error-level finding
    assert "::error file=unknown_axis_typo.py,line=" in annotate.stdout
    assert sarif.returncode == 0, sarif.stderr  # --exit-zero: the upload step still runs
    report = json.loads((tmp_path / inputs["sarif"]).read_text())
    assert report["version"] == "2.1.0" and len(report["runs"][0]["results"]) >= 20


def test_paths_and_args_are_words_never_shell(tmp_path):
    """An input holding shell syntax is a path that does not exist, not a command."""
    action = _action()
    step = next(s for s in action["runs"]["steps"] if "--format github" in s.get("run", ""))
    shardcheck = str(pathlib.Path(__import__("sys").executable).parent / "shardcheck")
    inputs = {"paths": "ok.py $(touch pwned) ; touch pwned2", "args": "--select SC1"}
    (tmp_path / "ok.py").write_text("x = 1\n")
    r = subprocess.run(["bash", "-c", step["run"].replace("shardcheck check", f"{shardcheck} check", 1)],
                       cwd=tmp_path, capture_output=True, text=True, env=_environment(step, inputs))
    assert r.returncode == 2 and "$(touch: no such file or directory" in r.stderr
    assert not (tmp_path / "pwned").exists() and not (tmp_path / "pwned2").exists()
