"""The results cache never answers stale (issue 36's audit): a module that appears after
a check re-checks its importers, a file edited during a check stores nothing, and the
cache cleans up after itself and trusts no position it reads back."""

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import pytest

from shardcheck.analyzer import precheck
from shardcheck.check.cache import Cache
from shardcheck.analyzer.project import Project
from test_robustness import BAD, cli, run

# main.py reads its spec from helpers.py, which the tests create, edit or leave out
MAIN = ('import jax\nimport jax.numpy as jnp\nfrom jax.sharding import NamedSharding\n'
        'from helpers import SPEC\n\nmesh = jax.make_mesh((2, 4), ("data", "model"))\n'
        'x = jax.device_put(jnp.zeros((8, 16)), NamedSharding(mesh, SPEC))\n')
HELPERS = 'import jax\nfrom jax.sharding import PartitionSpec as P\nSPEC = P("modle", None)\n'
FIXED = HELPERS.replace("modle", "model")
# main.py spells no sharding API here: the precheck clears it unless helpers.py reaches one
PLAIN_MAIN = "import jax.numpy as jnp\nfrom helpers import BATCH\nw = jnp.cumsum(BATCH, axis=0)\n"
SHARDED_BATCH = ('import jax\nimport jax.numpy as jnp\n'
                 'from jax.sharding import NamedSharding, PartitionSpec as P, AxisType\n'
                 'M = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Explicit,) * 2)\n'
                 'BATCH = jax.device_put(jnp.zeros((8, 16)), NamedSharding(M, P("data", "model")))\n')
IN_PROCESS = ["--timeout-per-file", "0", "--memory-per-file", "0"]  # no worker processes


def check(cwd, *args):
    """``shardcheck check`` in this process, with the cache in ``cwd/cache``."""
    return run(["check", *args, "--cache-dir", "cache", "-v", *IN_PROCESS], cwd)


def entries(cwd):
    return sorted((cwd / "cache").rglob("*.json"))


# -- a module that did not exist yet ------------------------------------------------------
def test_a_module_created_between_two_runs_is_seen_by_the_next_run(tmp_path):
    (tmp_path / "main.py").write_text(MAIN)
    (tmp_path / ".git").mkdir()  # the checkout's root holds the cache
    first = cli(["check", "main.py"], tmp_path)
    assert first[0] == 0 and "All checks passed" in first[1], first
    (tmp_path / "helpers.py").write_text(HELPERS)  # a `git checkout` that adds a module
    code, out, err = cli(["check", "main.py"], tmp_path)
    assert code == 1 and "helpers.py:3:8: SC101" in out, out + err


@pytest.mark.parametrize("layout", ["package", "namespace", "namespace_above_the_root"])
def test_a_package_or_namespace_package_created_between_two_runs_is_seen(tmp_path, layout):
    """Each place the import is looked for: ``pkg/__init__.py``, a namespace package's
    module under a source root, and one in a directory above it (the project's root)."""
    src = tmp_path / "src" if layout == "namespace_above_the_root" else tmp_path
    src.mkdir(exist_ok=True)
    (tmp_path / "pyproject.toml").write_text("[tool.shardcheck]\n")
    main = MAIN if layout == "package" else MAIN.replace("from helpers", "from lib.helpers")
    (src / "main.py").write_text(main)
    assert check(src, "main.py")[0] == 0
    target = {"package": src / "helpers" / "__init__.py",
              "namespace": src / "lib" / "helpers.py",
              "namespace_above_the_root": tmp_path / "lib" / "helpers.py"}[layout]
    target.parent.mkdir()
    target.write_text(HELPERS)
    code, out, err = check(src, "main.py")
    assert code == 1 and "SC101" in out and "(0 from cache)" in err, out + err


def test_a_module_created_between_two_runs_reaches_a_file_the_precheck_cleared(tmp_path):
    (tmp_path / "main.py").write_text(PLAIN_MAIN)
    assert check(tmp_path, "main.py")[:2] == (0, "All checks passed (1 file).\n")
    (tmp_path / "helpers.py").write_text(SHARDED_BATCH)
    code, out, err = check(tmp_path, "main.py")
    assert code == 1 and "main.py:3:" in out and "SC306" in out, out + err


