"""SC115 (``parallelism_order``): mesh sizes listed in another order than the
``mesh_axes`` they size. The rule's example runs under JAX (the mesh gets the swapped
sizes); these are the shapes of a MaxText-style project: YAML configs with and without
an axis, and the code's branch for each."""

import os
import textwrap


MESH = textwrap.dedent('''\
    import jax
    import numpy as np
    from jax.experimental import mesh_utils
    from jax.sharding import Mesh


    def create_device_mesh(config):
        if "ici_context_parallelism" in config.keys():
            ici_parallelism = [
                config.ici_data_parallelism,
                config.ici_fsdp_parallelism,
                config.ici_tensor_parallelism,
                config.ici_context_parallelism,
            ]
        else:
            ici_parallelism = [
                config.ici_data_parallelism,
                config.ici_fsdp_parallelism,
                config.ici_tensor_parallelism,
            ]
        devices = mesh_utils.create_device_mesh(ici_parallelism)
        return Mesh(devices, config.mesh_axes)
    ''')
BASE = "mesh_axes: ['data', 'fsdp', 'tensor']\nici_data_parallelism: -1\n"
CONTEXT = "mesh_axes: ['data', 'fsdp', 'context', 'tensor']\nici_context_parallelism: 2\n"


def _project(tmp_path, mesh=MESH, **configs):
    (tmp_path / "pyproject.toml").write_text("[tool.shardcheck]\n")
    (tmp_path / "mesh.py").write_text(mesh)
    (tmp_path / "configs").mkdir(exist_ok=True)
    for name, text in configs.items():
        (tmp_path / "configs" / f"{name}.yml").write_text(text)


def test_the_branch_whose_sizes_are_out_of_order_is_flagged_at_its_list(tmp_path, concise_check):
    _project(tmp_path, base=BASE, context=CONTEXT)
    (found,) = concise_check(tmp_path, "SC115", "mesh.py")  # pre-commit: the staged file alone
    assert found.startswith("mesh.py:9:27: SC115 warning")
    assert "order ('data', 'fsdp', 'tensor', 'context')" in found
    assert "`mesh_axes` at configs/context.yml orders the same axes " \
           "('data', 'fsdp', 'context', 'tensor')" in found
    assert "'context' gets the size of 'tensor', 'tensor' gets the size of 'context'" in found


def test_sizes_in_the_axes_order_and_configs_of_other_axes_are_silent(tmp_path, concise_check):
    _project(tmp_path, base=BASE, context=CONTEXT.replace("'context', 'tensor'", "'tensor', 'context'"))
    assert concise_check(tmp_path, "SC115", ".") == []
    _project(tmp_path, base=BASE)  # only the three-axis config: the four-size branch is another's
    os.remove(tmp_path / "configs" / "context.yml")
    assert concise_check(tmp_path, "SC115", ".") == []


def test_a_value_the_code_writes_and_not_known_keeps_the_configs(tmp_path, concise_check):
    """The code also writes mesh_axes from something not read here (a cache key): the
    configs' values are still compared; a class default is, where all are known."""
    _project(tmp_path, mesh=MESH + "\n\ndef override(config, args):\n"
             "    config.mesh_axes = args.mesh_axes\n", base=BASE, context=CONTEXT)
    assert len(concise_check(tmp_path, "SC115", ".")) == 1
    _project(tmp_path, mesh=MESH + "\n\nclass Defaults:\n"
             "    mesh_axes = ('data', 'fsdp', 'context', 'tensor')\n", base=BASE)
    os.remove(tmp_path / "configs" / "context.yml")
    (found,) = concise_check(tmp_path, "SC115", ".")
    assert "`mesh_axes` at mesh.py:26 orders" in found


def test_a_suppression_comment_on_the_list_silences_it(tmp_path, concise_check):
    _project(tmp_path, mesh=MESH.replace("ici_parallelism = [\n", "ici_parallelism = [  # noqa: SC115\n", 1),
             base=BASE, context=CONTEXT)
    assert concise_check(tmp_path, "SC115", ".") == []
