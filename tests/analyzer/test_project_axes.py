"""SC114 (``project_axes``): a spec naming an axis no mesh of the project has, where the
project's meshes are all known. Each case is a small project in the shape of real code;
the axis errors are JAX's (the rule's examples run the same shapes under JAX)."""

import os
import textwrap

from shardcheck.analyzer import project_axes
from shardcheck.analyzer.config import Config
from shardcheck.check.project_checks import project_findings

TRAIN = textwrap.dedent('''\
    import jax
    from model import register_mesh, shard_params

    AXES = ("data", "model")


    def main():
        register_mesh(jax.make_mesh((2, 4), AXES))
        return shard_params({})
    ''')

MODEL = textwrap.dedent('''\
    import jax
    import flax.linen as nn
    from jax.sharding import NamedSharding, PartitionSpec as P

    _MESHES = {}


    def register_mesh(mesh):
        _MESHES["train"] = mesh


    def shard_params(params):
        logical = nn.logical_to_mesh_axes(P("batch", "embed"))
        return jax.device_put(params, NamedSharding(_MESHES["train"], P("modle", None)))
    ''')


def _project(tmp_path, **files):
    (tmp_path / "pyproject.toml").write_text("[tool.shardcheck]\n")
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def test_a_spec_naming_no_axis_of_the_project_is_flagged_in_its_module(tmp_path, concise_check):
    _project(tmp_path, **{"train.py": TRAIN, "model.py": MODEL})
    found = concise_check(tmp_path, "SC114", ".")
    assert len(found) == 1 and found[0].startswith("model.py:14:")
    assert "'modle'" in found[0] and "Did you mean 'model'?" in found[0]
    # the spec of logical names (line 13) is not a mesh spec


def test_checking_one_file_gives_the_project_answer(tmp_path, concise_check):
    """pre-commit passes the staged model.py alone: the meshes of train.py count."""
    _project(tmp_path, **{"train.py": TRAIN, "model.py": MODEL})
    assert len(concise_check(tmp_path, "SC114", "model.py")) == 1
    assert concise_check(tmp_path, "SC114", "train.py") == []


def test_a_mesh_whose_names_are_not_known_opens_the_index(tmp_path, concise_check):
    """A helper of the project whose names come from its callers: known from the calls;
    a public helper nobody in the project calls: unknown, and nothing is reported."""
    helper = textwrap.dedent('''\
        import jax

        def create_mesh(shape, names):
            return jax.make_mesh(shape, names)
        ''')
    _project(tmp_path, **{"train.py": TRAIN, "model.py": MODEL, "meshes.py": helper})
    assert concise_check(tmp_path, "SC114", ".") == []  # a public helper: its callers' names
    index = project_axes.index_meshes([str(tmp_path / "meshes.py")])
    assert not index.closed and "not known statically" in index.opened_by[2]
    caller = "from meshes import create_mesh\nmesh = create_mesh((8,), ('data',))\n"
    (tmp_path / "run.py").write_text(caller)
    index = project_axes.index_meshes([str(tmp_path / "meshes.py"), str(tmp_path / "run.py")])
    assert index.closed and set(index.axes) == {"data"}
    (tmp_path / "run.py").write_text(caller + "other = create_mesh((8,), NAMES)\n")
    index = project_axes.index_meshes([str(tmp_path / "meshes.py"), str(tmp_path / "run.py")])
    assert not index.closed


def test_config_fields_give_the_mesh_its_names(tmp_path, concise_check):
    """``jax.make_mesh(shape, config.mesh_axes)``: the names every class default,
    assignment and YAML config of the project writes for ``mesh_axes``."""
    train = textwrap.dedent('''\
        import dataclasses
        import jax
        from jax.sharding import NamedSharding, PartitionSpec as P


        @dataclasses.dataclass
        class TrainConfig:
            mesh_shape: tuple = (2, 4)
            mesh_axes: tuple = ("data", "fsdp")


        class Trainer:
            def __init__(self, config):
                self.mesh = jax.make_mesh(config.mesh_shape, config.mesh_axes)
                self.specs = {"batch": P(("data", "fsdp")), "logits": P("data", "tensor")}

            def shard(self, x, kind):
                return jax.device_put(x, NamedSharding(self.mesh, self.specs[kind]))
        ''')
    _project(tmp_path, **{"train.py": train})
    index = project_axes.index_meshes([str(tmp_path / "train.py")])
    assert index.closed and set(index.axes) == {"data", "fsdp"}
    # the dict of specs is not an argument JAX reads: only a spec used where it is
    assert concise_check(tmp_path, "SC114", ".") == []
    (tmp_path / "train.py").write_text(train.replace(
        'self.specs[kind]', 'P("data", "tensor")'))
    assert len(concise_check(tmp_path, "SC114", ".")) == 1
    (tmp_path / "big.yml").write_text("mesh_axes: ['data', 'fsdp', 'tensor']\n")
    (warning,) = concise_check(tmp_path, "SC114", ".")  # a config the project holds has 'tensor'
    assert "SC114 warning" in warning and "written at big.yml have it" in warning
    assert "those at train.py:9 do not" in warning
    (tmp_path / "big.yml").unlink()
    (tmp_path / "cli.py").write_text(
        "from train import TrainConfig\nTrainConfig(mesh_axes=tuple(ARGS.axes))\n")
    assert concise_check(tmp_path, "SC114", ".") == []  # a value not known: nothing is said


