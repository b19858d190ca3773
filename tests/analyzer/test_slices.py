"""``analyzer.slices``: what an importer read of a module, as a digest that an edit
outside the names' slice leaves alone and an edit inside it changes."""

from __future__ import annotations

import textwrap

import pytest

from shardcheck.analyzer.slices import SliceIndex

MODULE = textwrap.dedent('''\
    """A model module."""
    from __future__ import annotations
    import jax
    from jax.sharding import PartitionSpec as P

    AXIS = "model"
    WIDTH = 256
    SPECS = {"w": P(None, AXIS)}
    SPECS["b"] = P(AXIS)


    def spec_of(name):
        return SPECS[name]


    def width():
        return WIDTH * 2


    def unrelated():
        return 1


    class Block:
        def kernel(self):
            return spec_of("w")
    ''')


def digest(text, *names):
    return SliceIndex(text).digest(names)


def edited(old, new, text=MODULE):
    assert old in text
    return text.replace(old, new)


@pytest.mark.parametrize("edit", [
    ("def unrelated():\n    return 1", "def unrelated():\n    return 2"),  # not reached
    ("WIDTH = 256", "WIDTH = 128"),  # spec_of reads no WIDTH
    ('"""A model module."""', '"""A model module, documented."""'),
    ("class Block:", "def added():\n    return AXIS\n\n\nclass Block:"),  # shifts Block
])
def test_an_edit_outside_the_slice_keeps_the_digest(edit):
    assert digest(edited(*edit), "spec_of") == digest(MODULE, "spec_of")


def test_a_comment_at_the_end_keeps_every_digest():
    for names in (("spec_of",), ("Block",), ("width", "AXIS")):
        assert digest(MODULE + "# edited\n", *names) == digest(MODULE, *names)


@pytest.mark.parametrize("edit", [
    ("return SPECS[name]", "return SPECS.get(name)"),  # the function itself
    ('AXIS = "model"', 'AXIS = "modle"'),  # what it reads, through SPECS
    ('SPECS["b"] = P(AXIS)', 'SPECS["b"] = P(None)'),  # a store into what it reads
    ("import jax\n", "import jax\nimport numpy as np\n"),  # moves every line below
    ("from __future__ import annotations\n", ""),
])
def test_an_edit_inside_the_slice_changes_the_digest(edit):
    assert digest(edited(*edit), "spec_of") != digest(MODULE, "spec_of")


def test_a_method_reads_what_its_class_body_mentions():
    assert digest(edited('return SPECS[name]', 'return None'), "Block") != digest(MODULE, "Block")
    assert digest(edited("return WIDTH * 2", "return WIDTH"), "Block") == digest(MODULE, "Block")


def test_a_function_that_rebinds_a_global_is_in_its_slice():
    text = MODULE + "\n\ndef retune():\n    global WIDTH\n    WIDTH = 64\n"
    assert digest(edited("WIDTH = 64", "WIDTH = 32", text), "width") != digest(text, "width")
    assert digest(edited("WIDTH = 64", "WIDTH = 32", text), "spec_of") == digest(text, "spec_of")


def test_a_statement_run_for_its_effect_is_in_every_slice():
    text = MODULE + "\njax.config.update('jax_enable_x64', True)\n"
    changed = edited("True)", "False)", text)
    assert digest(changed, "unrelated") != digest(text, "unrelated")


def test_a_star_import_or_reflection_may_bind_anything_so_it_is_in_every_slice():
    for line in ("from helpers import *", "globals()['WIDTH'] = 3", "import sys\n"
                 "sys.modules[__name__].WIDTH = 3"):
        text = MODULE + "\n" + line + "\n"
        assert digest(text + "x = 1\n", "unrelated") == digest(text, "unrelated")
        assert digest(edited("3", "4", text) if "3" in line else edited("helpers", "other", text),
                      "unrelated") != digest(text, "unrelated")


def test_a_shardcheck_or_noqa_comment_anywhere_is_in_every_slice():
    text = edited("def unrelated():", "def unrelated():  # shardcheck: ignore[SC101]")
    assert digest(text, "spec_of") != digest(MODULE, "spec_of")
    assert digest(edited("def unrelated():", "def unrelated():  # a note"), "spec_of") \
        == digest(MODULE, "spec_of")


def test_a_module_python_cannot_read_has_no_digest():
    assert digest("def f(:\n", "f") is None


def test_a_star_import_reads_every_public_name_and_nothing_else():
    """``from m import *`` (``slices.STAR``): a comment or a private helper no public
    statement reads is outside what it read; a public definition, new or edited, and
    ``__all__`` are inside."""
    from shardcheck.analyzer.slices import STAR
    text = MODULE + "\n\ndef _private():\n    return 3\n"
    star = digest(text, STAR)
    assert digest(text + "# edited\n", STAR) == star
    assert digest(edited("return 3", "return 4", text), STAR) == star
    assert digest(edited("return 1", "return 2", text), STAR) != star  # `unrelated` is public
    assert digest(text + "\ndef added():\n    return 1\n", STAR) != star
    assert digest(text + "\n__all__ = ['width']\n", STAR) != star
