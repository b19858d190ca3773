"""``pyast``: Python's ``ast`` of a file in newer type parameter syntax (3.12's on 3.11, 3.13's defaults on 3.12)."""

from __future__ import annotations

import ast
import io
import sys
import tokenize

import pytest

from shardcheck.analyzer import pyast

GENERIC = """\
import jax
from typing import Callable

type Alias = int
type Pair[T] = tuple[T, T]
  # a comment between
type Wide[
    K: (int, str),  # a comment inside
    *Vs,
] = dict[K, tuple[*Vs]]

def first[T: jax.Array, **P](f: Callable[P, T], *a: P.args) -> T:
    return f(*a)

async def later[T](x: T) -> T:
    return x

@staticmethod
class Box[T = int](list[T]):
    def get[U](self, u: U) -> T | U:
        type Inner = list[U]; return u

x = first(len, "ab"); type = 3
"""


def _tokens(text):
    return [(t.type, t.string, t.start, t.end) for t in tokenize.generate_tokens(
        io.StringIO(text, newline="").readline) if t.type not in (tokenize.NL, tokenize.COMMENT)]


def test_the_stand_in_keeps_every_row_and_every_other_token_in_place():
    text, erased = pyast.erase_type_parameters(GENERIC)
    assert text.count("\n") == GENERIC.count("\n")
    original = set(_tokens(GENERIC))
    moved = [t for t in _tokens(text) if t not in original]  # the aliases, where `type` was
    assert [(t[1], t[2]) for t in moved] == [
        ("Alias", (4, 0)), ("Pair", (5, 0)), ("Wide", (7, 0)), ("Inner", (21, 8))]
    # what the lists read, under the row each opens on
    assert erased[12] == {"T", "jax", "Array", "P"}
    assert erased[7] == {"K", "int", "str", "Vs"}  # Wide's list, over rows 7 to 10
    assert erased[19] == {"T", "int"} and erased[20] == {"U"}
    tree = ast.parse(text)  # the running Python reads it
    rows = [(s.lineno, s.end_lineno) for s in tree.body]
    assert rows == [(1, 1), (2, 2), (4, 4), (5, 5), (7, 10), (12, 13), (15, 16), (19, 21),
                    (23, 23), (23, 23)]


@pytest.mark.parametrize("newline", ["\r\n", "\r"])
def test_the_stand_in_is_the_same_under_every_line_end(newline):
    text, erased = pyast.erase_type_parameters(GENERIC.replace("\n", newline))
    assert text == pyast.erase_type_parameters(GENERIC)[0].replace("\n", newline)
    assert erased == pyast.erase_type_parameters(GENERIC)[1]
    code = GENERIC.replace("[T = int]", "[T]")  # PEP 696 (3.13): 3.12's ast rejects it
    assert pyast.parse(code.replace("\n", newline)) is not None


@pytest.mark.skipif(sys.version_info < (3, 12), reason="compares with 3.12's own ast")
def test_every_statement_of_the_stand_in_is_where_the_real_one_is():
    code = GENERIC.replace("[T = int]", "[T]")  # PEP 696 (3.13) aside
    real = [s for s in ast.walk(ast.parse(code)) if isinstance(s, ast.stmt)]
    stand = [s for s in ast.walk(ast.parse(pyast.erase_type_parameters(code)[0]))
             if isinstance(s, ast.stmt)]
    place = lambda s: (s.lineno, s.col_offset, s.end_lineno, s.end_col_offset)  # noqa: E731
    assert [place(s) for s in stand] == [place(s) for s in real]


@pytest.mark.parametrize("code", [
    "type = 1\n", "print(type)\n", "x.type = 2\n", "y = type(x)\n", "def f(type): pass\n",
    "class C(type): pass\n", "d[type] = 1\n", "type\n"])
def test_type_as_a_plain_name_is_left_alone(code):
    assert pyast.erase_type_parameters(code) is None
    assert pyast.parse(code) is not None and not pyast.parse(code).erased


def test_text_that_still_does_not_parse_is_none():
    assert pyast.parse("def f[T](x:\n") is None
    assert pyast.parse("def (:\n") is None
    if sys.version_info < (3, 12):  # PEP 701 beside PEP 695: the stand-in does not help
        assert pyast.parse('def f[T](x):\n    return f"{x["k"]}"\n') is None


def test_a_plain_file_parses_as_it_is():
    parsed = pyast.parse("x = 1\n")
    assert parsed is not None and parsed.erased == {}
    assert isinstance(parsed.tree.body[0], ast.Assign)


def test_a_type_parameter_default_parses_through_the_stand_in_before_313():
    parsed = pyast.parse("class Box[T = int]:\n    pass\n")  # PEP 696: Python 3.13
    assert parsed is not None
    assert bool(parsed.erased) is (sys.version_info < (3, 13))


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_the_fast_opening_finds_what_the_general_one_finds(newline):
    """Where no row ends in a lone ``\\r``, ``^`` alone starts each match (the general
    pattern's look-behind for ``\\r`` made the search five times slower)."""
    text = GENERIC.replace("\n", newline) + "x = 1\n  def f[T](): pass\n"
    general = [m.span() for m in pyast._OPENING.finditer(text)]
    assert len(general) == 9
    assert [m.span() for m in pyast._OPENING_LF.finditer(text)] == general


def test_the_last_tree_is_kept_for_the_same_text_object():
    text = "import jax\nx = jax.device_put(1)\n"
    first = pyast.parse(text)
    assert pyast.parse(text) is first
    again = "".join(list(text))  # equal, another object: parsed anew
    assert again is not text and pyast.parse(again) is not first
    assert ast.dump(pyast.parse(again).tree) == ast.dump(first.tree)
