"""The analyzer's varying-axes inference inside shard_map bodies, held against JAX.

For each body expression, the analyzer's inferred `{V:...}` of the returned value must
equal what `jax.typeof` reports inside the running body (JAX 0.10.2, 8 CPU devices).
"""

import libcst as cst
import pytest

import shardcheck.analyzer.jaxapi  # noqa: F401  (what each API means: the interpreter asks it)
from shardcheck.analyzer.interp.model import Interpreter
from shardcheck.analyzer.values import ArrayVal

TEMPLATE = '''import jax
import jax.numpy as jnp
import sharding_types as st
from jax import P
RESULT = []

def body(x, w):
    y = {expr}
    RESULT.append(sorted(st.typeof(y).varying))
    return y

mesh = jax.make_mesh((2, 4), ("data", "model"))
with jax.set_mesh(mesh):
    x = jax.device_put(jnp.ones((8, 16)), P("data", "model"))
    w = jax.device_put(jnp.ones((16, 16)), P("model", None))
    out = jax.jit(jax.shard_map(body, in_specs=(P("data", "model"), P("model", None)),
                                out_specs=P("data", "model")))(x, w)
'''

CASES = [
    "x",
    "w[:4, :4] + 0",
    "jax.lax.psum(x, 'model')",
    "jax.lax.psum(x, ('data', 'model'))",
    "jax.lax.pmean(x, 'data')",
    "jax.lax.pmax(x * 2, 'model')",
    "x @ w[:, :4]",
    "jnp.dot(x, w[:, :4])",
    "jax.lax.psum(x @ w[:, :4], 'model')",
    "x * 2.0 + 1",
    "jnp.tanh(x) - x",
    "jax.nn.relu(jax.lax.psum(x, 'data'))",
    "jnp.zeros((4, 4)) + jax.lax.axis_index('model')",
    "jax.lax.pcast(jnp.zeros((4, 4)), 'data', to='varying')",
    "jax.lax.all_gather(x, 'model', axis=1, tiled=True)[:, :4]",
    "jax.lax.psum_scatter(x, 'model', scatter_dimension=1, tiled=True) + jnp.zeros((4, 4))",
    "jax.lax.ppermute(x, 'data', [(0, 1), (1, 0)])",
    "x.T",
    "jnp.sum(x, axis=0, keepdims=True) + jnp.zeros((4, 4))",
    "jnp.zeros((4, 4))",
    "jax.lax.scan(lambda c, r: (c + r, c), jnp.zeros_like(x[0]), x)[1]",
    "jax.lax.scan(lambda c, r: (c, r * 2), jnp.zeros(()), x)[1]",
    "jax.lax.fori_loop(0, 4, lambda i, c: c + x, jnp.zeros_like(x))",
    "jax.lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2), (0, x))[1]",
    "jax.lax.cond(x.sum() > 0, lambda: x, lambda: x * 2)",
    "jax.lax.cond(x.sum() > 0, lambda: jnp.zeros((4, 4)), lambda: jnp.ones((4, 4)))",
    "jax.lax.switch(1, [lambda v: v, lambda v: v + 1], x)",
    "jax.lax.all_gather(x, 'model', axis=1, tiled=True, to='invarying')[:, :4]",
    "jax.random.normal(jax.random.fold_in(jax.random.key(0), jax.lax.axis_index('data')), (4, 4))",
    "jax.random.uniform(jax.random.split(jax.random.key(1))[0], (4, 4))",
]


def _inferred(code):
    model = Interpreter(cst.parse_module(code)).build()
    (sm,) = model.events.shard_maps
    (ret,) = [v for _, v in sm.returns]
    return sorted(ret.varying) if isinstance(ret, ArrayVal) and ret.varying is not None else None


@pytest.fixture(scope="module")
def jax_varying():
    from jax_snippets import run_snippets
    return run_snippets([TEMPLATE.format(expr=e) for e in CASES])


@pytest.mark.parametrize("k", range(len(CASES)), ids=CASES)
def test_inferred_varying_equals_jax(jax_varying, k):
    res = jax_varying[k]
    assert res["status"] == "ok", res
    (jax_axes,) = res["result"]
    inferred = _inferred(TEMPLATE.format(expr=CASES[k]))
    assert inferred is not None, "the analyzer should know this one"
    assert inferred == jax_axes


def test_unknown_ops_stay_unknown():
    code = TEMPLATE.format(expr="some_library.mystery(x)")
    assert _inferred(code) is None
