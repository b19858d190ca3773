"""`check --fix`, `--diff`, `--unsafe-fixes`: which fixes exist, that they are applied
atomically and only where asked, and that the fixed programs run under JAX; and that a
fix or `--add-noqa` written back never damages the file (encoding, line endings, links,
owner, mode, read-only files, failed writes)."""

import codecs
import errno
import io
import os
import stat
import subprocess
import sys
import textwrap
from contextlib import redirect_stderr, redirect_stdout

import pytest

from jax_snippets import run_snippets
from shardcheck.check.add_noqa import comment_lines
from shardcheck.analyzer.engine import check_source
from shardcheck.check.fixes import apply_to_text, fix_file, fix_findings
from shardcheck.analyzer.ftypes import Finding, Fix
from shardcheck.analyzer.rules import all_rules
from shardcheck.check.writeback import WriteRefused, read_original, write_back
from shardcheck.cli import main

LEGACY = textwrap.dedent('''\
    import jax
    import jax.numpy as jnp
    from jax.sharding import NamedSharding, PartitionSpec as P
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    x = jax.device_put(jnp.zeros((8, 16)), NamedSharding(mesh, P("dta", None)))
    auto = jax.sharding.Mesh(jax.devices(), ("data",))
    with auto:
        pass
    with jax.sharding.use_mesh(mesh):
        y = jax.shard_map(lambda b: b, mesh=mesh, in_specs=P("data"), out_specs=P("data"),
                          check_rep=False)(x)
    ''')


def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "shardcheck", "check", "--no-cache", *args],
                          capture_output=True, text=True, cwd=cwd)


def _fix(src, unsafe=False):
    found = check_source(src, "x.py")
    chosen = [f for f in found if f.fix and (unsafe or f.fix.applicability == "safe")]
    return apply_to_text(src, chosen)[0]


def test_safe_fixes_rewrite_the_legacy_spellings_and_leave_the_typo():
    fixed = _fix(LEGACY)
    assert "with jax.set_mesh(auto):" in fixed and "with jax.set_mesh(mesh):" in fixed
    assert "check_vma=False" in fixed and "use_mesh" not in fixed and "check_rep" not in fixed
    assert 'P("dta", None)' in fixed  # the axis typo is an unsafe fix
    assert [f.code for f in check_source(fixed, "x.py")] == ["SC101"]


def test_the_axis_typo_is_fixed_only_as_an_unsafe_fix_and_only_when_one_axis_is_close():
    fixed = _fix(LEGACY, unsafe=True)
    assert 'P("data", None)' in fixed and check_source(fixed, "x.py") == []
    two_close = LEGACY.replace('("data", "model")', '("data", "dota")')
    sc101 = [f for f in check_source(two_close, "x.py") if f.code == "SC101"]
    assert sc101 and sc101[0].fix is None  # 'dta' is one edit from both: no guess


def test_with_mesh_on_an_explicit_mesh_is_an_unsafe_fix():
    """On Explicit axes set_mesh also turns on explicit sharding (with_sharding_constraint
    becomes an assert), so the rewrite may change behaviour: JAX 0.10.2 checked."""
    src = "import jax\nm = jax.make_mesh((8,), ('data',))\nwith m:\n    pass\n"
    [f] = check_source(src, "x.py")
    assert f.code == "SC401" and f.fix.applicability == "unsafe"
    assert f.fix.content == "jax.set_mesh(m)"


def test_no_fix_without_an_import_of_jax_to_spell_the_replacement():
    src = "from jax.sharding import Mesh\nimport numpy as np\nm = Mesh(np.array([0]), ('d',))\nwith m:\n    pass\n"
    found = [f for f in check_source(src, "x.py") if f.code == "SC401"]
    assert found and found[0].fix is None


def test_the_fixed_programs_run_under_jax_without_deprecation_or_error():
    programs = [_fix(LEGACY, unsafe=True)]
    for ex in all_rules()["SC401"].INVALID:
        fixed = _fix(ex.code)
        if fixed != ex.code:
            programs.append(fixed)
    assert len(programs) >= 4  # LEGACY, plus with mesh:, use_mesh, check_rep, positional
    results = run_snippets(programs)
    for code, r in zip(programs, results):
        assert r["status"] == "ok", (code, r)


def test_overlapping_edits_apply_one_and_leave_the_other_for_the_next_run():
    text = "abcdef\nghi\n"
    f1 = Finding("X", "x", "m", "error", "x.py", 1, 2, 1, 5, Fix("a", 1, 2, 1, 5, "Z"))
    f2 = Finding("X", "x", "m", "error", "x.py", 1, 4, 2, 2, Fix("b", 1, 4, 2, 2, "Y"))
    f3 = Finding("X", "x", "m", "error", "x.py", 2, 3, 2, 4, Fix("c", 2, 3, 2, 4, "!"))
    new, applied = apply_to_text(text, [f1, f2, f3])
    assert new == "abcYh!\n" and applied == [f2, f3]


