"""A small src-layout project in the shape of real code, for the tests of the project as
the unit (issue 37): a mesh helper, a model whose sizes only the train script's mesh
divides or not, a jitted train step, and a script outside the package that imports it.

``write(root, d_ff=...)``: D_FF = 250 does not divide over the model axis of 4 that
``train.py`` passes to ``model.init_params`` (JAX raises at the ``device_put``); 256
does. ``run(root)``: what JAX says of ``train.main()``.
"""

from __future__ import annotations

import pathlib
import textwrap
from typing import Dict

MESH = '''\
import jax
from jax.sharding import AxisType


def make_mesh(data: int = 2, model: int = 4):
    return jax.make_mesh((data, model), ("data", "model"), axis_types=(AxisType.Explicit,) * 2)
'''

MODEL = '''\
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

D_MODEL = 64
D_FF = {d_ff}


def init_params(mesh):
    w_in = jax.device_put(jnp.zeros((D_MODEL, D_FF)), NamedSharding(mesh, P(None, "model")))
    w_out = jax.device_put(jnp.zeros((D_FF, D_MODEL)), NamedSharding(mesh, P("model", None)))
    return {{"w_in": w_in, "w_out": w_out}}


def mlp(params, x):
    h = jnp.dot(x, params["w_in"])
    return jnp.dot(jax.nn.relu(h), params["w_out"], out_sharding=P("data", None))
'''

TRAIN = '''\
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

from tinylm.mesh import make_mesh
from tinylm.model import D_MODEL, init_params, mlp


@jax.jit
def step(params, x):
    return mlp(params, x)


def main():
    mesh = make_mesh()
    with jax.set_mesh(mesh):
        params = init_params(mesh)
        x = jax.device_put(jnp.ones((16, D_MODEL)), NamedSharding(mesh, P("data", None)))
        y = step(params, x)
        return y.shape


if __name__ == "__main__":
    main()
'''

# a script beside the package: its mistake needs the package's mesh to be seen
DEMO = '''\
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

from tinylm.mesh import make_mesh


def demo():
    mesh = make_mesh()
    return jax.sharding.NamedSharding(mesh, P("modle", None))


if __name__ == "__main__":
    demo()
'''


def write(root: pathlib.Path, d_ff: int = 250) -> Dict[str, pathlib.Path]:
    """The project's files under ``root`` (a pyproject.toml makes it the project)."""
    files = {
        "pyproject.toml": '[project]\nname = "tinylm"\nversion = "0.1"\n\n[tool.shardcheck]\n',
        "src/tinylm/__init__.py": "",
        "src/tinylm/mesh.py": MESH,
        "src/tinylm/model.py": MODEL.format(d_ff=d_ff),
        "src/tinylm/train.py": TRAIN,
        "scripts/demo.py": "import jax\n" + DEMO,
    }
    out = {}
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        out[rel] = path
    return out


def run(root: pathlib.Path) -> dict:
    """``train.main()`` under JAX on 8 CPU devices, the package on the path as an
    editable install puts it: the snippet's status and error."""
    from jax_snippets import run_snippets
    code = textwrap.dedent(f"""\
        import sys
        sys.path.insert(0, {str(root / "src")!r})
        import tinylm.train
        RESULT = list(tinylm.train.main())
        """)
    return run_snippets([code])[0]
