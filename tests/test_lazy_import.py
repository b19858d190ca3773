"""Importing shardcheck's packages must not import JAX (a subprocess proves it)."""

import subprocess
import sys

import pytest

CODE = """
import sys
import {module}
import sharding_types as st
t = st.parse("float32[B@data,D]")
str(t); st.mismatch_reasons(t, st.parse("float32[8@data,4]"))
class Fake: pass
st.Sharded[Fake, "float32[8]"]          # the two-argument form needs no JAX
assert "jax" not in sys.modules, sorted(m for m in sys.modules if m.startswith("jax"))
assert "jaxlib" not in sys.modules
print("ok")
"""


@pytest.mark.parametrize("module", ["sharding_types", "shardcheck", "shardcheck.cli",
                                    "shardcheck.analyzer", "shardcheck.plugin"])
def test_import_does_not_import_jax(module):
    r = subprocess.run([sys.executable, "-c", CODE.format(module=module)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"


def test_a_runtime_check_does_import_jax():
    code = ("import sys, sharding_types as st\nimport numpy as np\n"
            "st.assert_sharding(np.zeros((2, 3), np.float32), 'float32[2,3]')\n"
            "assert 'jax' in sys.modules\nprint('ok')")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
