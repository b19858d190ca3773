"""``analyzer.dependencies``: what a cached result depends on, as a cache entry keeps it.
The absent paths a result records (thousands in a large project: each place the import
system looked for a module and found none) are kept as a tree of path components,
collapsed at each missing directory, and judged from directory listings."""

import json
import os

import pytest

from shardcheck.analyzer.dependencies import Dependencies
from shardcheck.check.cache import _Existence

PATHS = ("pkg/a.py", "pkg/b.py", "pkg/sub/__init__.py", "pkg/sub/x/__init__.py",
         "pkg/a.py/c.py", "nodir/a.py", "nodir/deeper/a.py", "pkg/gone.py", "pkg/sub")


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "a.py").write_text("")
    (tmp_path / "pkg" / "sub" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "gone.py").symlink_to(tmp_path / "nowhere.py")  # listed, absent
    return tmp_path


def _stored(deps, listing):
    """``deps`` as a cache entry stores it and reads it back."""
    return Dependencies.from_json(json.loads(json.dumps(deps.collapsed(listing).as_json())))


def _holds(deps):
    return deps.hold(lambda p: None, _Existence().__getitem__, None, _Existence().listing)


def test_each_absent_path_stored_and_read_back_holds_exactly_while_it_is_absent(tree):
    for rel in PATHS:
        path = str(tree / rel)
        stored = _stored(Dependencies(absent=frozenset({path})), _Existence().listing)
        assert _holds(stored) == (not os.path.exists(path)), rel
        # read without listings (each leaf looked at), the same answer
        assert stored.hold(lambda p: None, os.path.exists) == (not os.path.exists(path)), rel


def test_paths_under_a_missing_directory_are_kept_as_the_directory(tree):
    deep = [str(tree / "nodir" / "deeper" / f"m{i}" / "__init__.py") for i in range(50)]
    deps = Dependencies(absent=frozenset(deep + [str(tree / "pkg" / "b.py")]))
    stored = _stored(deps, _Existence().listing)
    text = json.dumps(stored.as_json()["absent"])
    assert "m0" not in text and "deeper" not in text and '"nodir": 1' in text, text
    assert '"b.py": 1' in text and _holds(stored)
    # the directory appearing is a miss, even where the paths below it stay absent: the
    # cache answers again, never from a result that might not hold
    (tree / "nodir").mkdir()
    assert not _holds(stored)
    assert Dependencies(absent=frozenset(deep)).hold(lambda p: None, os.path.exists)


def test_a_module_created_under_a_collapsed_directory_is_seen(tree):
    deep = str(tree / "nodir" / "deeper" / "a.py")
    stored = _stored(Dependencies(absent=frozenset({deep})), _Existence().listing)
    (tree / "nodir" / "deeper").mkdir(parents=True)
    (tree / "nodir" / "deeper" / "a.py").write_text("")
    assert not _holds(stored)


@pytest.mark.parametrize("absent", [{"": 2}, {"": {"tmp": "x"}}, {"": {"tmp": [1]}}])
def test_an_absent_tree_of_another_shape_does_not_hold(absent):
    """A corrupt entry: its result is a miss, never an error."""
    deps = Dependencies.from_json({"deps": {}, "absent": absent, "names": {}})
    assert deps is not None and not _holds(deps)


@pytest.mark.parametrize("absent", [[], "x", None])
def test_an_entry_whose_absent_paths_are_not_a_tree_is_not_read(absent):
    assert Dependencies.from_json({"deps": {}, "absent": absent, "names": {}}) is None
