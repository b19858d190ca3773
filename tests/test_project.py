"""Meta-tests: the README's commands are what CI runs."""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _readme_commands():
    text = (ROOT / "README.md").read_text()
    block = re.search(r"```bash\n(.*?)```", text, re.S).group(1)
    return [line for line in block.splitlines() if line and not line.startswith("#")]


def test_readme_opens_with_two_commands():
    commands = _readme_commands()
    assert len(commands) == 2
    assert "examples/" in commands[0]
    assert "pytest" in commands[1]


def test_ci_runs_the_readmes_test_command():
    assert _readme_commands()[1] in (ROOT / ".ci" / "run").read_text()
