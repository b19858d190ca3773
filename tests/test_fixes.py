"""`check --fix`, `--diff`, `--unsafe-fixes`: which fixes exist, that they are applied
atomically and only where asked, and that the fixed programs run under JAX."""

import os
import subprocess
import sys
import textwrap

import pytest

from jax_snippets import run_snippets
from shardcheck.analyzer.add_noqa import comment_lines
from shardcheck.analyzer.engine import check_source
from shardcheck.analyzer.fixes import apply_to_text, fix_file
from shardcheck.analyzer.ftypes import Finding, Fix
from shardcheck.analyzer.rules import all_rules

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


def test_add_noqa_counts_rows_as_python_does():
    """A U+2028 in a string is no line break to Python (nor a form feed): str.splitlines
    split there, and the comment went into the string, changing its value."""
    text = 'import jax\ns = "a\u2028b"; c = jax.sharding.use_mesh\nx = 1\n'
    at = Finding("SC401", "n", "m", "error", "x.py", 2, 20, 2, 40)
    new, n = comment_lines(text, [at])
    assert n == 1 and new == text.replace("use_mesh\n", "use_mesh  # shardcheck: ignore[SC401]\n")