def test_suppression_selection_and_expected_failures(tmp_path, concise_check):
    _project(tmp_path, **{"train.py": TRAIN,
                          "model.py": MODEL.replace('None)))', 'None)))  # noqa: SC114')})
    assert concise_check(tmp_path, "SC114", ".") == []
    _project(tmp_path, **{"model.py": MODEL})
    (tmp_path / "pyproject.toml").write_text("[tool.shardcheck]\nignore = ['SC114']\n")
    assert concise_check(tmp_path, "SC114", ".") == []
    test = textwrap.dedent('''\
        import jax
        import pytest
        from jax.sharding import NamedSharding, PartitionSpec as P

        def test_bad_axis():
            mesh = jax.make_mesh((8,), ("x",))
            with pytest.raises(ValueError):
                NamedSharding(MESHES[0], P("y"))
        ''')
    path = tmp_path / "test_bad.py"
    path.write_text(test)
    found = project_findings([str(path)], [str(path)], Config(), [])
    assert [f.in_expected_failure for f in found] == [True]


def test_a_finding_of_unknown_mesh_axis_is_not_repeated(tmp_path):
    """Where the file's own analysis sees the mesh, SC101 reports the axis."""
    source = textwrap.dedent('''\
        import jax
        from jax.sharding import NamedSharding, PartitionSpec as P
        mesh = jax.make_mesh((2, 4), ("data", "model"))
        s = NamedSharding(mesh, P("batch"))
        ''')
    path = tmp_path / "one.py"
    path.write_text(source)
    from shardcheck.analyzer.engine import check_source
    own = check_source(source, str(path))
    assert [f.code for f in own] == ["SC101"]
    assert project_findings([str(path)], [str(path)], Config(), own) == []
    assert [f.code for f in project_findings([str(path)], [str(path)], Config(), [])] == ["SC114"]


def test_the_language_server_answer_has_it_with_unsaved_buffers(tmp_path):
    from shardcheck.check import config as cfgmod
    from shardcheck.check.project_answer import answer
    _project(tmp_path, **{"train.py": TRAIN, "model.py": MODEL})
    config = cfgmod.load(None, start=str(tmp_path))
    model = str(tmp_path / "model.py")
    got = answer(model, MODEL.encode(), config, {})
    assert [f.code for f in got.findings if f.code == "SC114"] == ["SC114"]
    renamed = TRAIN.replace('"model")', '"modle")').encode()  # the mesh's buffer, unsaved
    got = answer(model, MODEL.encode(), config, {str(tmp_path / "train.py"): renamed})
    assert [f for f in got.findings if f.code == "SC114"] == []


def test_the_index_is_kept_between_runs_while_no_file_changes(tmp_path, monkeypatch):
    _project(tmp_path, **{"train.py": TRAIN, "model.py": MODEL})
    paths = [str(tmp_path / "train.py"), str(tmp_path / "model.py")]
    memo = str(tmp_path / "cache" / "project_axes.index")
    first = project_axes.index_meshes(paths, memo_file=memo)
    assert first.closed and os.path.exists(memo)
    project_axes._LAST_INDEX[:] = [None, None]  # a new run: only the memo file is left
    reads = []
    real = project_axes._index
    monkeypatch.setattr(project_axes, "_index", lambda *a: reads.append(1) or real(*a))
    assert project_axes.index_meshes(paths, memo_file=memo) == first and reads == []
    project_axes._LAST_INDEX[:] = [None, None]
    (tmp_path / "train.py").write_text(TRAIN.replace('"model")', '"tensor")'))
    again = project_axes.index_meshes(paths, memo_file=memo)
    assert reads == [1] and set(again.axes) == {"data", "tensor"}
    (tmp_path / "cache" / "project_axes.index").write_text("{not json")
    project_axes._LAST_INDEX[:] = [None, None]
    assert project_axes.index_meshes(paths, memo_file=memo).axes == again.axes  # corrupt: re-read


OUTSIDE = textwrap.dedent('''\
    from vendor import meshes

    MESH = meshes.build_mesh((8,))
    ''')


