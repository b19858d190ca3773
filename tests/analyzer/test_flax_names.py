"""``analyzer.flax_names``: the names a file's Flax modules give their parameter paths,
read from syntax, against the paths Flax itself gives (``jax.eval_shape`` of ``init``;
``nnx.state``): every component of every real path must hold, or a partition rule that
names it would be reported as matching nothing."""

import textwrap

import libcst as cst
import pytest

from shardcheck.analyzer.flax_names import missing_word, path_names

LINEN_MODELS = {
    "setup_and_lists": """
        import flax.linen as nn

        class Mlp(nn.Module):
            def setup(self):
                self.w1 = nn.Dense(8)
                self.w2 = nn.Dense(4, use_bias=False)

            def __call__(self, x):
                return self.w2(self.w1(x))

        class Model(nn.Module):
            def setup(self):
                self.embed = nn.Embed(32, 4)
                self.layers = [Mlp() for _ in range(2)]
                self.norm = nn.LayerNorm()

            def __call__(self, ids):
                x = self.embed(ids).astype("float32")
                for layer in self.layers:
                    x = layer(x)
                return self.norm(x)
        """,
    "compact_auto_names": """
        from flax import linen as nn

        class Scale(nn.Module):
            @nn.compact
            def __call__(self, x):
                return x * self.param("gain", nn.initializers.ones, (x.shape[-1],))

        class Model(nn.Module):
            @nn.compact
            def __call__(self, ids):
                x = nn.Embed(32, 4, name="tok")(ids).astype("float32")
                for i in range(3):
                    x = nn.Dense(4, name=str(i))(x)
                x = nn.Dense(4)(x)
                x = Scale()(x)
                return nn.RMSNorm()(nn.Dense(4)(x))
        """,
}


def _real_paths(source, model="Model"):
    import jax
    import jax.numpy as jnp
    scope: dict = {}
    exec(textwrap.dedent(source), scope)
    ids = jax.ShapeDtypeStruct((2, 8), jnp.int32)
    variables = jax.eval_shape(scope[model]().init, jax.random.key(0), ids)
    return [[str(getattr(k, "key", getattr(k, "idx", k))) for k in path]
            for path, _ in jax.tree_util.tree_flatten_with_path(variables)[0]]


@pytest.mark.parametrize("name", list(LINEN_MODELS))
def test_every_component_of_a_linen_models_real_paths_holds(name):
    source = LINEN_MODELS[name]
    names = path_names(cst.parse_module(textwrap.dedent(source)))
    assert names is not None
    paths = _real_paths(source)
    assert len(paths) >= 5
    for path in paths:
        assert all(names.holds(part) for part in path), (path, sorted(names.names))
    assert not names.holds("attention") and not names.holds("wq")


def test_every_component_of_an_nnx_models_real_paths_holds():
    from flax import nnx
    source = textwrap.dedent("""
        from flax import nnx

        class Block(nnx.Module):
            def __init__(self, rngs):
                self.q_proj = nnx.Linear(4, 4, rngs=rngs)
                self.norm = nnx.RMSNorm(4, rngs=rngs)

        class Model(nnx.Module):
            def __init__(self, rngs):
                self.embed = nnx.Embed(32, 4, rngs=rngs)
                self.blocks = nnx.List([Block(rngs) for _ in range(2)])
                self.head = nnx.Param(nnx.initializers.zeros(rngs.params(), (4, 32)))
        """)
    names = path_names(cst.parse_module(source))
    assert names is not None
    scope: dict = {}
    exec(source, scope)
    state = nnx.state(scope["Model"](nnx.Rngs(0)), nnx.Param)
    paths = [[str(k) for k in path] for path, _ in nnx.to_flat_state(state)]
    assert len(paths) >= 6
    for path in paths:
        assert all(names.holds(part) for part in path), (path, sorted(names.names))


@pytest.mark.parametrize("source", [
    # a layer of another library or file: its names are not in view
    "import flax.linen as nn\nfrom other import Attention\n"
    "class M(nn.Module):\n    def setup(self):\n        self.attn = Attention()\n",
    "import flax.linen as nn\nfrom other import Attention\n"
    "class M(nn.Module):\n    @nn.compact\n    def __call__(self, x):\n"
    "        return Attention(4)(x)\n",
    # a name computed at run time
    "import flax.linen as nn\nclass M(nn.Module):\n    kind: str = 'q'\n"
    "    @nn.compact\n    def __call__(self, x):\n"
    "        return nn.Dense(4, name=f'{self.kind}_proj')(x)\n",
    # a submodule passed in as a field
    "import flax.linen as nn\nclass M(nn.Module):\n    inner: nn.Module\n"
    "    def __call__(self, x):\n        return self.inner(x)\n",
    # a parameter named by a variable
    "import flax.linen as nn\nclass M(nn.Module):\n    @nn.compact\n    def __call__(self, x, n='w'):\n"
    "        return x * self.param(n, nn.initializers.ones, (4,))\n",
    # a module class of a base this file does not show
    "import flax.linen as nn\nfrom base import Base\n"
    "class M(Base):\n    def setup(self):\n        self.w = nn.Dense(4)\n",
    # a Flax layer this reading does not list
    "import flax.linen as nn\nclass M(nn.Module):\n    def setup(self):\n"
    "        self.cell = nn.LSTMCell(4)\n",
    # no Flax module at all
    "import jax\nclass M:\n    def setup(self):\n        self.w = 1\n",
])
def test_names_that_may_come_from_elsewhere_are_unknown(source):
    assert path_names(cst.parse_module(source)) is None


@pytest.mark.parametrize("regex,missing", [
    ("attention/(wq|wk|wv)/kernel", None),
    ("atention/wq/kernel", "atention"),
    ("attention/(wqq|wk)/kernel", None),  # one alternative is enough
    ("attention/(xq|yk)/kernel", "xq"),
    ("layers_\\d+/attention", None),
    ("wqz?/kernel", None),  # the optional letter is not read
    ("(?i)ATTENTION/wq", None),  # case-insensitive: not read
    (".*", None),
    ("attention(/wq)+", None),
    ("attention(/zz)+", "zz"),
    ("attention(/zz)*", None),  # optional
    ("[", None),  # does not parse
])
def test_the_words_a_regex_must_match(regex, missing):
    known = {"attention", "wq", "wk", "kernel", "layers_0", "mlp"}
    found = missing_word(regex, lambda w: any(w in n for n in known))
    assert found == missing
