"""``from module import name`` of a project module (``interp.state.LazyImport``): read
from its module when the name is first used, in the checked file as in the modules it
imports, so a package ``__init__`` that only re-exports reads none of its submodules."""

from __future__ import annotations

import textwrap

from shardcheck.analyzer.config import Config
from shardcheck.analyzer.engine import check_file
from shardcheck.analyzer.project import Project

MESHES = """
import jax
MESH = jax.make_mesh((2, 4), ("data", "model"))
AXIS = "batch"
"""
USER = """
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
{imports}
x = jax.device_put(jnp.zeros((8, 16)), NamedSharding(MESH, P(AXIS, None)))
"""


def _tree(tmp_path, files):
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    project = Project(Config(root=str(tmp_path)))
    for name in files:
        project.add_file(str(tmp_path / name))
    return project


def _read(project):
    return {name for name in project.parsed}


def test_a_package_init_that_only_re_exports_reads_none_of_its_modules(tmp_path):
    project = _tree(tmp_path, {
        "pkg/__init__.py": "import jax\nfrom .meshes import MESH, AXIS\nfrom .other import *\n",
        "pkg/meshes.py": MESHES, "pkg/other.py": "VALUE = 1\n"})
    assert check_file(str(tmp_path / "pkg/__init__.py"), project.config, project) == []
    assert "pkg.meshes" not in _read(project)  # the star import reads its public names
    deps = project.dependencies(str(tmp_path / "pkg/__init__.py"))
    assert not any(p.endswith("meshes.py") for p in list(deps.files) + list(deps.names))


def test_a_name_used_is_read_through_the_re_export(tmp_path):
    project = _tree(tmp_path, {
        "pkg/__init__.py": "from .meshes import MESH, AXIS\n", "pkg/meshes.py": MESHES,
        "user.py": USER.format(imports="from pkg import MESH, AXIS")})
    found = check_file(str(tmp_path / "user.py"), project.config, project)
    assert [(f.row, f.code) for f in found] == [(6, "SC101")]
    assert "pkg.meshes" in _read(project)


def test_one_import_on_either_path_keeps_its_value(tmp_path):
    """``if ...: from pkg.meshes import AXIS / else: AXIS = "batch"``: the join reads
    the import, as it would have had the import been read when it ran."""
    fallback = 'import os\nif os.environ.get("FAST"):\n    from pkg.meshes import MESH, AXIS\n' \
               'else:\n    from pkg.meshes import MESH\n    AXIS = "batch"'
    project = _tree(tmp_path, {
        "pkg/__init__.py": "", "pkg/meshes.py": MESHES,
        "user.py": USER.format(imports=fallback)})
    found = check_file(str(tmp_path / "user.py"), project.config, project)
    assert [(f.row, f.code) for f in found] == [(11, "SC101")]
    other = fallback.replace('AXIS = "batch"', 'AXIS = "data"')  # the paths disagree: unknown
    (tmp_path / "user.py").write_text(USER.format(imports=other))
    project = _tree(tmp_path, {"pkg/__init__.py": "", "pkg/meshes.py": MESHES})
    project.add_file(str(tmp_path / "user.py"))
    assert check_file(str(tmp_path / "user.py"), project.config, project) == []
