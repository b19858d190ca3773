"""``sources.cst_parse``: libcst's parse without its per-node validation gives the same
trees, and leaves validation on for every node built by hand."""

import glob
import os

import libcst as cst
import pytest

from shardcheck.analyzer.sources import cst_parse

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FILES = sorted(glob.glob(os.path.join(ROOT, "examples", "**", "*.py"), recursive=True)
               + [os.path.join(ROOT, "analyzer", f) for f in ("engine.py", "pyast.py", "relevance.py")])


def test_the_trees_are_libcsts():
    assert len(FILES) > 25
    for path in FILES:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        ours, theirs = cst_parse(text), cst.parse_module(text)
        assert ours.deep_equals(theirs), path
        assert ours.code == text


def test_validation_is_back_on_after_a_parse_and_after_a_failed_one():
    cst_parse("x = 1\n")
    with pytest.raises(cst.ParserSyntaxError):
        cst_parse("x = (\n")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("")
    with pytest.raises(cst.CSTValidationError):
        cst.Integer("1.5")
