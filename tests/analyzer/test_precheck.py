"""The pre-check that spares libcst files which cannot hold a finding (analyzer/precheck.py)
must be sound: a file gets exactly the findings the full analysis gives it."""

import os
import textwrap

import pytest

from shardcheck.analyzer import precheck, registry_manifest, relevance
from shardcheck.check import runner
from shardcheck.check.config import Config, from_table
from shardcheck.analyzer.engine import check_source

SETUP = '''
    import jax
    import jax.numpy as jnp
    from jax.sharding import NamedSharding, PartitionSpec as P, AxisType

    M = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Explicit,) * 2)
    BATCH = jax.device_put(jnp.zeros((8, 16)), NamedSharding(M, P("data", "model")))
    '''
# Files that spell no sharding API: what they get wrong comes from the project's lib.setup.
USERS = {
    "from_import.py": "import jax.numpy as jnp\nfrom lib.setup import BATCH\n"
                      "w = jnp.cumsum(BATCH, axis=0)\n",
    "dotted_import.py": "import jax.numpy as jnp\nimport lib.setup\n"
                        "w = jnp.cumsum(lib.setup.BATCH, axis=0)\n",
    "module_alias.py": "import jax.numpy as jnp\nfrom lib import setup as s\n"
                       "w = jnp.cumsum(s.BATCH, axis=0)\n",
    # lib/__init__.py is empty: lib.setup is reached by the attribute chain alone
    "attribute_chain.py": "import jax.numpy as jnp\nimport lib\n"
                          "w = jnp.cumsum(lib.setup.BATCH, axis=0)\n",
    # through a module that only re-exports it
    "reexported.py": "import jax.numpy as jnp\nfrom mid import DATA\n"
                     "w = jnp.cumsum(DATA, axis=0)\n",
    "relative.py": "import jax.numpy as jnp\nfrom .setup import BATCH\n"
                   "w = jnp.cumsum(BATCH, axis=0)\n",
    # a package's __init__ re-exports it relatively: `.` there is the package itself
    "package_init.py": "import jax.numpy as jnp\nfrom lib.sub import BATCH\n"
                       "w = jnp.cumsum(BATCH, axis=0)\n",
    # from a namespace package (PEP 420: `ns/` has no __init__.py), by a file under it
    "namespace.py": "import jax.numpy as jnp\nfrom ns import pkg\n"
                    "w = jnp.cumsum(pkg.BATCH, axis=0)\n",
}
PLACED = {"relative.py": "lib/relative.py", "namespace.py": "ns/app/namespace.py"}


def _project(tmp_path):
    files = {"lib/__init__.py": "", "lib/setup.py": SETUP,
             "mid.py": "from lib.setup import BATCH as DATA\n",
             "plain.py": "import os\n\n\ndef f(x):\n    return x + 1\n",
             "lib/sub/__init__.py": "from .inner import BATCH\n",
             "lib/sub/inner.py": "from lib.setup import BATCH\n",
             "ns/pkg/__init__.py": "from .setup import *\n", "ns/pkg/setup.py": SETUP}
    files.update({PLACED.get(n, n): t for n, t in USERS.items()})
    for name, text in files.items():
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))
    return sorted(str(p) for p in tmp_path.rglob("*.py"))


def _findings(files, cache_dir=None):
    # checked in this process; the project's root holds the namespace package's directory
    cfg = Config(timeout_per_file=0, memory_per_file=0, root=os.path.commonpath(files))
    return [(f.filename, f.row, f.code) for f in
            runner.run(files, cfg, jobs=1, cache_dir=cache_dir).findings]


def test_a_file_that_only_imports_a_helper_building_a_mesh_still_gets_its_findings(
        tmp_path, monkeypatch):
    files = _project(tmp_path)
    for name, text in USERS.items():  # the cases exercise the imports, not the spelling
        assert not precheck.spells_sharding_api(text), name
    with_precheck = _findings(files)
    # the one precheck verdict, for the engine and the runner alike (precheck.cleared)
    monkeypatch.setattr("shardcheck.analyzer.precheck.needs_analysis", lambda *a: True)
    everything_analysed = _findings(files)
    assert with_precheck == everything_analysed
    flagged = {f.rsplit("/", 1)[-1] for f, _, code in with_precheck if code == "SC306"}
    assert flagged == set(USERS), with_precheck


def test_a_file_without_jax_gets_none_and_is_not_parsed_by_libcst(monkeypatch):
    import libcst
    parsed = []
    real = libcst.parse_module
    monkeypatch.setattr(libcst, "parse_module", lambda *a, **k: parsed.append(1) or real(*a, **k))
    src = "import os\n\n\ndef f(x):\n    return os.path.join(x, 'a')  # noqa: E501\n"
    assert check_source(src, "plain.py") == [] and parsed == []
    # file-level findings stay: CPython still judges every file
    assert [f.code for f in check_source("def f(:\n", "broken.py")] == ["SC001"]
    parsed.clear()
    check_source("import jax\nmesh = jax.make_mesh((2,), ('x',))\n", "uses.py")
    assert parsed == [1]


def test_a_skipped_file_is_rechecked_when_an_imported_module_starts_using_sharding(tmp_path):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "__init__.py").write_text("")
    (tmp_path / "lib" / "setup.py").write_text("BATCH = None\n")
    (tmp_path / "user.py").write_text(USERS["from_import.py"])
    files = sorted(str(p) for p in tmp_path.rglob("*.py"))
    cache = str(tmp_path / "cache")
    assert _findings(files, cache_dir=cache) == []
    (tmp_path / "lib" / "setup.py").write_text(textwrap.dedent(SETUP))
    assert [(f.rsplit("/", 1)[-1], code) for f, _, code in _findings(files, cache_dir=cache)] \
        == [("user.py", "SC306")]