def test_a_fix_that_would_not_compile_is_not_written(tmp_path):
    p = tmp_path / "x.py"
    p.write_text("x = 1\n")
    bad = Finding("X", "x", "m", "error", str(p), 1, 1, 1, 2, Fix("b", 1, 1, 1, 2, "1"))
    result = fix_file(str(p), [bad], unsafe=False)
    assert result.error and "would not compile" in result.error
    assert p.read_text() == "x = 1\n"


def test_diff_prints_the_patch_and_writes_nothing(tmp_path):
    p = tmp_path / "legacy.py"
    p.write_text(LEGACY)
    r = _cli("--diff", str(p))
    assert r.returncode == 1, r.stderr
    assert "+with jax.set_mesh(auto):" in r.stdout and "-with auto:" in r.stdout
    assert "Would fix 3 finding(s) in 1 file(s)" in r.stderr
    assert p.read_text() == LEGACY


def test_fix_writes_atomically_keeps_the_mode_and_rechecks(tmp_path):
    p = tmp_path / "legacy.py"
    p.write_text(LEGACY)
    os.chmod(p, 0o640)
    clean = tmp_path / "clean_but_unfixable.py"
    clean.write_text(LEGACY.split("auto =")[0])  # only the SC101 typo: no safe fix
    before = clean.stat().st_mtime_ns
    r = _cli("--fix", str(tmp_path))
    assert "Fixed 3 finding(s) in 1 file(s); 2 remaining." in r.stderr, r.stderr
    assert r.stdout.count("SC101") == 2 and "SC401" not in r.stdout
    assert oct(p.stat().st_mode & 0o777) == "0o640"
    assert clean.stat().st_mtime_ns == before  # a file whose findings have no fix: untouched
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".shardcheck-fix-")]
    r = _cli("--fix", "--unsafe-fixes", str(tmp_path))
    assert r.returncode == 0 and "Fixed 2 finding(s) in 2 file(s); 0 remaining." in r.stderr


@pytest.mark.parametrize("flag", ["--fix", "--diff"])
def test_nothing_to_fix_changes_nothing(tmp_path, flag):
    p = tmp_path / "ok.py"
    p.write_text("import jax\nm = jax.make_mesh((8,), ('data',))\n")
    r = _cli(flag, str(p))
    assert r.returncode == 0 and p.read_text() == "import jax\nm = jax.make_mesh((8,), ('data',))\n"


def test_a_fix_of_several_edits_is_applied_whole_or_not_at_all():
    text = "abcdef\nghi\n"
    both = Finding("X", "x", "m", "error", "x.py", 1, 1, 1, 2,
                   Fix("a", 1, 1, 1, 2, "A", more=((2, 1, 2, 2, "G"),)))
    assert apply_to_text(text, [both]) == ("Abcdef\nGhi\n", [both])
    # a later fix takes row 2's "g": the two-edit fix waits for the next run, whole
    later = Finding("X", "x", "m", "error", "x.py", 2, 1, 2, 3, Fix("b", 2, 1, 2, 3, "!"))
    assert apply_to_text(text, [both, later]) == ("abcdef\n!i\n", [later])
    # JSON keeps every edit, and reads them back
    assert Finding.from_json(both.as_json()) == both
    assert len(both.as_json()["fix"]["edits"]) == 2


# Writing a fix (or --add-noqa's comments) back: `shardcheck/check/writeback.py`. Each test runs
# the command in this process, on a program whose one finding (SC401) has a safe fix.
USE_MESH = ("import jax\nm = jax.make_mesh((2,), ('data',))\n"
            "with jax.sharding.use_mesh(m):\n    pass\n")
FIXED = {"--fix": (b"jax.sharding.use_mesh(m)", b"jax.set_mesh(m)"),
         "--add-noqa": (b"use_mesh(m):", b"use_mesh(m):  # shardcheck: ignore[SC401]")}


