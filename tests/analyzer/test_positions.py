"""``Positions`` gives every node the range libcst's ``PositionProvider`` gives it,
generating only the statements that hold the nodes asked about (analyzer/positions.py).

Every node of every program here, and of every example program of the project, is
compared with the provider's answer; the programs hold the layouts that could move a
statement (decorators, ``;``, comments and blank lines between members, tabs, line
continuations, three line endings, a file without a final newline)."""

from __future__ import annotations

import pathlib
import sys
import textwrap

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from shardcheck.analyzer import positions as pos
from shardcheck.analyzer.config import Config
from shardcheck.analyzer.engine import check_source
from shardcheck.analyzer.syntax import is_layout
from test_relevance import PROGRAMS, _key

ROOT = pathlib.Path(__file__).resolve().parents[2]

def test_node_positions_are_the_metadata_wrappers():
    for path in sorted((ROOT / "examples").glob("*.py"))[:6]:
        module = cst.parse_module(path.read_text())
        expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        assert dict(pos.node_positions(module)) == dict(expected), path


LAYOUTS = {
    "decorated": """
        import functools
        # a comment before the decorators

        @functools.lru_cache
        # between decorators
        @functools.wraps(
            print,
        )
        def f(x):  # trailing
            return x
        """,
    "async": """
        import asyncio


        async def g():
            async with asyncio.Lock() as lock:
                async for x in lock:
                    await x
        """,
    "semicolons": """
        a = 1; b = 2
        c = 3 ; d = (4 +
              5)
        if a: b = 3; c = 4
        """,
    "members": """
        class A:
            '''doc'''

            x = 1  # a member

            # a comment between members
            @staticmethod
            def f(y):
                z = y; w = z
                return w

            class B:
                def g(self):
                    pass
                # the block's last comment
            # dedented comment
        # at column 0

        def h():
            pass
        """,
    "continuations": """
        x = 1 + \\
            2
        s = '''a
        multi-line
        string'''
        t = ("a"
             "b")
        def f():
            return \\
                x
        """,
    "compound": """
        try:
            import jax
        except ImportError:  # no jax
            jax = None
        else:
            pass
        finally:
            pass
        for i in range(3):
            if i:
                break
        else:
            pass
        while False:
            pass
        with open("f") as fh, open("g") as gh:
            pass
        """,
    "one-line bodies": """
        class A: pass
        def f(): return 1
        class B:
            def g(self): return 2
        """,
    "form feed": "x = 1\n\x0c\ndef f():\n    return x\n",
    "tabs": "class A:\n\tdef f(self):\n\t\tif self:\n\t\t\treturn 1\n\n\tx = 2\n",
    "no final newline": "def f():\n    if True:\n        return 1",
    "comments only": "# a\n# b\n",
    "empty": "",
}


def _programs():
    out = []
    for name, code in LAYOUTS.items():
        code = textwrap.dedent(code).lstrip("\n") if code.startswith("\n") else code
        for ending in ("\n", "\r\n", "\r"):
            out.append((f"{name}-{ending!r}", code.replace("\n", ending)))
    return out