def test_a_mesh_made_outside_the_project_opens_the_index_before_any_name_is_followed(
        tmp_path, monkeypatch):
    """A module that makes a mesh no resolution can know (a helper outside the project)
    opens the index whatever comes first: the meshes whose names take following a
    parameter to every caller are not read at all (on jax's 1,073 files, one such
    mesh cost 3.5 s of a pre-commit run before the file that opened the index came)."""
    helper = textwrap.dedent('''\
        import jax

        def create_mesh(shape, names):
            return jax.make_mesh(shape, names)
        ''')
    _project(tmp_path, **{"meshes.py": helper, "run.py": "from meshes import create_mesh\n"
                          "mesh = create_mesh((8,), ('data',))\n", "zoo.py": OUTSIDE})
    paths = [str(tmp_path / n) for n in ("meshes.py", "run.py", "zoo.py")]
    followed = []
    real = project_axes.Resolver.calls_of
    monkeypatch.setattr(project_axes.Resolver, "calls_of",
                        lambda self, f: followed.append(f) or real(self, f))
    index = project_axes.index_meshes(paths)
    assert not index.closed and index.opened_by[0] == paths[2] and followed == []
    index = project_axes.index_meshes(paths[:2])  # without it: the names are followed
    assert index.closed and set(index.axes) == {"data"} and followed == ["create_mesh"]


def test_the_last_runs_opener_is_read_alone_while_it_still_opens_the_index(tmp_path, monkeypatch):
    """After an edit elsewhere, the file that opened the index last run is read first:
    while it still makes a mesh no resolution can know, the index is open (nothing is
    reported) and no other file is read; once it no longer does, the whole is read."""
    _project(tmp_path, **{"train.py": TRAIN, "model.py": MODEL, "zoo.py": OUTSIDE})
    paths = [str(tmp_path / n) for n in ("train.py", "model.py", "zoo.py")]
    memo = str(tmp_path / "cache" / "project_axes.index")
    assert not project_axes.index_meshes(paths, memo_file=memo).closed
    reads = []
    real = project_axes._index
    monkeypatch.setattr(project_axes, "_index", lambda *a: reads.append(1) or real(*a))
    project_axes._LAST_INDEX[:] = [None, None]  # a new run, after an edit of model.py
    (tmp_path / "model.py").write_text(MODEL + "# edited\n")
    again = project_axes.index_meshes(paths, memo_file=memo)
    assert not again.closed and again.opened_by[0] == paths[2] and reads == []
    project_axes._LAST_INDEX[:] = [None, None]  # the opener defined in the project now
    (tmp_path / "zoo.py").write_text(OUTSIDE.replace("from vendor import meshes\n", "") +
                                     "def build_mesh(shape):\n    return None\n")
    read = project_axes.index_meshes(paths, memo_file=memo)
    assert reads == [1] and read.closed and set(read.axes) == {"data", "model"}


def test_an_unchanged_opener_keeps_the_index_open_reading_only_the_changed_files(
        tmp_path, monkeypatch):
    """Next run, the opener unchanged: only the files changed since are read (for a
    definition of the callee the opener's reason needs undefined). A changed file that
    defines it, or a new file, and the index is read again: here it closes."""
    _project(tmp_path, **{"train.py": TRAIN, "model.py": MODEL, "zoo.py": OUTSIDE})
    paths = [str(tmp_path / n) for n in ("train.py", "model.py", "zoo.py")]
    memo = str(tmp_path / "cache" / "project_axes.index")
    assert not project_axes.index_meshes(paths, memo_file=memo).closed
    read = []
    real_read, real_still = project_axes.read_text, project_axes._still_opened
    monkeypatch.setattr(project_axes, "read_text", lambda p, o=None: read.append(p) or real_read(p, o))
    monkeypatch.setattr(project_axes, "_still_opened",
                        lambda *a: read.append("all") or real_still(*a))
    project_axes._LAST_INDEX[:] = [None, None]
    (tmp_path / "model.py").write_text(MODEL + "# edited\n")
    index = project_axes.index_meshes(paths, memo_file=memo)
    assert not index.closed and index.opened_by[0] == paths[2] and read == [paths[1]]
    project_axes._LAST_INDEX[:] = [None, None]  # the callee defined in the project now
    (tmp_path / "model.py").write_text(MODEL + "\ndef build_mesh(shape):\n    return None\n")
    index = project_axes.index_meshes(paths, memo_file=memo)
    assert "all" in read and index.closed and set(index.axes) == {"data", "model"}
    project_axes._LAST_INDEX[:] = [None, None]
    (tmp_path / "model.py").write_text(MODEL)  # open again, from a full read
    assert not project_axes.index_meshes(paths, memo_file=memo).closed
    read.clear()
    project_axes._LAST_INDEX[:] = [None, None]
    (tmp_path / "vendor.py").write_text("x = 1\n")  # a new file: `vendor` may be the project's
    project_axes.index_meshes(paths + [str(tmp_path / "vendor.py")], memo_file=memo)
    assert "all" in read


