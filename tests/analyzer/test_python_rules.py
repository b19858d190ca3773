"""A rule table written in Python (``analyzer/python_rules.py``): read as Python runs it
under its defaults, or not at all; and the sharding map resolving under it as Flax does."""

import json
import subprocess
import sys
import textwrap

import pytest

from shardcheck.analyzer.python_rules import discover

# T5X's shape: the rules chosen by two partitioning-dims parameters, common rules added,
# and the caller's additional rules appended
STANDARD = '''\
import logging


def standard_logical_axis_rules(activation_partitioning_dims=1,
                                parameter_partitioning_dims=1,
                                additional_rules=None):
  """Default sharding rules in terms of logical axis names."""
  logging.info("dims %d %d", activation_partitioning_dims, parameter_partitioning_dims)
  if activation_partitioning_dims == 1 and parameter_partitioning_dims == 1:
    rules = [
        ('batch', 'data'),
        ('vocab', 'model'),
        ('embed', None),
        ('mlp', 'model'),
        ('heads', 'model'),
    ]
  elif activation_partitioning_dims == 2 and parameter_partitioning_dims == 1:
    rules = [('batch', 'data'), ('embed', 'model')]
  else:
    raise ValueError('not supported')
  replicated_rules = [('length', None), ('kv', None)]
  rules.extend(replicated_rules)
  rules += [('experts', ('data', 'model'))]
  rules.append(('layers', None))
  if additional_rules:
    rules.extend(additional_rules)
  return rules
'''

CONSTANT = '''\
DEFAULT_LOGICAL_AXIS_RULES = [('batch', ('replica', 'data')), ('embed', None)]
'''


def _as_python_runs_it(source: str, name: str):
    namespace: dict = {}
    exec(compile(source, "<table>", "exec"), namespace)
    value = namespace[name]
    return value() if callable(value) else value


@pytest.mark.parametrize("source,name,shown", [
    (STANDARD, "standard_logical_axis_rules", "standard_logical_axis_rules()"),
    (CONSTANT, "DEFAULT_LOGICAL_AXIS_RULES", "DEFAULT_LOGICAL_AXIS_RULES"),
])
def test_a_table_is_read_as_python_runs_it_under_its_defaults(tmp_path, source, name, shown):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "partitioning.py").write_text(source)
    rules, where = discover(str(tmp_path))
    assert rules == _as_python_runs_it(source, name)
    assert where.replace("\\", "/") == f"pkg/partitioning.py:{source.count(chr(10), 0, source.index(name)) + 1} {shown}"


@pytest.mark.parametrize("body", [
    "def default_axis_rules():\n    return other_rules() + [('batch', 'data')]\n",  # a helper
    "def default_axis_rules(dims):\n    return [('batch', 'data')]\n",  # no default to run under
    "def default_axis_rules():\n    rules = []\n    for n in ('a', 'b'):\n"
    "        rules.append((n, 'data'))\n    return rules\n",  # a loop
    "def default_axis_rules():\n    raise NotImplementedError\n",
    "def default_axis_rules():\n    return [('batch', 3)]\n",  # not a rule table
    "def default_axis_rules():\n    return []\n",
    "def default_axis_rules():\n    rules = [('batch', 'data')]\n    mutate(rules)\n"
    "    return rules\n",  # a call that may change it
])
def test_a_table_the_evaluator_cannot_read_is_left_unread(tmp_path, body):
    (tmp_path / "rules.py").write_text(body)
    assert discover(str(tmp_path)) is None


def test_the_shallowest_table_that_reads_comes_first_and_tests_are_passed_over(tmp_path):
    (tmp_path / "deep" / "er").mkdir(parents=True)
    (tmp_path / "deep" / "er" / "p.py").write_text("X_AXIS_RULES = [('a', 'deep')]\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "p.py").write_text("X_AXIS_RULES = [('a', 'test')]\n")
    (tmp_path / "p_test.py").write_text("X_AXIS_RULES = [('a', 'test')]\n")
    (tmp_path / "top").mkdir()
    (tmp_path / "top" / "p.py").write_text("X_AXIS_RULES = [('a', helper())]\n")  # unread
    assert discover(str(tmp_path))[0] == [("a", "deep")]
    (tmp_path / "q.py").write_text("X_AXIS_RULES = [('a', 'top')]\n")
    assert discover(str(tmp_path))[0] == [("a", "top")]


LAYER = '''\
from flax.linen import partitioning as nn_partitioning


def mlp_block(x):
  return nn_partitioning.with_sharding_constraint(x, ('batch', 'length', 'mlp'))
'''


def _specs(root, *args):
    r = subprocess.run([sys.executable, "-m", "shardcheck", "specs", "--format", "json",
                        *args, str(root / "pkg")], capture_output=True, text=True, cwd=root)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.mark.parametrize("pyproject", [None, "[project]\nname = 'p'\n"])
def test_the_map_resolves_logical_sites_under_the_python_table_as_flax_does(tmp_path, pyproject):
    """A T5X-style project (no YAML config): the layer's names resolve under
    ``standard_logical_axis_rules()`` as Flax's ``logical_to_mesh_axes`` resolves them, and
    the map says which table it used."""
    from flax.linen import logical_to_mesh_axes
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "partitioning.py").write_text(STANDARD)
    (tmp_path / "pkg" / "layers.py").write_text(LAYER)
    if pyproject is not None:
        (tmp_path / "pyproject.toml").write_text(pyproject)
    data = _specs(tmp_path)
    [site] = data["sites"]
    rules = _as_python_runs_it(STANDARD, "standard_logical_axis_rules")
    expected = logical_to_mesh_axes(("batch", "length", "mlp"), rules)
    assert tuple(expected) == ("data", None, "model")  # the table's own, not Flax's defaults
    assert site["spec"] == "P" + repr(tuple(expected))
    assert data["logical_rules"]["discovered"] is True
    where = "pkg/partitioning.py" if pyproject else "partitioning.py"  # the root's, relative
    assert data["logical_rules"]["source"].replace("\\", "/") == \
        f"{where}:4 standard_logical_axis_rules()"


def test_declared_rules_and_discover_false_keep_the_python_table_out(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "partitioning.py").write_text(STANDARD)
    (tmp_path / "pkg" / "layers.py").write_text(LAYER)
    (tmp_path / "pyproject.toml").write_text("[tool.shardcheck.logical]\ndiscover = false\n")
    data = _specs(tmp_path)
    assert data["sites"][0]["spec"] is None and data["logical_rules"] is None
    (tmp_path / "pyproject.toml").write_text(textwrap.dedent("""\
        [tool.shardcheck.logical]
        rules = [["batch", "x"], ["mlp", "y"]]
        """))
    data = _specs(tmp_path)
    assert data["sites"][0]["spec"] == "P('x', None, 'y')"
    assert data["logical_rules"]["discovered"] is False
