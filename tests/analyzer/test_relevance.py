"""``check`` parses only the statements that can matter to a finding (analyzer/relevance.py).

Each channel through which one statement can change another's findings is a program
here: the findings with blanking equal those of the whole file, the statement that
carries the channel is kept, and blanking it by hand changes the findings (so keeping
it is what made them equal). Then every example program of the project is checked
both ways."""

from __future__ import annotations

import ast
import glob
import io
import os
import sys
import textwrap

import pytest

from shardcheck.analyzer import relevance
from shardcheck.analyzer.config import Config
from shardcheck.analyzer.engine import check_source
from shardcheck.analyzer.project import Project
from shardcheck.analyzer.rules import all_rules

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(HERE)


def _key(findings):
    return [(f.filename, f.row, f.column, f.end_row, f.end_column, f.code, f.message, f.fix,
             f.related, f.in_expected_failure) for f in findings]


def _both(code, path="m.py", config=None, project=None):
    """(findings with blanking, findings of the whole file)."""
    config = config or Config()
    try:
        relevance.ENABLED = False
        whole = check_source(code, path, config, project)
    finally:
        relevance.ENABLED = True
    return check_source(code, path, config, project), whole


def _blank_by_hand(code, needle):
    """``code`` with the top-level statement or class member holding ``needle`` blanked."""
    tree = ast.parse(code)
    lines = io.StringIO(code, newline="").readlines()
    row = next(i for i, line in enumerate(lines, 1) if needle in line)
    bodies = [tree.body] + [s.body for s in tree.body if isinstance(s, ast.ClassDef)]
    for body in bodies:
        for s in body:
            first = min([s.lineno] + [d.lineno for d in getattr(s, "decorator_list", ())])
            if first <= row <= s.end_lineno and not isinstance(s, ast.ClassDef):
                for i in range(first - 1, s.end_lineno):
                    lines[i] = "\n"
                return "".join(lines)
    raise AssertionError(needle)


@pytest.fixture(autouse=True)
def _blank_all(monkeypatch):
    monkeypatch.setattr(relevance, "WORTH", 1.0)  # blank whatever can be, however little


HEAD = """\
import os
import unittest
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
"""

FILLER = """
def unrelated(xs):
    total = 0
    for x in xs:
        total += x * 2
    return total
"""

# a test whose set-up stores the mesh: `check` reads self.mesh when nothing else stores it
SET_UP = """
class T(unittest.TestCase):
    def setUp(self):
        self.mesh = jax.make_mesh((2, 4), ("data", "model"))

    def test_place(self):
        return jax.device_put(jnp.zeros((8, 16)), NamedSharding(self.mesh, P("data", "modle")))
"""

# name -> (program, a text on the line of the statement carrying the channel)
CHANNELS = {
    # a caller with no word of the vocabulary gives the helper its arguments
    "caller": ("""
MESH = jax.make_mesh((2, 4), ("data", "model"))

def place(x, axis):
    return jax.device_put(x, NamedSharding(MESH, P(axis)))

def main():
    return place(jnp.zeros(8), "dta")
""", 'place(jnp.zeros(8), "dta")'),
    # a plain constant a relevant statement reads
    "value": ("""
AXES = ("data", "modle")

mesh = jax.make_mesh((2, 4), ("data", "model"))
s = NamedSharding(mesh, P(*AXES))
""", "AXES = ("),
    # another class stores the attribute: the check no longer knows which mesh it holds
    "attribute_store": (SET_UP + """
class Other:
    def reset(self, m):
        self.mesh = m
""", "self.mesh = m"),
    # setattr anywhere: attributes are set by name, so none is known from the set-up
    "setattr": (SET_UP + """
class Other:
    def put(self, key, value):
        setattr(self, key, value)
""", "setattr(self"),
    # the device count the file sets is read from the whole text
    "device_count": ("""
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"

mesh = jax.make_mesh((16,), ("x",))
""", "XLA_FLAGS"),
    # literal containers count a name's bindings in every scope: a second `specs`
    # elsewhere means the check does not trust the tuple
    "literal_bound_twice": ("""
mesh = jax.make_mesh((2, 4), ("data", "model"))

def run():
    specs = (NamedSharding(mesh, P("data")),)
    f = jax.jit(lambda x: x, in_shardings=specs)
    return f(jnp.zeros((3,)))

def other(compute):
    specs = compute()
    return specs
""", "specs = compute()"),
    # ... and trust none once a function changes a parameter in place
    "parameter_changed": ("""
mesh = jax.make_mesh((2, 4), ("data", "model"))
SPECS = (NamedSharding(mesh, P("data")),)
f = jax.jit(lambda x: x, in_shardings=SPECS)
y = f(jnp.zeros((3,)))

def other(xs):
    xs.append(1)
""", "xs.append(1)"),
    # SC401's fix adds `import jax`, so `jax` must name nothing else (codemods.py)
    "jax_named_otherwise": ("""
from jax.experimental.pjit import pjit

def other():
    jax = 1
    return jax

f = pjit(lambda a: a)
""", "jax = 1"),
}