def _main(*args):
    """``shardcheck check --no-cache ARGS`` in this process: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["check", "--no-cache", *args])
    return code, out.getvalue(), err.getvalue()


def _expected(data: bytes, flag: str) -> bytes:
    old, new = FIXED[flag]
    assert data.count(old) == 1
    return data.replace(old, new)


def _temporaries(*dirs):
    return [n for d in dirs for n in os.listdir(d) if n.startswith(".shardcheck-fix-")]


ENCODINGS = {
    "latin-1 cookie": b"# -*- coding: latin-1 -*-\ns = 'caf\xe9 \xf1'\n" + USE_MESH.encode(),
    "utf-8 bom": codecs.BOM_UTF8 + "s = 'café ñ'\n".encode() + USE_MESH.encode(),
    "crlf": USE_MESH.replace("\n", "\r\n").encode(),
    "latin-1 crlf": b"# coding: latin-1\r\ns = '\xe9'\r\n" + USE_MESH.replace("\n", "\r\n").encode(),
}


@pytest.mark.parametrize("flag", ["--fix", "--add-noqa"])
@pytest.mark.parametrize("case", ENCODINGS)
def test_the_file_keeps_its_encoding_and_line_endings(tmp_path, case, flag):
    p = tmp_path / "m.py"
    p.write_bytes(ENCODINGS[case])
    code, _, err = _main(flag, str(p))
    assert code == 0, err
    assert p.read_bytes() == _expected(ENCODINGS[case], flag)  # byte for byte but the fix


@pytest.mark.parametrize("insert, why", [
    ("x = '€'\n", "which its encoding (iso-8859-1) cannot hold"),
    ("# a\n# b\n", "would not read back as written"),  # the cookie leaves the first 2 lines
])
def test_a_fix_the_file_encoding_cannot_hold_is_not_written(tmp_path, insert, why):
    p = tmp_path / "m.py"
    data = b"# -*- coding: latin-1 -*-\ns = 'caf\xe9'\n"
    p.write_bytes(data)
    bad = Finding("X", "x", "m", "error", str(p), 1, 1, 1, 1, Fix("f", 1, 1, 1, 1, insert))
    run = fix_findings([bad], [str(p)], unsafe=False, write=True)
    assert [why in m for m in run.problems] == [True] and run.files == []
    assert p.read_bytes() == data


def test_a_symlink_is_written_through_and_stays_a_link(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "src").mkdir()
    target = tmp_path / "real" / "target.py"
    target.write_text(USE_MESH)
    link = tmp_path / "src" / "link.py"
    link.symlink_to(os.path.join("..", "real", "target.py"))
    code, _, err = _main("--fix", str(tmp_path / "src"))
    assert code == 0, err
    assert link.is_symlink() and os.readlink(link) == os.path.join("..", "real", "target.py")
    assert target.read_bytes() == _expected(USE_MESH.encode(), "--fix")
    assert _temporaries(tmp_path / "real", tmp_path / "src") == []


def test_every_hard_link_sees_the_fix(tmp_path):
    p = tmp_path / "m.py"
    p.write_text(USE_MESH)
    (tmp_path / "other").mkdir()
    other = tmp_path / "other" / "same.py"
    os.link(p, other)
    inode = p.stat().st_ino
    code, _, err = _main("--fix", str(p))
    assert code == 0, err
    assert other.read_bytes() == p.read_bytes() == _expected(USE_MESH.encode(), "--fix")
    assert p.stat().st_ino == other.stat().st_ino == inode and p.stat().st_nlink == 2


def _fsync_failing_once(monkeypatch, directory, error):
    """``os.fsync`` raising ``error`` the first time it flushes a file of ``directory``;
    the flushes of its files, in a list. Other flushes (another test's thread) go on."""
    real, flushed = os.fsync, []

    def fsync(fd):
        if os.fstat(fd).st_ino in {e.stat().st_ino for e in os.scandir(directory)}:
            flushed.append(fd)
            if len(flushed) == 1:
                raise error
        real(fd)
    monkeypatch.setattr(os, "fsync", fsync)
    return flushed


def test_a_failed_write_in_place_puts_the_old_bytes_back(tmp_path, monkeypatch):
    p = tmp_path / "m.py"
    p.write_text(USE_MESH)
    os.link(p, tmp_path / "same.py")
    # the disk fills as the fix is flushed; the restore finds room again
    flushed = _fsync_failing_once(monkeypatch, tmp_path,
                                  OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)))
    code, _, err = _main("--fix", str(p))
    assert code == 2 and len(flushed) == 2
    assert f"{p}: cannot write it (No space left on device); left unchanged" in err
    assert p.read_text() == (tmp_path / "same.py").read_text() == USE_MESH


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown needs root")
def test_root_keeps_the_owner_group_and_mode_of_another_user_file(tmp_path):
    p = tmp_path / "m.py"
    p.write_text(USE_MESH)
    os.chown(p, 12345, 12345)
    os.chmod(p, 0o640)
    code, _, err = _main("--fix", str(p))
    assert code == 0, err
    st = p.stat()
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (12345, 12345, 0o640)
    assert p.read_bytes() == _expected(USE_MESH.encode(), "--fix")