# -- the vocabulary: every name of a family that makes sharding values is spelled ----------
# Each API family says whether its names make sharding values (``MAKES_SHARDINGS`` in its
# module, with the reason when they do not); the manifest derives the pre-check's words
# from those that do, the deprecated and removed APIs and their other spellings
# (analyzer/registry_manifest.py), and these tests check the words find every one.


def test_every_handler_family_says_whether_it_makes_shardings(monkeypatch):
    from shardcheck.analyzer import api
    families = registry_manifest.families()
    assert {"mesh", "specs", "collectives", "shard_map"} <= \
        {name for name, (makes, _) in families.items() if makes}
    assert not families["arrays"][0] and not families["transforms"][0]

    def handler(call, ctx):  # a family module that does not say
        return None
    handler.__module__ = "json"
    monkeypatch.setitem(api._BY_NAME, "somelib.new_api", handler)
    with pytest.raises(TypeError, match="json models 'somelib.new_api' but does not say"):
        registry_manifest.families()


def test_the_vocabulary_is_derived_from_the_registries():
    words = registry_manifest.precheck_words()
    assert tuple(words) == precheck.TRIGGERS, "run `python docs/generate.py`"
    assert set(precheck.OPEN_WORDS) <= set(words)
    # no word is kept that the others already find each name it stands for by
    spellings = {registry_manifest.spelled(n) for n in registry_manifest.vocabulary_names()}
    for word in set(words) - set(precheck.OPEN_WORDS):
        rest = set(words) - {word}
        assert any(word in s.lower() and not registry_manifest.found_by(rest, s)
                   for s in spellings), word


def test_nnx_variables_are_analysed_by_their_sharding_keywords():
    from shardcheck.analyzer.jaxapi.names import NNX_SHARDING_KEYS, NNX_VARIABLES
    assert set(NNX_VARIABLES) == registry_manifest.BY_KEYWORD
    assert all(precheck.spells_sharding_api(f"p = nnx.Param(w, {k}=s)\n")
               for k in NNX_SHARDING_KEYS)


def test_array_serialization_is_analysed_by_its_renamed_keyword():
    from shardcheck.analyzer.jaxapi.serialization import RENAMED_KEYWORDS
    for old in RENAMED_KEYWORDS:
        code = f"restore = serialization.async_deserialize({old}=s, tensorstore_spec=t)\n"
        assert precheck.spells_sharding_api(code) and relevance.spells(old), old


def test_nnx_sharding_names_trigger():
    for word in ("with_partitioning", "get_partition_spec", "get_named_sharding"):
        assert precheck.spells_sharding_api(f"x = nnx.{word}\n"), word


@pytest.mark.parametrize("name", registry_manifest.vocabulary_names())
def test_each_name_of_the_sharding_vocabulary_triggers_the_analysis(name):
    word = registry_manifest.spelled(name)
    if word == "P":  # jax.P: `from jax import P` spells jax as well
        assert precheck.spells_sharding_api("from jax import P\n")
        assert not precheck.spells_sharding_api("from jax import Pytree\n")
        return
    assert precheck.spells_sharding_api(f"x = {word}\n"), name
    assert relevance.spells(word), name  # and a statement spelling it is parsed (relevance)


def test_a_file_that_calls_only_a_declared_wrapper_is_analysed():
    config = from_table({"logical": {
        "rules": [["batch", "data"], ["embed", "model"]], "mesh-axes": ["data", "model"],
        "wrappers": {"constrain": {"array": 0, "names": 1}}}})
    code = ("from mylib.util import constrain\n\n\n"
            "def f(x):\n    return constrain(x, ('batch', 'embd'))\n")
    assert not precheck.spells_sharding_api(code)
    assert [(f.code, f.row) for f in check_source(code, "m.py", config)] == [("SC110", 5)]
    assert check_source(code, "m.py", from_table({})) == []


def test_imported_names_cover_the_import_forms():
    text = textwrap.dedent('''
        import a.b as c, d
        from .e import (f,
                        g)  # a comment
        from .. import h
        from i.j import \\
            k
        if x: import l; import m
        from n import (o,  # see p(q)
                       r)
        ''') + "from s import \\\r\n    t\r\n"
    names = precheck.imported_names(text, "pkg.sub.mod")
    for n in ("a", "a.b", "d", "pkg.sub.e", "pkg.sub.e.f", "pkg.sub.e.g", "pkg", "pkg.h",
              "i", "i.j", "i.j.k", "l", "m", "n.o", "n.r", "s.t"):
        assert n in names, n
    # in a package's __init__ (pkg/sub/__init__.py), `.` is the package itself
    names = precheck.imported_names("from .e import f\nfrom .. import h\n", "pkg.sub", True)
    assert {"pkg.sub.e", "pkg.sub.e.f", "pkg.h"} <= names and "pkg.e" not in names


def test_the_names_a_relative_import_binds_are_not_top_level_modules():
    # `from . import collectives` is pkg.collectives: with a bare `collectives`, a
    # project's tests/golden/collectives.py had 50 importers (every module importing
    # analyzer.jaxapi), and checking it alone analysed all of them (0.7 s -> 11 s)
    names = precheck.imported_names("from . import collectives as collectives\n"
                                    "from .mesh import import_mesh\nimport os\n", "pkg", True)
    assert {"pkg.collectives", "pkg.mesh", "pkg.mesh.import_mesh", "os"} <= names
    assert not {"collectives", "import_mesh"} & names