@pytest.mark.parametrize("name", list(CHANNELS))
def test_each_channel_keeps_the_findings_of_the_whole_file(name):
    body, needle = CHANNELS[name]
    code = (HEAD if "import" not in body else "") + FILLER + body
    text = relevance.blanked(code)
    assert text is not None and text.count("\n") == code.count("\n")
    assert "total += x * 2" not in text  # the filler is blanked
    blanked, whole = _both(code)
    assert _key(blanked) == _key(whole)
    by_hand, _ = _both(_blank_by_hand(code, needle))
    assert _key(by_hand) != _key(whole), "the channel changes nothing: not a test of it"
    if name != "device_count":  # read from the text, not from the tree: blanked there
        assert needle in text


def test_a_library_helper_of_the_project_is_a_channel(tmp_path):
    (tmp_path / "helpers.py").write_text(textwrap.dedent("""\
        import jax
        from jax.sharding import NamedSharding, PartitionSpec as P

        def build():
            return jax.make_mesh((2, 4), ("data", "model"))

        def spec(mesh, axis):
            return NamedSharding(mesh, P(axis))
        """))
    code = FILLER + textwrap.dedent("""
        from helpers import build, spec

        def go():
            return spec(build(), "dta")
        """)
    path = tmp_path / "m.py"
    path.write_text(code)
    project = Project(Config())
    for f in ("helpers.py", "m.py"):
        project.add_file(str(tmp_path / f))
    assert "spec(build()" in relevance.blanked(code, project, "m")
    blanked, whole = _both(code, str(path), project=project)
    assert _key(blanked) == _key(whole) and [f.code for f in whole] == ["SC101"]


def test_positions_and_line_endings_are_kept():
    code = HEAD + FILLER + 'mesh = jax.make_mesh((2, 4), ("data", "model"))\n' \
        'x = jax.device_put(jnp.zeros((8, 4)), NamedSharding(mesh, P("dat")))\n'
    for newline in ("\n", "\r\n", "\r"):
        text = code.replace("\n", newline)
        blanked, whole = _both(text)
        assert _key(blanked) == _key(whole) and [f.code for f in whole] == ["SC101"]
        assert whole[0].row == code.count("\n")


def test_kept_leaves_the_blanked_lines_out_and_says_where_each_line_was():
    """``kept`` is ``blanked`` with the blanked lines left out: each line it keeps is the
    file's line at its row, in order, and each row it leaves out is blanked. The check
    parses it, and its findings are placed on the file's rows (the test above)."""
    code = HEAD + FILLER * 3 + 'mesh = jax.make_mesh((2, 4), ("data", "model"))\n' \
        + FILLER + 'placed = jax.device_put(jnp.zeros((8, 4)), NamedSharding(mesh, P("dat")))\n'
    for newline in ("\n", "\r\n", "\r"):
        text = code.replace("\n", newline)
        lines = io.StringIO(text, newline="").readlines()
        blank = io.StringIO(relevance.blanked(text), newline="").readlines()
        compact, rows = relevance.kept(text)
        assert io.StringIO(compact, newline="").readlines() == [lines[r - 1] for r in rows]
        assert rows == sorted(set(rows)) and len(rows) == len(lines) - 4 * 5  # 4 fillers
        assert all(blank[r - 1] == lines[r - 1] for r in rows)
        assert all(not blank[r - 1].strip() and lines[r - 1].strip()
                   for r in set(range(1, len(lines) + 1)) - set(rows) if lines[r - 1].strip())
        assert "total += x * 2" not in compact and 'P("dat")' in compact
        blanked, whole = _both(text)
        assert _key(blanked) == _key(whole) and [f.code for f in whole] == ["SC101"]
        assert whole[0].row == len(lines) and rows[-1] == len(lines)


def test_a_check_parses_only_the_kept_lines(monkeypatch):
    """What libcst reads is the short text, not the blanked one (so the tests comparing
    findings compare the rows of the short text, moved)."""
    from shardcheck.analyzer import sources
    read = []
    real = sources.cst_parse
    monkeypatch.setattr(sources, "cst_parse", lambda text: read.append(text) or real(text))
    code = HEAD + FILLER * 5 + 'y = jax.device_put(jnp.zeros(8), NamedSharding(None, P("d")))\n'
    check_source(code, "m.py", Config())
    assert len(read) == 1 and read[0] == relevance.kept(code)[0]
    assert "def unrelated" not in read[0] and read[0].count("\n") < code.count("\n") - 20


def test_what_python_rejects_in_a_blanked_statement_is_still_reported():
    code = HEAD + "\ndef f():\n    nonlocal y\n\nmesh = jax.make_mesh((8,), ('x',))\n"
    assert relevance.blanked(code) is not None
    blanked, whole = _both(code)
    assert _key(blanked) == _key(whole) and [f.code for f in whole] == ["SC001"]


def test_a_computed_attribute_read_keeps_every_attribute_store_and_method():
    code = HEAD + textwrap.dedent("""
        class A:
            def set(self, v):
                self.anything = v

            def other(self):
                return 3

        def read(obj, name):
            return jax.device_put(getattr(obj, name), P("x"))
        """)
    text = relevance.blanked(code)
    # a method is an attribute too: getattr(obj, "other") reads it
    assert "self.anything = v" in text and "return 3" in text