def test_a_module_created_that_an_imported_module_looked_for_rechecks_every_importer(
        tmp_path):
    """``lib.py`` is read once for the run (memoised): the second file that imports it
    depends on what reading it looked for as much as the first."""
    # it spells the sharding API: the precheck stops there, and the analysis reads on
    (tmp_path / "lib.py").write_text("from jax.sharding import PartitionSpec as P\n"
                                     "from helpers import SPEC\n")
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text(MAIN.replace("from helpers", "from lib"))
    assert check(tmp_path, "a.py", "b.py")[0] == 0
    (tmp_path / "helpers.py").write_text(HELPERS)
    code, out, err = check(tmp_path, "a.py", "b.py")
    assert code == 1 and "helpers.py:3:8: SC101" in out and "(0 from cache)" in err, out + err


def test_a_directory_created_beside_a_module_is_seen_by_the_next_run(tmp_path):
    """``helpers.sub`` read as an attribute of the module ``helpers.py``: the analysis
    resolves it to ``helpers/sub.py`` once that directory exists, so the precheck's
    finding none there depends on the directory staying absent."""
    (tmp_path / "main.py").write_text(PLAIN_MAIN.replace("from helpers import BATCH",
                                                         "import helpers").replace(
        "cumsum(BATCH", "cumsum(helpers.sub.BATCH"))
    (tmp_path / "helpers.py").write_text("X = 1\n")
    assert check(tmp_path, "main.py")[0] == 0
    (tmp_path / "helpers").mkdir()
    (tmp_path / "helpers" / "sub.py").write_text(SHARDED_BATCH)
    code, out, err = check(tmp_path, "main.py")
    assert code == 1 and "SC306" in out and "(0 from cache)" in err, out + err


@pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="no Unix sockets")
def test_a_module_created_between_two_runs_is_seen_through_the_daemon(tmp_path):
    daemon_dir = tempfile.mkdtemp(prefix="scd-")  # a short path: Unix socket paths are short
    env = {"SHARDCHECK_DAEMON_DIR": daemon_dir, "NO_COLOR": "1"}
    (tmp_path / "main.py").write_text(MAIN)
    served = ["check", "--daemon", "main.py", "--cache-dir", "cache"]
    try:
        code, out, err = cli(["daemon", "start"], tmp_path, env=env)  # returns once it answers
        assert code == 0 and out.startswith("started (pid "), out + err
        assert cli(served, tmp_path, env=env)[0] == 0
        (tmp_path / "helpers.py").write_text(HELPERS)
        code, out, err = cli(served, tmp_path, env=env)
        assert code == 1 and "helpers.py:3:8: SC101" in out, out + err
        status = cli(["daemon", "status"], tmp_path, env=env)[1]
        assert " 2 run(s) served" in status, status  # neither fell back to this process
    finally:
        cli(["daemon", "stop"], tmp_path, env=env)
        shutil.rmtree(daemon_dir, ignore_errors=True)


def test_an_unchanged_tree_is_still_answered_from_the_cache(tmp_path):
    """What the checks above record (absent candidates, hashes of what was read) still
    matches on a re-run that changed nothing: the cache is not merely bypassed."""
    (tmp_path / "main.py").write_text(MAIN)
    (tmp_path / "helpers.py").write_text(HELPERS)
    (tmp_path / "plain.py").write_text(PLAIN_MAIN.replace("helpers", "missing"))
    first = check(tmp_path, ".")
    again = check(tmp_path, ".")
    assert again[:2] == first[:2] and first[0] == 1 and "(3 from cache)" in again[2], again


# -- what an importer read of a module: the slice of the names it looked up ------------------
def test_an_edit_of_a_module_outside_what_its_importer_read_keeps_the_importers_result(tmp_path):
    """main.py reads SPEC from helpers.py: a function added to helpers.py, or a comment,
    leaves main.py's result to the cache (pre-commit on helpers.py does not analyse its
    importers again); an edit of SPEC does not, and the answer is --no-cache's each time."""
    (tmp_path / "pyproject.toml").write_text("")  # the project's root
    (tmp_path / "main.py").write_text(MAIN)
    (tmp_path / "helpers.py").write_text(HELPERS)
    first = check(tmp_path, ".")
    assert first[0] == 1 and "SC101" in first[1]
    for edit in (HELPERS + "\n\ndef added():\n    return P('other')\n", HELPERS + "# a comment\n"):
        (tmp_path / "helpers.py").write_text(edit)
        staged = check(tmp_path, "helpers.py")
        assert "1 file(s) of the project that import them (1 from cache)" in staged[2], staged
        assert staged[:2] == run(["check", "--no-cache", "helpers.py", *IN_PROCESS], tmp_path)[:2]
        whole = check(tmp_path, ".")
        assert whole[:2] == run(["check", "--no-cache", ".", *IN_PROCESS], tmp_path)[:2]
        assert [line for line in whole[1].splitlines() if "SC101" in line] == \
            [line for line in first[1].splitlines() if "SC101" in line]
    (tmp_path / "helpers.py").write_text(FIXED)
    staged = check(tmp_path, "helpers.py")
    assert "(0 from cache)" in staged[2] and "SC101" not in staged[1], staged
    assert check(tmp_path, ".")[0] == 0


