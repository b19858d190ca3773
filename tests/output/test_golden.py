"""Whole-program fixtures: the CLI's text and JSON output must equal the golden files.

Regenerate with UPDATE_GOLDEN=1 after a deliberate change, and review the diff.
"""

import io
import os
import pathlib
from contextlib import redirect_stdout

import pytest

from shardcheck.cli import main

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "golden"
FIXTURES = sorted(GOLDEN.glob("*.py"))


def _run(args, cwd):
    buf = io.StringIO()
    old = os.getcwd()
    os.chdir(cwd)
    try:
        with redirect_stdout(buf):
            code = main(args)
    finally:
        os.chdir(old)
    return code, buf.getvalue()


@pytest.mark.parametrize("fmt", ["text", "json"])
@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: p.stem)
def test_golden_output(fixture, fmt):
    code, out = _run(["check", fixture.name, "--no-cache", "--format", fmt], GOLDEN)
    expected_file = GOLDEN / f"{fixture.stem}.{ 'txt' if fmt == 'text' else 'json'}"
    if os.environ.get("UPDATE_GOLDEN"):
        expected_file.write_text(out)
    assert out == expected_file.read_text()
    assert code == 1
