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


def test_the_action_is_a_composite_action_with_documented_inputs():
    action = _action()
    assert action["runs"]["using"] == "composite"
    assert all(v.get("description") for v in action["inputs"].values())
    uses = [s["uses"].split("@")[0] for s in action["runs"]["steps"] if "uses" in s]
    assert uses == ["actions/setup-python", "github/codeql-action/upload-sarif"]


def test_its_check_steps_annotate_and_write_sarif(tmp_path):
    action = _action()
    inputs = {k: str(v.get("default", "")) for k, v in action["inputs"].items()}
    for f in (ROOT / "examples" / "broken").glob("*.py"):
        shutil.copy(f, tmp_path / f.name)
    checks = [s for s in action["runs"]["steps"]
              if "run" in s and s["run"].startswith("shardcheck ")]
    assert len(checks) == 2
    shardcheck = str(pathlib.Path(__import__("sys").executable).parent / "shardcheck")
    results = []
    for step in checks:
        command = _expand(step["run"], inputs).replace("shardcheck ", f"{shardcheck} ", 1)
        results.append(subprocess.run(["bash", "-c", command], cwd=tmp_path,
                                      capture_output=True, text=True))
    annotate, sarif = results
    assert annotate.returncode == 1  # the job fails on an error-level finding
    assert "::error file=unknown_axis_typo.py,line=" in annotate.stdout
    assert sarif.returncode == 0, sarif.stderr  # --exit-zero: the upload step still runs
    report = json.loads((tmp_path / inputs["sarif"]).read_text())
    assert report["version"] == "2.1.0" and len(report["runs"][0]["results"]) >= 20
