"""Notebooks: `.ipynb` files are discovered and checked cell by cell (the code cells
joined in order, IPython syntax set aside), and findings are located by cell and line.
The joined code is run under JAX to confirm what the finding says."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from shardcheck.analyzer.engine import check_source
from shardcheck.analyzer.notebooks import NotANotebook, python_of


def _nb(*cells, language="python"):
    out = []
    for kind, src in cells:
        cell = {"cell_type": kind, "metadata": {}, "source": src.splitlines(keepends=True)}
        if kind == "code":
            cell.update(execution_count=None, outputs=[])
        out.append(cell)
    return json.dumps({"cells": out, "nbformat": 4, "nbformat_minor": 5, "metadata": {
        "kernelspec": {"name": "k", "language": language}}}).encode()


DEMO = _nb(
    ("markdown", "# Sharding demo\n"),
    ("code", "%matplotlib inline\nimport jax\n"
             "from jax.sharding import NamedSharding, PartitionSpec as P\n!pip list | head\n"),
    ("code", "mesh = jax.make_mesh((2, 4), ('data', 'model'))\njax.jit?"),
    ("code", "%%bash\necho hi && ls | grep x\n"),
    ("code", "%%time\ns = NamedSharding(mesh, P('modle'))\n"
             "t = NamedSharding(mesh, P('modle'))  # shardcheck: ignore[SC101]\n"),
)


def test_cells_join_into_python_and_map_back():
    text, where = python_of(DEMO)
    lines = text.splitlines()
    assert lines[0] == "pass" and lines[3] == "pass"  # %matplotlib, !pip
    assert "echo" not in text  # a %%bash cell is not Python
    assert lines[6] == "pass"  # jax.jit?
    row = lines.index("s = NamedSharding(mesh, P('modle'))") + 1
    assert where[row - 1] == (5, 2)  # cell 5 (the markdown cell counts), its line 2
    compile(text, "nb", "exec")


def test_a_finding_is_located_by_cell_and_line():
    [f] = check_source(DEMO, "demo.ipynb")
    assert (f.code, f.cell, f.row, f.column, f.fix) == ("SC101", 5, 2, 25, None)
    assert f.as_json()["cell"] == 5


def test_a_future_import_that_opens_a_later_cell_is_no_syntax_error():
    """IPython compiles each cell alone, so `from __future__ import ...` may open any
    cell (penzai's notebooks do); the joined module allows it only at its start. The
    first cell keeps its own, and findings after it are still found."""
    nb = _nb(("code", "from __future__ import annotations\nimport jax\n"),
             ("code", "mesh = jax.make_mesh((2, 4), ('data', 'model'))\n"),
             ("code", "from __future__ import (annotations,\n    division)\n"
                      "from jax.sharding import NamedSharding, PartitionSpec as P\n"
                      "s = NamedSharding(mesh, P('modle'))\n"))
    text, _ = python_of(nb)
    assert text.splitlines()[0] == "from __future__ import annotations"
    compile(text, "nb", "exec")
    assert [(f.code, f.cell, f.row) for f in check_source(nb, "demo.ipynb")] == [("SC101", 3, 4)]


def test_what_is_not_a_python_notebook():
    assert python_of(_nb(("code", "x <- 1\n"), language="R")) == ("", [])
    with pytest.raises(NotANotebook, match="not JSON"):
        python_of(b"{oops")
    with pytest.raises(NotANotebook, match="nbformat 4"):
        python_of(b'{"worksheets": []}')
    [f] = check_source(b"{oops", "bad.ipynb")
    assert (f.code, f.row) == ("SC001", 1) and "not a notebook" in f.message


def test_the_cli_discovers_notebooks_and_keeps_cells_through_the_cache(tmp_path):
    (tmp_path / "demo.ipynb").write_bytes(DEMO)
    (tmp_path / "notes.txt").write_text("not checked\n")

    def run(*args):
        return subprocess.run([sys.executable, "-m", "shardcheck", "check", ".", *args],
                              capture_output=True, text=True, cwd=tmp_path)

    first = run()
    assert first.returncode == 1, first.stderr
    assert first.stdout.startswith("demo.ipynb:cell 5:2:25: SC101 ")
    again = run("--format", "json")  # from the cache
    [f] = json.loads(again.stdout)
    assert (f["cell"], f["location"]["row"]) == (5, 2)
    sarif = json.loads(run("--format", "sarif").stdout)
    assert sarif["runs"][0]["results"][0]["message"]["text"].startswith("(cell 5, line 2) ")
    before = (tmp_path / "demo.ipynb").read_bytes()
    run("--add-noqa")  # a notebook's cells are JSON strings: never edited
    assert (tmp_path / "demo.ipynb").read_bytes() == before


def test_jax_agrees_with_the_finding(jax8):
    from jax_snippets import run_snippets
    text, _ = python_of(DEMO)  # the joined cells, as the kernel runs them top to bottom
    (res,) = run_snippets([text + "RESULT = 'ran'\n"])
    assert res["status"] == "error" and res["type"] == "ValueError", res
    assert "modle" in res["error"]


def test_a_cell_python_rejects_fails_alone_and_the_rest_is_checked():
    """Jupyter runs each cell on its own: a cell that does not compile raises there, and
    the others still run. So: one syntax-error finding at that cell, the rest checked."""
    nb = _nb(
        ("code", "import jax\nfrom jax.sharding import NamedSharding, PartitionSpec as P\n"),
        ("code", "# imports\n  import os\n"),  # IndentationError, as in Jupyter
        ("markdown", "text\n"),
        ("code", "mesh = jax.make_mesh((2, 4), ('data', 'model'))\n"
                 "result = await some_coroutine()\n"),  # top-level await: IPython runs it
        ("code", "### a heading typed into a code cell\nThis is prose.\n"),
        ("code", "s = NamedSharding(mesh, P('modle'))\n"),
    )
    found = check_source(nb, "demo.ipynb")
    assert [(f.code, f.cell, f.row) for f in found] == [("SC001", 2, 2), ("SC001", 5, 2),
                                                        ("SC101", 6, 1)]
    assert "unexpected indent" in found[0].message and "other cells are checked" in found[0].message
    with pytest.raises(SyntaxError):  # what Python says of that cell
        compile("# imports\n  import os\n", "cell", "exec")