def test_definitions_are_looked_for_name_by_name_then_all_at_once(tmp_path):
    """``defined_in_project``: the first names by a search each, the rest from every
    definition read once; the answers are the same either way."""
    from shardcheck.analyzer.project_names import Resolver
    texts = {"a.py": "def build_mesh():\n    pass\nclass MeshMaker:\n    async def go(self): ...\n",
             "b.py": "x = build_meshes()  # def not_a_definition\n"}
    names = ["build_mesh", "MeshMaker", "go", "build_meshes", "not_a_definition", "x",
             "a", "b", "pass", "build_mesh", "MeshMaker", "go", "build_meshes"]
    resolver = Resolver(texts, set(), None)
    answers = [resolver.defined_in_project(n) for n in names]
    assert answers == [True, True, True, False, False, False, False, False, False,
                       True, True, True, False]
    assert resolver._defined is not None  # past eight names: read all at once


def test_an_axis_only_some_config_variants_have_is_a_warning_naming_the_others(tmp_path, concise_check):
    """MaxText-style: the mesh is built from ``config.mesh_axes``, which each YAML config
    of the project sets; a spec of the MoE axis is fine under moe.yml only."""
    train = textwrap.dedent('''\
        import jax
        from jax.sharding import NamedSharding, PartitionSpec as P

        STATE = {}


        def setup(config):
            STATE["mesh"] = jax.make_mesh(config.ici_shape, config.mesh_axes)


        def shard_experts(w):
            return jax.device_put(w, NamedSharding(STATE["mesh"], P("expert", None, "fsdp")))


        def shard_batch(x):
            return jax.device_put(x, NamedSharding(STATE["mesh"], P(("data", "fsdp"), "exprt")))
        ''')
    _project(tmp_path, **{"train.py": train,
                          "configs/moe.yml": "mesh_axes: ['data', 'fsdp', 'expert']\n",
                          "configs/dense.yml": "mesh_axes: ['data', 'fsdp']\n"})
    warning, error = concise_check(tmp_path, "SC114", "train.py")  # pre-commit: the staged file alone
    assert warning.startswith("train.py:12:") and "SC114 warning" in warning
    assert "configs/moe.yml have it, those at configs/dense.yml do not" in warning
    assert error.startswith("train.py:16:") and "SC114 error" in error and "'exprt'" in error
    (tmp_path / "configs/dense.yml").write_text("mesh_axes: ['data', 'fsdp', 'expert']\n")
    assert [line.split(":")[1] for line in concise_check(tmp_path, "SC114", ".")] == ["16"]


def test_collectives_name_mesh_axes_unless_a_vmap_or_pmap_binds_the_name(tmp_path):
    """A collective's axis is a mesh's (shard_map) or one a vmap/pmap binds; with every
    binding known, a name neither has is flagged; an `axis_name=` not known stops it."""
    source = textwrap.dedent('''\
        import jax
        from jax.sharding import NamedSharding, PartitionSpec as P

        MESH = jax.make_mesh((2, 4), ("data", "model"))


        def reduce(x):
            return jax.lax.psum(x, "modle") + jax.lax.pmean(x, axis_name="batch")


        def per_example(x):
            return jax.vmap(lambda y: jax.lax.axis_index("batch"), axis_name="batch")(x)
        ''')
    path = tmp_path / "m.py"
    path.write_text(source)
    found = project_findings([str(path)], [str(path)], Config(), [])
    assert [(f.row, "'modle'" in f.message) for f in found] == [(8, True)]
    path.write_text(source + "\n\ndef mapped(f, name):\n    return jax.pmap(f, axis_name=name)\n")
    assert project_findings([str(path)], [str(path)], Config(), []) == []


def test_a_line_with_wide_characters_places_the_axis_where_it_is_written(tmp_path, concise_check):
    """``ast`` counts columns in UTF-8 bytes; findings count characters: an accented
    name before the spec on its line does not move the finding."""
    model = MODEL.replace('NamedSharding(_MESHES["train"], ', 'NamedSharding(_MESHES["train"] or "é", ')
    _project(tmp_path, **{"train.py": TRAIN, "model.py": model})
    (found,) = [f for f in concise_check(tmp_path, "SC114", ".") if f.startswith("model.py")]
    line = model.splitlines()[13]
    assert "é" in line and found.startswith(f"model.py:14:{line.index(chr(34) + 'modle') + 1}:")
