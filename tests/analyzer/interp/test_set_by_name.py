"""Which attributes a ``setattr`` can set, read from the source around it
(``analyzer/interp/set_by_name.py``); the programs of ``tests/analyzer/test_instances.py``
(``set_by_*``) check what follows from it under JAX."""

import textwrap

import libcst as cst
import pytest

from shardcheck.analyzer.interp.set_by_name import loop_names, names_set


def _sets(source: str):
    """What the one ``setattr`` of ``source`` can set: (names, prefixes), or None (any)."""
    module = cst.parse_module(textwrap.dedent(source))
    loops = loop_names(module)
    calls = [n for n in _walk(module) if isinstance(n, cst.Call)
             and isinstance(n.func, cst.Name) and n.func.value == "setattr"]
    assert len(calls) == 1
    got = names_set(calls[0], loops)
    return None if got is None else (set(got.names), set(got.prefixes))


def _walk(node):
    yield node
    for child in node.children:
        yield from _walk(child)


@pytest.mark.parametrize("source, sets", [
    ('setattr(self, "mesh", m)', ({"mesh"}, set())),
    ('setattr(self, f"layer_{i}", m)', (set(), {"layer_"})),
    ('for k in ("wq", "wk"):\n    setattr(self, k, m)', ({"wq", "wk"}, set())),
    ('for k, v in zip(["a", "b"], vs):\n    setattr(self, k, v)', ({"a", "b"}, set())),
    ('for i, k in enumerate(["a"]):\n    setattr(self, k, i)', ({"a"}, set())),
    ('''
     class Pipeline:
         _keys = ["encoder"]

         @classmethod
         def load(cls, values):
             p = cls()
             for key, value in zip(cls._keys, values):
                 setattr(p, key, value)
     ''', ({"encoder"}, set())),
    ('KEYS = ("a", "b")\nfor k in KEYS:\n    setattr(self, k, 1)', ({"a", "b"}, set())),
])
def test_names_the_source_tells(source, sets):
    assert _sets(source) == sets


@pytest.mark.parametrize("source", [
    "setattr(self, name, m)",  # a name from elsewhere
    'setattr(self, f"{prefix}_w", m)',  # no text before the first field
    "for k in keys:\n    setattr(self, k, 1)",  # not a literal
    'for k in ("a",):\n    k = k.upper()\n    setattr(self, k, 1)',  # rebound in the loop
    'KEYS = ["a"]\nKEYS = load()\nfor k in KEYS:\n    setattr(self, k, 1)',  # rebound
    'def f(KEYS):\n    for k in KEYS:\n        setattr(self, k, 1)\nKEYS = ["a"]',  # a parameter
    '''
    class Pipeline:
        _keys = ["encoder"]

        def __init__(self, keys):
            self._keys = keys  # an instance's own list
            for key in self._keys:
                setattr(self, key, None)
    ''',
])
def test_names_the_source_does_not_tell_are_any(source):
    assert _sets(source) is None