def test_python_312_type_parameters_are_blanked_on_any_python():
    """A file in Python 3.12 syntax is blanked on 3.11 too (``pyast``'s stand-in), and a
    statement whose type parameter bound spells the vocabulary is relevant: the stand-in
    erases the bound, so it is read from the erased names."""
    code = HEAD + textwrap.dedent("""
        type Pair[T] = tuple[T, T]

        def pick[T](xs: list[T]) -> T:
            return xs[0]

        def bounded[M: jax.sharding.Mesh](m: M) -> M:
            return m

        class Box[T]:
            def get(self) -> int:
                return 3

        mesh = jax.make_mesh((2, 4), ("data", "model"))
        placed = jax.device_put(jnp.zeros((8, 4)), NamedSharding(mesh, P("dat")))
        """)
    text = relevance.blanked(code + FILLER)
    assert text is not None and text.count("\n") == (code + FILLER).count("\n")
    assert "total += x * 2" not in text and "return 3" not in text
    assert "def bounded[M: jax.sharding.Mesh](m: M) -> M:" in text
    # on 3.11 a statement the stand-in erased is kept, so that CPython's rejection of the
    # file is judged from the kept statements (see relevance._erased)
    kept = sys.version_info < (3, 12)
    assert ("return xs[0]" in text) is kept and ("tuple[T, T]" in text) is kept
    blanked, whole = _both(code + FILLER)
    assert _key(blanked) == _key(whole) and [f.code for f in whole] == ["SC101"]


def test_a_malformed_type_parameter_list_is_still_a_syntax_error():
    """On 3.11, CPython rejects the file at the first list either way; the check must
    not take the relevant generic function's newer syntax as the reason when the
    malformed list is elsewhere (so a statement the stand-in erased is kept)."""
    code = HEAD + FILLER + "def f[1 +](x):\n    return x\n\n" \
        "def place[T](x: T) -> T:\n    return jax.device_put(x, P('x'))\n"
    blanked, whole = _both(code)
    assert _key(blanked) == _key(whole) and [f.code for f in whole] == ["SC001"]


@pytest.mark.parametrize("identifier,spelled", [
    ("NamedSharding", True), ("make_mesh", True), ("AbstractMesh", True), ("P", True),
    ("param_with_axes", True), ("psum", True), ("in_shardings", True),
    ("upcast", False), ("WGMMA_LAYOUT_UPCAST_2X", False), ("Pytree", False),
    ("meshgrid", True), ("refresh", False)])
def test_an_identifier_spells_the_vocabulary_at_the_start_of_a_word(identifier, spelled):
    assert relevance.spells(identifier) is spelled


def test_an_import_star_from_the_project_is_parsed_whole(tmp_path):
    (tmp_path / "helpers.py").write_text("import jax\nMESH = jax.make_mesh((8,), ('x',))\n")
    project = Project(Config())
    project.add_file(str(tmp_path / "helpers.py"))
    code = "from helpers import *\n" + FILLER + "s = jax.device_put(1, MESH)\n"
    assert relevance.blanked(code, project, "m") is None


# -- every example program of the project, both ways -----------------------------------------
def _programs():
    out = []
    for code, rule in all_rules().items():
        for i, ex in enumerate(list(rule.INVALID) + list(rule.VALID)):
            out.append((f"{code}-{i}", ex.code))
    patterns = ("examples/**/*.py", "tests/golden/*.py", "tests/inference/*.py",
                "tests/specs/*.py", "tests/logical/*.py")
    for pattern in patterns:
        for path in sorted(glob.glob(os.path.join(ROOT, pattern), recursive=True)):
            with open(path, encoding="utf-8") as fh:
                out.append((os.path.relpath(path, ROOT), fh.read()))
    return out


PROGRAMS = _programs()


def test_the_programs_are_many_and_most_are_blanked_somewhere():
    blanked = sum(relevance.blanked(code) is not None for _, code in PROGRAMS)
    assert len(PROGRAMS) > 150 and blanked > len(PROGRAMS) // 4, (len(PROGRAMS), blanked)


@pytest.mark.parametrize("name,code", PROGRAMS, ids=[n for n, _ in PROGRAMS])
def test_every_example_program_has_the_same_findings_blanked(name, code):
    blanked, whole = _both(code, "example.py")
    assert _key(blanked) == _key(whole)


def test_a_class_attribute_read_through_its_class_is_kept():
    """``P(Axes.MODEL)``: the class body's ``MODEL = "model"`` is what the spec reads (it
    was dropped, keeping only the class's first member: the spec was unknown)."""
    code = HEAD + textwrap.dedent("""
        class Axes:
            BATCH = "data"
            MODEL = "model"
            UNUSED = "other"

        mesh = jax.make_mesh((2, 4), ("data", "model"))
        s = NamedSharding(mesh, P(Axes.MODEL))
        """)
    text = relevance.blanked(code)
    assert 'MODEL = "model"' in text and 'UNUSED = "other"' not in text
