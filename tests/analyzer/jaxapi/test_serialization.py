"""``jaxapi.serialization``: array serialization's renamed keyword, against the installed
JAX's own signature, and the fix that renames it."""

import inspect

import pytest

from shardcheck.analyzer.config import Config
from shardcheck.analyzer.engine import check_source
from shardcheck.analyzer.jaxapi.serialization import MODULE, RENAMED_KEYWORDS

CALL = """import jax
from jax.sharding import NamedSharding, PartitionSpec as P
from jax.experimental.array_serialization import serialization
mesh = jax.make_mesh((8,), ("data",))
spec = serialization.get_tensorstore_spec("/tmp/checkpoint/w")
restore = serialization.async_deserialize({keyword}=NamedSharding(mesh, P("data")),
                                          tensorstore_spec=spec, global_shape=(8,))
"""


@pytest.mark.parametrize("old", list(RENAMED_KEYWORDS))
def test_the_renamed_keyword_is_the_installed_jaxs(old):
    import importlib
    fn = importlib.import_module(MODULE).async_deserialize
    parameters = inspect.signature(fn).parameters
    assert old not in parameters and RENAMED_KEYWORDS[old] in parameters


@pytest.mark.parametrize("old", list(RENAMED_KEYWORDS))
def test_the_old_keyword_is_an_error_and_the_new_one_is_not(old):
    found = check_source(CALL.format(keyword=old), "ckpt.py", Config())
    assert [(f.code, f.row, f.severity) for f in found] == [("SC401", 6, "error")], found
    assert check_source(CALL.format(keyword=RENAMED_KEYWORDS[old]), "ckpt.py", Config()) == []
