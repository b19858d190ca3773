"""What a run costs before and besides the analysis: `--version` and a run answered from
the cache import no analysis (libcst, the interpreter, the model), and a file that misses
the cache is read once."""

import os
import subprocess
import sys
import textwrap

from shardcheck.check import cache as cachemod
from shardcheck.analyzer import engine
from shardcheck.check import runner
from shardcheck.analyzer.catalog import rule_table
from shardcheck.analyzer.config import Config
from shardcheck.analyzer.rules import all_rules

BAD = textwrap.dedent('''\
    import jax
    import jax.numpy as jnp
    from jax.sharding import NamedSharding, PartitionSpec as P
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    x = jax.device_put(jnp.zeros((8, 16)), NamedSharding(mesh, P("batch", None)))
    ''')
HEAVY = ("libcst", "sharding_types", "shardcheck.analyzer.interp", "shardcheck.analyzer.rules",
         "jax")


def _in_subprocess(argv, cwd):
    """(exit status, its output, the heavy modules it imported) of `shardcheck ARGV`."""
    code = textwrap.dedent(f'''
        import sys
        from shardcheck.cli import main
        status = main({argv!r})
        heavy = sorted(m for m in sys.modules if m.startswith({HEAVY!r}))
        print("HEAVY", status, heavy)
        ''')
    r = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    out, _, last = r.stdout.rstrip("\n").rpartition("\n")
    _, status, heavy = last.split(" ", 2)
    return int(status), out, heavy


def test_version_imports_nothing_of_the_analysis(tmp_path):
    status, out, heavy = _in_subprocess(["--version"], tmp_path)
    assert status == 0 and out.startswith("shardcheck ") and heavy == "[]"
    r = subprocess.run([sys.executable, "-c", "import sys; from shardcheck.cli import main; "
                        "main(['--version']); assert 'argparse' not in sys.modules"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_a_fully_cached_run_imports_no_libcst(tmp_path):
    (tmp_path / "bad.py").write_text(BAD)
    (tmp_path / "good.py").write_text("import jax\nx = 1\n")
    (tmp_path / "plain.py").write_text("import os\n")
    args = ["check", ".", "--cache-dir", str(tmp_path / "cache"), "--format", "json"]
    first = _in_subprocess(args, tmp_path)
    assert first[0] == 1 and "libcst" in first[2]  # the first run analyses
    second = _in_subprocess(args, tmp_path)
    assert second[:2] == first[:2] and second[2] == "[]", second[2]


def test_the_rule_table_read_from_the_manifest_is_the_rules(tmp_path):
    assert {c: (r.NAME, r.META) for c, r in rule_table().items()} == \
        {c: (r.NAME, r.META) for c, r in all_rules().items()}


def test_a_file_that_misses_the_cache_is_read_once_to_check_and_once_to_store(tmp_path,
                                                                               monkeypatch):
    (tmp_path / "bad.py").write_text(BAD)
    (tmp_path / "other.py").write_text("import jax\nx = 1\n")
    reads = []
    real = cachemod.read_source

    def counting(path):
        reads.append(path)
        return real(path)

    from shardcheck.analyzer import dependencies
    monkeypatch.setattr(cachemod, "read_source", counting)
    monkeypatch.setattr(dependencies, "read_source", counting)
    monkeypatch.setattr(engine, "read_source", counting)
    files = sorted(str(p) for p in tmp_path.glob("*.py"))
    cfg = Config(timeout_per_file=0, memory_per_file=0)  # checked in this process
    result = runner.run(files, cfg, jobs=1, cache_dir=str(tmp_path / "cache"))
    assert [f.code for f in result.findings] == ["SC101"]
    checked = sorted(r for r in reads if r in files)  # not the cache's own entries
    # hashed and analysed from the same bytes; read again after its check, to store its
    # findings only if it did not change meanwhile
    assert checked == sorted(files * 2)


def test_files_the_precheck_clears_are_decided_without_libcst(tmp_path):
    """A file with no sharding API in reach and no shardcheck comment has no finding:
    the runner says so before importing the analysis, as the engine would."""
    (tmp_path / "plain.py").write_text("import os\n\ndef f(x):\n    return x + 1  # noqa: E501\n")
    (tmp_path / "util.py").write_text("from plain import f\nY = f(2)\n")
    status, out, heavy = _in_subprocess(["check", ".", "--no-cache", "--format", "json"], tmp_path)
    assert status == 0 and out.strip() == "[]" and heavy == "[]", heavy
    # what still needs the engine: a shardcheck comment, a syntax error, a module that
    # imports a sharding helper from the tree
    cases = {
        "ignored.py": "import os  # shardcheck: ignore[not-a-rule]\n",
        "broken.py": "def f(:\n",
        "helpers.py": "import jax\nfrom jax.sharding import NamedSharding, PartitionSpec as P\n"
                      "MESH = jax.make_mesh((8,), ('data',))\n\n\ndef place(x, *names):\n"
                      "    return jax.device_put(x, NamedSharding(MESH, P(*names)))\n",
        "user.py": "import numpy as np\nfrom helpers import place\ny = place(np.zeros((8,)), 'dta')\n",
    }
    for name, src in cases.items():
        (tmp_path / name).write_text(src)
    files = sorted(str(p) for p in tmp_path.glob("*.py"))
    cfg = Config(timeout_per_file=0, memory_per_file=0)
    from shardcheck.analyzer.project import Project
    project = Project(cfg)
    for f in files:
        project.add_file(f)
    expected = sorted((f.filename, f.code, f.row) for p in files
                      for f in engine.check_file(p, cfg, project))
    got = sorted((f.filename, f.code, f.row) for f in runner.run(files, cfg, jobs=1).findings)
    assert got == expected
    names = {os.path.basename(f) for f, _, _ in got}
    assert {"ignored.py", "broken.py"} <= names and names - {"ignored.py", "broken.py"}
    assert any(code == "SC101" for _, code, _ in got)  # the call of the helper, analysed