def test_the_extended_attributes_are_kept(tmp_path):
    """A POSIX ACL and an SELinux label are extended attributes; ``user.*`` stands in."""
    p = tmp_path / "m.py"
    p.write_text(USE_MESH)
    try:
        os.setxattr(p, "user.shardcheck-test", b"kept")
    except (AttributeError, OSError) as e:  # not Linux, or a filesystem without them
        pytest.skip(f"no user extended attributes here: {e}")
    code, _, err = _main("--fix", str(p))
    assert code == 0, err
    assert os.getxattr(p, "user.shardcheck-test") == b"kept"
    assert p.read_bytes() == _expected(USE_MESH.encode(), "--fix")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown needs root")
def test_an_owner_the_new_file_cannot_get_is_kept_by_writing_in_place(tmp_path, monkeypatch):
    """Not root (``fchown`` refused), fixing another user's file in a directory it may
    write: a new file would be its own, so the file is written in place instead."""
    p = tmp_path / "m.py"
    p.write_text(USE_MESH)
    os.chown(p, 12345, 12345)
    inode = p.stat().st_ino

    def not_root(fd, uid, gid):
        raise PermissionError(errno.EPERM, os.strerror(errno.EPERM))
    monkeypatch.setattr(os, "fchown", not_root)
    code, _, err = _main("--fix", str(p))
    assert code == 0, err
    st = p.stat()
    assert (st.st_ino, st.st_uid, st.st_gid) == (inode, 12345, 12345)
    assert p.read_bytes() == _expected(USE_MESH.encode(), "--fix")
    assert _temporaries(tmp_path) == []


@pytest.mark.parametrize("flag", ["--fix", "--add-noqa"])
def test_a_read_only_file_is_refused_even_for_root(tmp_path, flag):
    p = tmp_path / "m.py"
    p.write_text(USE_MESH)
    os.chmod(p, 0o444)
    code, _, err = _main(flag, str(p))
    assert code == 2
    assert f"shardcheck: warning: {p}: it is read-only (mode 0444); left unchanged\n" in err
    assert p.read_text() == USE_MESH and stat.S_IMODE(p.stat().st_mode) == 0o444


@pytest.mark.parametrize("flag", ["--fix", "--add-noqa"])
def test_a_write_the_directory_refuses_is_one_line_and_exit_2(tmp_path, monkeypatch, flag):
    """Root ignores directory permissions, so the directory's refusal is made by
    ``os.replace`` raising as it does in a directory the user cannot write."""
    p = tmp_path / "m.py"
    p.write_text(USE_MESH)

    def refused(src, dst):
        if os.path.dirname(src) != str(tmp_path):
            return replace(src, dst)
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), src)
    replace = os.replace
    monkeypatch.setattr(os, "replace", refused)
    code, _, err = _main(flag, str(p))
    assert code == 2 and "Traceback" not in err
    assert [line for line in err.splitlines() if "warning" in line] == [
        f"shardcheck: warning: {p}: cannot write it (Permission denied); left unchanged"]
    assert "1 file(s) could not be written (exit status 2)" in err
    assert p.read_text() == USE_MESH and _temporaries(tmp_path) == []


def test_an_exception_mid_write_removes_the_temporary_file(tmp_path, monkeypatch):
    p = tmp_path / "m.py"
    p.write_text(USE_MESH)
    original = read_original(str(p))
    _fsync_failing_once(monkeypatch, tmp_path, KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        write_back(original, USE_MESH.replace("use_mesh", "set_mesh"))
    assert p.read_text() == USE_MESH and _temporaries(tmp_path) == []


def test_a_file_changed_since_it_was_read_is_left_alone(tmp_path):
    p = tmp_path / "m.py"
    p.write_text(USE_MESH)
    original = read_original(str(p))
    p.write_text(USE_MESH + "x = 1\n")  # an editor saved it meanwhile
    with pytest.raises(WriteRefused, match="it changed since it was read; left unchanged"):
        write_back(original, USE_MESH.replace("use_mesh", "set_mesh"))
    assert p.read_text() == USE_MESH + "x = 1\n"


def test_add_noqa_counts_rows_as_python_does():
    """A U+2028 in a string is no line break to Python (nor a form feed): str.splitlines
    split there, and the comment went into the string, changing its value."""
    text = 'import jax\ns = "a\u2028b"; c = jax.sharding.use_mesh\nx = 1\n'
    at = Finding("SC401", "n", "m", "error", "x.py", 2, 20, 2, 40)
    new, n = comment_lines(text, [at])
    assert n == 1 and new == text.replace("use_mesh\n", "use_mesh  # shardcheck: ignore[SC401]\n")