def _assert_same(code):
    """Every node's range equals the provider's, asked one at a time (each from a fresh
    ``Positions``, so every unit is generated alone) and all from one."""
    try:
        module = cst.parse_module(code)
    except cst.ParserSyntaxError:  # a syntax-error example: there are no nodes
        return None
    full = pos.node_positions(module)
    together = pos.Positions(module, code)
    nodes = [n for n in full if not is_layout(type(n)) and n is not module]
    for node in nodes:
        assert together.get(node) == full[node], (type(node).__name__, full[node])
    for node in nodes[:: max(1, len(nodes) // 8)]:
        alone = pos.Positions(module, code)
        assert alone.get(node) == full[node], (type(node).__name__, full[node])
        assert alone.fallbacks == 0, type(node).__name__
    assert together.fallbacks == 0
    asked = set(nodes)
    layout = [n for n in full if n not in asked]
    for node in layout[:: max(1, len(layout) // 8)] + [module]:
        # whitespace, comments and the module itself: the provider answers
        assert together.get(node) == full[node]
    return together


@pytest.mark.parametrize("name,code", _programs(), ids=[n for n, _ in _programs()])
def test_every_node_is_where_the_provider_puts_it(name, code):
    _assert_same(code)


@pytest.mark.parametrize("name,code", PROGRAMS, ids=[n for n, _ in PROGRAMS])
def test_every_node_of_the_example_programs(name, code):
    _assert_same(code)


def test_a_node_of_another_module_has_no_position():
    module = cst.parse_module("x = 1\n")
    other = cst.parse_module("y = 2\n").body[0]
    p = pos.Positions(module, "x = 1\n")
    assert p.get(other) is None and p.get(other, "d") == "d"
    assert p.fallbacks == 0


def test_a_statement_at_the_wrong_line_is_caught_by_the_text_check():
    """The check that the generated code is the text's at the statement's line is what
    makes a mispaired statement fall back instead of answering a wrong line."""
    code = "x = 1\n\n\ny = 2\nz = 3\n"
    module = cst.parse_module(code)
    full = pos.node_positions(module)
    p = pos.Positions(module, code)
    y = module.body[1]
    p._owner_of(y).line -= 1  # as if ast had put `y = 2` a line higher
    assert p.get(y) == full[y]
    assert p.fallbacks == 1


PEP_695 = (
    "from typing import Sequence\n\n\n"
    "type Pair[T] = tuple[T, T]\n"
    "type Plain = int\n\n"
    "def first[T: (int, str), *Ts, **P](xs: Sequence[T]) -> T:\n"
    "    type = 1  # a plain name `type`\n"
    "    return xs[0]\n\n"
    "class Box[T]:\n"
    "    def get[U](self, u: U) -> T | U:\n"
    "        return u\n\n"
    "def spread[\n    T,\n](x: T) -> T:\n"
    "    return x\n"
    "x = first([1]); y = type(x)\n"
)


def test_python_312_type_parameters_are_placed_on_any_python():
    """On 3.11, ``pyast`` reads the units' rows from a stand-in with the type parameter
    lists blanked; on 3.12 from the text itself. Either way every node is the provider's."""
    _assert_same(PEP_695)


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="3.12 reads PEP 701 f-strings")
def test_syntax_the_running_ast_rejects_falls_back():
    code = 'def f(x):\n    return f"{x["k"]}"\n'  # PEP 701: the f-string's quote inside
    module = cst.parse_module(code)
    full = pos.node_positions(module)
    p = pos.Positions(module, code)
    ret = module.body[0].body.body[0]
    assert p.get(ret) == full[ret] and p.fallbacks == 1


def _every_position(module, text, rows=None):
    """Every node's range (the provider's), on the file's rows (``relevance.kept``)."""
    ranges = pos.node_positions(module)
    return {n: pos._on_rows(r, rows) for n, r in ranges.items()} if rows else ranges


@pytest.mark.parametrize("every", [
    pytest.param(2, id="every-2nd"),  # the default run: half the programs (5 s)
    pytest.param(1, id="all", marks=pytest.mark.slow)])  # CI's -m slow leg
def test_findings_are_placed_as_with_every_position_computed(monkeypatch, every):
    """``check``'s findings, fixes and notes sit where the whole module's positions put
    them, on the example programs that have findings."""
    programs = PROGRAMS[::every]
    lazy = {n: _key(check_source(c, "example.py", Config())) for n, c in programs}
    with_findings = [(n, c) for n, c in programs if lazy[n]]
    assert len(with_findings) > 100 // every
    monkeypatch.setattr("shardcheck.analyzer.place_findings.Positions", _every_position)
    for name, code in with_findings:
        assert lazy[name] == _key(check_source(code, "example.py", Config())), name