def test_a_star_importer_keeps_its_result_until_a_public_name_changes(tmp_path):
    """``from helpers import *`` reads every public name of helpers.py (``slices.STAR``),
    not its whole text: a comment or an edit of a private helper leaves the importer to
    the cache; a new public name, which the star import may now bind, does not; and the
    answer is --no-cache's each time."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "main.py").write_text(MAIN.replace("from helpers import SPEC",
                                                   "from helpers import *"))
    helpers = HELPERS + "\n\ndef _private():\n    return 1\n"
    (tmp_path / "helpers.py").write_text(helpers)
    first = check(tmp_path, ".")
    assert first[0] == 1 and "SC101" in first[1], first
    for edit, cached in ((helpers + "# a comment\n", 1),
                         (helpers.replace("return 1", "return 2"), 1),
                         (helpers + "\n\ndef added():\n    return 1\n", 0)):
        (tmp_path / "helpers.py").write_text(edit)
        staged = check(tmp_path, "helpers.py")
        assert f"1 file(s) of the project that import them ({cached} from cache)" in staged[2], \
            (edit, staged)
        assert staged[:2] == run(["check", "--no-cache", "helpers.py", *IN_PROCESS], tmp_path)[:2]
        check(tmp_path, ".")  # the whole tree's results stored for the next edit


def test_a_slice_digest_an_earlier_run_took_is_read_from_the_slice_memo(tmp_path, monkeypatch):
    """Storing main.py's result takes the digest of what it read of helpers.py, which
    parses helpers.py; a later run that stores main.py again (main.py edited) reads that
    digest from the memo while helpers.py is unchanged, and takes it afresh once it
    changes. A corrupt memo is an empty one."""
    from shardcheck.analyzer import slices
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "main.py").write_text(MAIN)
    (tmp_path / "helpers.py").write_text(HELPERS + "\n\ndef unread():\n    return 1\n")
    parsed = []
    real = slices.SliceIndex.__init__

    def counted(self, text):
        parsed.append(text)
        real(self, text)
    monkeypatch.setattr(slices.SliceIndex, "__init__", counted)
    first = check(tmp_path, ".")
    assert first[0] == 1 and parsed and (tmp_path / "cache" / "v1" / "slices.json").exists()
    for n, (helpers, parses) in enumerate(((None, 0), (FIXED, 1), ("corrupt memo", 1))):
        if helpers == "corrupt memo":
            (tmp_path / "cache" / "v1" / "slices.json").write_text("{not json")
        elif helpers is not None:
            (tmp_path / "helpers.py").write_text(helpers)
        (tmp_path / "main.py").write_text(MAIN + f"# edit {n}\n")
        parsed.clear()
        staged = check(tmp_path, "main.py")
        assert "(0 from cache)" in staged[2] and len(parsed) == parses, (helpers, staged)
        assert staged[:2] == run(["check", "--no-cache", "main.py", *IN_PROCESS], tmp_path)[:2]


# -- a dependency that changes during the check -------------------------------------------
def _during_the_check(monkeypatch, owner, attribute, when, edit):
    """Run ``edit()`` once, right after ``owner.attribute`` first returns for a call that
    ``when(args, result)`` picks: the check has read what it reads there by then."""
    real = getattr(owner, attribute)
    done = []

    def hooked(*args, **kwargs):
        result = real(*args, **kwargs)
        if not done and when(args, result):
            done.append(1)
            edit()
        return result

    monkeypatch.setattr(owner, attribute, hooked)
    return done


def test_a_module_edited_during_the_analysis_stores_nothing(tmp_path, monkeypatch):
    (tmp_path / "main.py").write_text(MAIN)
    helpers = tmp_path / "helpers.py"
    helpers.write_text(FIXED)
    done = _during_the_check(monkeypatch, Project, "module_env",
                             lambda args, _: args[1] == "helpers",
                             lambda: helpers.write_text(HELPERS))
    assert check(tmp_path, "main.py")[0] == 0 and done  # found what helpers.py held when read
    monkeypatch.undo()
    assert entries(tmp_path) == []
    code, out, err = check(tmp_path, "main.py")
    assert code == 1 and "helpers.py:3:8: SC101" in out, out + err


def test_a_module_created_during_the_analysis_stores_nothing(tmp_path, monkeypatch):
    (tmp_path / "main.py").write_text(MAIN)
    helpers = tmp_path / "helpers.py"
    done = _during_the_check(monkeypatch, Project, "path_of",
                             lambda args, found: args[1] == "helpers" and found is None,
                             lambda: helpers.write_text(HELPERS))
    assert check(tmp_path, "main.py")[0] == 0 and done
    monkeypatch.undo()
    assert entries(tmp_path) == []
    assert check(tmp_path, "main.py")[0] == 1


def test_a_module_edited_during_the_precheck_stores_nothing(tmp_path, monkeypatch):
    (tmp_path / "main.py").write_text(PLAIN_MAIN)
    helpers = tmp_path / "helpers.py"
    helpers.write_text("BATCH = None\n")
    done = _during_the_check(monkeypatch, precheck, "_facts",
                             lambda args, _: args[-1] == str(helpers),
                             lambda: helpers.write_text(SHARDED_BATCH))
    assert check(tmp_path, "main.py")[0] == 0 and done  # cleared: helpers.py used no sharding
    monkeypatch.undo()
    assert entries(tmp_path) == []
    code, out, err = check(tmp_path, "main.py")
    assert code == 1 and "SC306" in out, out + err


def test_a_file_edited_during_its_own_check_stores_nothing(tmp_path, monkeypatch):
    main = tmp_path / "main.py"
    main.write_text(MAIN)
    (tmp_path / "helpers.py").write_text(HELPERS)
    _during_the_check(monkeypatch, Project, "module_env", lambda args, _: True,
                      lambda: main.write_text(MAIN + "# edited\n"))
    assert check(tmp_path, "main.py")[0] == 1
    assert entries(tmp_path) == []


def test_a_module_two_reads_saw_two_contents_of_stores_nothing(tmp_path):
    """The precheck and the analysis each read a module once a process: when the two
    saw two contents, the findings rest on both, even if the file is back as at first."""
    main, helpers = tmp_path / "main.py", tmp_path / "helpers.py"
    main.write_text(MAIN)
    project = Project()
    project.start_recording()
    for text in (FIXED, HELPERS):
        helpers.write_text(text)
        project.used.add(str(helpers))
        project.read(str(helpers))
    helpers.write_text(FIXED)
    cache = Cache(str(tmp_path / "cache"), "fingerprint")
    cache.put(str(main), cache.file_hash(str(main)), [], project.dependencies(str(main)))
    assert entries(tmp_path) == []


# -- hygiene --------------------------------------------------------------------------------
def _full_disk():
    """The child's files can grow to 200 bytes (a cache entry is larger): each write past
    that fails with EFBIG, as it would with ENOSPC on a full disk."""
    import resource
    import signal
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (200, 200))


@pytest.mark.skipif(not hasattr(os, "fork") or sys.platform == "darwin",
                    reason="RLIMIT_FSIZE as Linux applies it")
def test_a_write_that_fails_leaves_no_temporary_file(tmp_path):
    (tmp_path / "bad.py").write_text(BAD)
    r = subprocess.run([sys.executable, "-m", "shardcheck", "check", "bad.py", "--cache-dir",
                        "cache"], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                       preexec_fn=_full_disk)
    assert r.returncode == 1 and "bad.py:5:" in r.stdout and "Traceback" not in r.stderr, r
    assert (tmp_path / "cache" / "v1").is_dir()  # the write was tried
    left = [p for p in (tmp_path / "cache").rglob("*") if p.is_file()
            and p.name not in (".gitignore", "pruned")]
    # the project findings' memo of a project with none is under 200 bytes: written whole
    small = [p for p in left if p.name == "project_axes.index.findings"]
    assert [p.name for p in left if p not in small] == []
    assert all(json.loads(p.read_text())["findings"] == [] for p in small)


def _age(path, days):
    then = time.time() - days * 86400
    os.utime(path, (then, then))


def test_a_run_a_day_after_the_last_pruning_removes_unused_entries_and_stale_temporaries(
        tmp_path):
    (tmp_path / "bad.py").write_text(BAD)
    check(tmp_path, "bad.py")
    (entry,) = entries(tmp_path)
    v1 = tmp_path / "cache" / "v1"
    unused = entry.with_name("0" * 62 + ".json")  # another version's entry, say
    unused.write_text(entry.read_text())
    stale, writing = entry.with_name("left.tmp"), entry.with_name("writing.tmp")
    stale.write_text("{")
    writing.write_text("{")
    for path, days in ((entry, 40), (unused, 40), (stale, 1 / 24)):
        _age(path, days)
    (v1 / "pruned").touch()
    _age(v1 / "pruned", 0.5)  # pruned half a day ago: not again yet
    code, _, err = check(tmp_path, "bad.py")
    assert code == 1 and "(1 from cache)" in err
    assert unused.exists() and stale.exists()
    assert time.time() - entry.stat().st_mtime < 60  # the hit marked it used
    _age(entry, 40)
    _age(v1 / "pruned", 2)
    code, _, err = check(tmp_path, "bad.py")
    assert code == 1 and "(1 from cache)" in err
    assert not unused.exists() and not stale.exists()
    assert entry.exists() and writing.exists()  # used by this run; a write in progress
    assert time.time() - (v1 / "pruned").stat().st_mtime < 60


# -- positions read back --------------------------------------------------------------------
def _related(row):
    return [{"message": "m", "filename": "bad.py", "location": {"row": row, "column": 1},
             "end_location": {"row": row, "column": 2}}]


# each a change to the cached finding (at bad.py:5:..., a 5-line file): no file holds it
TAMPERED = {
    "negative row": lambda f: f["location"].update(row=-5),
    "column 0": lambda f: f["location"].update(column=0),
    "end above the start": lambda f: f["end_location"].update(row=4),
    "end left of the start": lambda f: f["end_location"].update(column=f["location"]["column"] - 1),
    "past the last line": lambda f: (f["location"].update(row=50), f["end_location"].update(row=50)),
    "related row 0": lambda f: f.update(related=_related(0)),
    "related past the last line": lambda f: f.update(related=_related(99)),
    "fix before the start of the file": lambda f: f.update(fix={
        "message": "m", "applicability": "safe", "edits": [{
            "content": "x", "location": {"row": 0, "column": 1},
            "end_location": {"row": 1, "column": 1}}]}),
    "cell 0": lambda f: f.update(cell=0),
}


@pytest.mark.parametrize("change", sorted(TAMPERED))
def test_a_cached_position_no_file_holds_is_a_miss(tmp_path, change):
    (tmp_path / "bad.py").write_text(BAD)
    clean = check(tmp_path, "bad.py", "--format", "json")
    (entry,) = entries(tmp_path)
    data = json.loads(entry.read_text())
    TAMPERED[change](data["findings"][0])
    entry.write_text(json.dumps(data))
    code, out, err = check(tmp_path, "bad.py", "--format", "json")
    assert (code, out) == clean[:2] and "(0 from cache)" in err, out


def test_existence_read_from_directory_listings_answers_as_a_stat_does(tmp_path, monkeypatch):
    """A cached result's absent paths are judged from one listing per directory
    (``_Existence``): each answer is ``os.path.exists``'s, for a path in a listed
    directory, in one that is missing, under a file, and in one that cannot be listed."""
    from shardcheck.check.cache import _Existence
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "a.py").write_text("")
    (tmp_path / "pkg" / "sub" / "__init__.py").write_text("")
    (tmp_path / "locked").mkdir()
    (tmp_path / "locked" / "b.py").write_text("")
    (tmp_path / "pkg" / "gone.py").symlink_to(tmp_path / "nowhere.py")  # listed, absent
    paths = [tmp_path / p for p in ("pkg/a.py", "pkg/b.py", "pkg/sub/__init__.py",
                                    "pkg/sub/x/__init__.py", "pkg/a.py/c.py", "nodir/a.py",
                                    "nodir/deeper/a.py", "locked/b.py", "locked/c.py",
                                    "pkg/gone.py", "pkg/sub")]
    listdir = os.listdir
    listed = []

    def listing(d):
        listed.append(d)
        if os.path.basename(d) == "locked":
            raise PermissionError(d)
        return listdir(d)
    monkeypatch.setattr(os, "listdir", listing)
    seen = _Existence()
    assert [seen[str(p)] for p in paths] == [os.path.exists(p) for p in paths]
    assert [seen[str(p)] for p in paths] == [True, False, True, False, False, False, False,
                                             True, False, False, True]
    # one listing per directory looked in, none of a directory its parent's listing lacks
    assert len(listed) == len(set(listed)) and str(tmp_path / "pkg") in listed
    assert str(tmp_path / "nodir") not in listed and str(tmp_path / "pkg" / "sub" / "x") not in listed
