"""``compat.FLAX_REMOVED`` against the installed Flax: each name is gone (the import or
attribute access old code does raises), each replacement is there; and SC401 warns at
each spelling of one, not at the current names beside them."""

import importlib

import pytest

from shardcheck.analyzer.compat import FLAX_REMOVED
from shardcheck.analyzer.engine import check_source

pytest.importorskip("flax")


def _lookup(dotted):
    """The object ``dotted`` names, importing its longest module prefix."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(dotted)


@pytest.mark.parametrize("name", sorted(FLAX_REMOVED))
def test_the_installed_flax_lacks_it_and_has_its_replacement(name):
    module, attr = name.rsplit(".", 1)
    with pytest.raises(ImportError):
        exec(f"from {module} import {attr}", {})
    with pytest.raises(AttributeError):
        getattr(importlib.import_module(module), attr)
    replacement = FLAX_REMOVED[name].replacement
    if replacement and "(" not in replacement:
        assert _lookup(replacement) is not None


@pytest.mark.parametrize("name", sorted(FLAX_REMOVED))
def test_each_spelling_is_a_warning_naming_the_release(name):
    module, attr = name.rsplit(".", 1)
    parent, last = module.rsplit(".", 1)
    for code, row in ((f"from {module} import {attr}\n", 1),
                      (f"from {parent} import {last}\nx = {last}.{attr}\n", 2),
                      (f"import {module} as m\nx = m.{attr}\n", 2)):
        found = [f for f in check_source(code, "old.py") if f.code == "SC401"]
        assert [(f.row, f.severity) for f in found] == [(row, "warning")], code
        assert f"Flax {FLAX_REMOVED[name].removed_in}" in found[0].message


def test_current_names_and_guarded_uses_are_not_reported():
    code = ("import flax.linen as nn\nfrom flax import nnx\n"
            "from flax.linen.spmd import get_logical_axis_rules\n"
            "from flax.linen.partitioning import with_sharding_constraint\n"
            "a = nn.logical_axis_rules\nb = nnx.with_partitioning\nc = nnx.use_eager_sharding\n"
            "if hasattr(nnx, 'with_sharding_constraint'):\n"
            "    d = nnx.with_sharding_constraint\n"
            "try:\n    from flax.linen.spmd import logical_axis_rules\n"
            "except ImportError:\n    logical_axis_rules = nn.logical_axis_rules\n")
    assert [f for f in check_source(code, "new.py") if f.code == "SC401"] == []
