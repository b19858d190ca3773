"""Jupyter notebooks (``.ipynb``): checked cell by cell, findings located by cell and line.

The code cells are joined into one module in order (as a kernel runs them top to
bottom), one blank line between cells, so a mesh made in one cell reaches the next.
IPython syntax is not Python: a line magic (``%timeit f()``), a shell escape
(``!pip install``), a help query (``jax.jit?``) and an assignment from one
(``out = !ls``) become ``pass`` at their indentation; a cell magic that runs another
language (``%%bash``, ``%%writefile``, ...) blanks the whole cell, while ``%%time`` and
its kin keep the Python that follows. A cell with top-level ``await`` (IPython awaits it)
is read without the ``await``s; a cell Python cannot compile is left out, as Jupyter
fails it alone. A ``from __future__ import`` that opens a later cell (valid there: IPython
compiles each cell alone) becomes ``pass``, since the joined module allows one only at its
start. Each line of the module maps back to its cell
(numbered as Jupyter shows them, markdown cells included) and its line in that cell.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import List, Optional, Sequence, Tuple

from .ftypes import Finding

SUFFIX = ".ipynb"
# cell magics whose body is Python (IPython's own): the rest run other languages
_PYTHON_CELL_MAGICS = {"time", "timeit", "capture", "prun", "debug", "px"}
_AWAIT = re.compile(r"\bawait\s+")
_FUTURE = re.compile(r"from\s+__future__\s+import\b")
_IPYTHON_LINE = re.compile(r"^\s*(?:[%!]|\w[\w.\[\]]*\?{1,2}\s*$)|^\s*[\w.,\s]+=\s*[%!]")


class NotANotebook(ValueError):
    """The file is not a notebook shardcheck can read (not JSON, not nbformat 4)."""


def is_notebook(path: str) -> bool:
    return path.lower().endswith(SUFFIX)


def python_of(data: bytes, broken: Optional[List[Tuple[int, int, int, str]]] = None
              ) -> Tuple[str, List[Tuple[int, int]]]:
    """(the code cells as one module, for each of its lines the (cell, line in cell) it
    comes from); a non-Python kernel gives no code. ``NotANotebook`` says why not.

    A cell Python cannot compile fails alone when Jupyter runs it, and the other cells
    still run: it is left out (blank lines) and, where ``broken`` is given, listed there
    as (cell, row, column, what Python says)."""
    try:
        nb = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError) as e:
        raise NotANotebook(f"it is not a notebook (not JSON: {str(e).splitlines()[0]})") from None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise NotANotebook("it is not an nbformat 4 notebook (no list of cells)")
    language = _language(nb)
    if language is not None and language != "python":
        return "", []
    lines: List[str] = []
    where: List[Tuple[int, int]] = []
    code_before = False  # a statement is in the module already: no __future__ import now
    for index, cell in enumerate(nb["cells"], 1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        text = "".join(source) if isinstance(source, list) else str(source)
        cell_lines = text.splitlines()
        foreign = bool(cell_lines) and _foreign_cell_magic(cell_lines[0])
        python = ["" if foreign else _python_line(line) for line in cell_lines]
        problem = _compiles(python)
        if problem is not None and not problem[2]:  # top-level await: IPython awaits it
            python = [_AWAIT.sub("", line) for line in python]
            problem = _compiles(python)
        if problem is not None:
            python = [""] * len(python)
            if problem[2] and broken is not None:
                broken.append((index, problem[0], problem[1], problem[2]))
        elif code_before:
            python = _without_future_imports(python)
        code_before = code_before or any(
            line.strip() and not line.lstrip().startswith("#") for line in python)
        for row, line in enumerate(python, 1):
            lines.append(line)
            where.append((index, row))
        lines.append("")
        where.append((index, len(cell_lines) + 1))
    return "\n".join(lines) + "\n", where


def _without_future_imports(lines: List[str]) -> List[str]:
    """A compiling cell's top-level ``from __future__ import ...`` statements as ``pass``
    (each line of a parenthesised one)."""
    out, open_paren = [], False
    for line in lines:
        if open_paren:
            out.append("")
            open_paren = ")" not in line
        elif _FUTURE.match(line):
            out.append("pass")
            open_paren = "(" in line and ")" not in line
        else:
            out.append(line)
    return out


def _compiles(lines: List[str]) -> Optional[Tuple[int, int, str]]:
    """None if the cell compiles as a module; else (row, column, Python's message), the
    message empty for a cell only IPython runs (top-level ``await``)."""
    import ast
    text = "\n".join(lines) + "\n"
    try:  # compiled, not only parsed: `await` outside a function is a compile error
        compile(text, "<cell>", "exec", dont_inherit=True)
        return None
    except (SyntaxError, ValueError) as e:
        first = e
    try:  # IPython runs top-level await; the analysis, one module, cannot take it
        compile(text, "<cell>", "exec", ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
        return (1, 1, "")
    except (SyntaxError, ValueError):
        pass
    if isinstance(first, SyntaxError):
        return (first.lineno or 1, first.offset or 1, f"{first.msg}")
    return (1, 1, str(first))


def _language(nb: dict) -> Optional[str]:
    got = nb.get("metadata")
    meta: dict = got if isinstance(got, dict) else {}
    for key in ("language_info", "kernelspec"):
        info = meta.get(key)
        if isinstance(info, dict):
            name = info.get("name") if key == "language_info" else info.get("language")
            if isinstance(name, str) and name:
                return name.lower()
    return None


def _foreign_cell_magic(first: str) -> bool:
    stripped = first.strip()
    if not stripped.startswith("%%"):
        return False
    name = stripped[2:].split(None, 1)[0] if len(stripped) > 2 else ""
    return name not in _PYTHON_CELL_MAGICS


def _python_line(line: str) -> str:
    if line.lstrip().startswith("%%"):  # a Python cell magic's own line
        return ""
    if _IPYTHON_LINE.match(line) and not line.lstrip().startswith("#"):
        indent = line[:len(line) - len(line.lstrip())]
        return f"{indent}pass"
    return line


def locate(findings: Sequence[Finding], path: str, where: List[Tuple[int, int]]) -> List[Finding]:
    """Findings in the joined module, moved to their cells (``cell``, rows in the cell);
    fixes dropped (they are written against the joined module, not the notebook)."""
    def cell_of(row: int) -> Tuple[Optional[int], int]:
        if 1 <= row <= len(where):
            return where[row - 1]
        return None, row

    out = []
    for f in findings:
        if f.filename != path or not where:
            out.append(f)
            continue
        cell, row = cell_of(f.row)
        end_cell, end_row = cell_of(f.end_row)
        related = tuple(
            replace(r, row=cell_of(r.row)[1], end_row=cell_of(r.end_row)[1],
                    message=f"(cell {cell_of(r.row)[0]}) {r.message}")
            if r.filename == path else r for r in f.related)
        out.append(replace(f, row=row, end_row=end_row if end_cell == cell else row,
                           end_column=f.end_column if end_cell == cell else f.column,
                           cell=cell, fix=None, related=related))
    return out
