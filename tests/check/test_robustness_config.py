"""Config mistakes are one line naming the key and the problem, exit 2, whatever files
are checked (and whichever command reads the config); never a traceback."""

import os
import textwrap

import pytest

from shardcheck.check import config as cfgmod
from test_robustness import BAD, cli, run

# key = bad value (TOML) -> a phrase of the expected message
BAD_VALUES = {
    "select": ("5", "select must be a list of strings"),
    "ignore": ('["SC999"]', "unknown rule selector 'SC999'"),
    "exclude": ("[1, 2]", "exclude must be a list of strings"),
    "extend-exclude": ("{ a = 1 }", "extend-exclude must be a list of strings"),
    "per-file-ignores": ('{ "tests/**" = ["SC999"] }', "per-file-ignores['tests/**']"),
    "meshes": ('"production"', "meshes must be a table"),
    "default-mesh": ("[1]", "default-mesh [1] is not one of the declared meshes"),
    "cache-dir": ("5", "cache-dir must be a directory path (a string), got 5"),
    "respect-gitignore": ('"false"', "respect-gitignore must be true or false"),
    "max-collective-bytes": ('"lots"', "max-collective-bytes takes a byte count"),
    "timeout-per-file": ("-1", "timeout-per-file takes a number of seconds"),
    "confirm-timeout": ('"soon"', "confirm-timeout takes a number of seconds"),
    "confirm-programs": ("[1]", "confirm-programs must be a list of strings"),
    "memory-per-file": ('"2 GiB please"', "memory-per-file takes a byte count"),
    "generated-size-limit": ("true", "generated-size-limit takes a byte count"),
    "jax-version": ('"0.3"', "jax-version: JAX version '0.3' is not supported"),
    "logical": ('"cfg.yml"', "[tool.shardcheck.logical] must be a table"),
    "warn-unused-ignores": ('"yes"', "warn-unused-ignores must be true or false"),
    "baseline": ("3", "baseline must be a file path"),
}


def test_every_key_has_a_bad_value_case():
    assert set(BAD_VALUES) == set(cfgmod.KNOWN_KEYS)


@pytest.mark.parametrize("key", sorted(BAD_VALUES))
@pytest.mark.parametrize("command", ["check", "types"])
def test_a_bad_value_is_one_line_naming_the_key_exit_2(tmp_path, key, command):
    value, phrase = BAD_VALUES[key]
    (tmp_path / "pyproject.toml").write_text(f"[tool.shardcheck]\n{key} = {value}\n")
    (tmp_path / "a.py").write_text("x = 1\n")  # matches no pattern: the key is checked anyway
    code, out, err = run([command, "a.py"], tmp_path)
    assert code == 2 and out == "", (out, err)
    assert err.count("\n") == 1 and err.startswith("shardcheck: config error: "), err
    assert key in err and phrase in err, err
    assert "Traceback" not in err


def test_a_bad_per_file_ignores_code_is_reported_even_if_no_file_matches(tmp_path):
    # the case: an unknown code was a ConfigError traceback, and only when a
    # file matching the pattern was checked
    (tmp_path / "pyproject.toml").write_text(
        '[tool.shardcheck]\nper-file-ignores = { "tests/**" = ["SC999"] }\n')
    (tmp_path / "src.py").write_text(BAD)
    code, out, err = cli(["check", "src.py"], tmp_path)
    assert code == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert "per-file-ignores['tests/**']: unknown rule selector 'SC999'" in err


def test_a_bad_key_is_a_clear_error_exit_2(tmp_path):
    """The README: "A bad key, selector, size or TOML file is a clear error (exit 2)"."""
    (tmp_path / "a.py").write_text("x = 1\n")
    for table, phrase in (("colour = 'red'", "unknown key 'colour' in [tool.shardcheck]"),
                          ("select = ['nonsense']", "unknown rule selector 'nonsense'"),
                          ("[tool.shardcheck.meshes.m]\ndata = 0", "positive integer size"),
                          ("select = [", "is not valid TOML")):
        text = table if table.startswith("[") else "[tool.shardcheck]\n" + table
        (tmp_path / "pyproject.toml").write_text(text + "\n")
        code, out, err = run(["check", "a.py"], tmp_path)
        assert code == 2 and err.count("\n") == 1 and phrase in err, err


def test_config_pointing_at_a_binary_file(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "blob.toml").write_bytes(bytes(range(256)))
    code, out, err = run(["check", "a.py", "--config", "blob.toml"], tmp_path)
    assert code == 2 and err.count("\n") == 1 and "blob.toml is not a TOML file" in err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_config_pointing_at_a_fifo_or_a_directory(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    os.mkfifo(tmp_path / "pipe.toml")
    code, out, err = cli(["check", "a.py", "--config", "pipe.toml"], tmp_path, timeout=120)
    assert code == 2 and "cannot read config pipe.toml: it is a FIFO" in err
    code, out, err = run(["check", "a.py", "--config", "."], tmp_path)
    assert code == 2 and "cannot read config ." in err and "directory" in err


def test_tool_that_is_not_a_table(tmp_path):
    (tmp_path / "pyproject.toml").write_text("tool = 5\n")
    (tmp_path / "a.py").write_text("x = 1\n")
    code, out, err = run(["check", "a.py"], tmp_path)
    assert code == 2 and "`tool` must be a table" in err


def test_respect_gitignore_false_is_honoured_only_as_a_boolean(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("gen/\n")
    (tmp_path / "gen").mkdir()
    (tmp_path / "gen" / "b.py").write_text(BAD)
    (tmp_path / "pyproject.toml").write_text("[tool.shardcheck]\nrespect-gitignore = false\n")
    code, out, _ = run(["check", ".", "--no-cache"], tmp_path)
    assert code == 1 and "gen/b.py" in out


@pytest.mark.parametrize("flag,value,phrase", [
    ("--timeout-per-file", "-3", "--timeout-per-file takes a number of seconds"),
    ("--memory-per-file", "much", "--memory-per-file takes a byte count"),
    ("--select", "SC999", "unknown rule selector 'SC999'"),
    ("--mesh", "data=0", "positive size"),
    # out of range: a budget past what setrlimit takes raised OverflowError in every
    # worker, and the run reported every file as skipped, exit 0
    ("--memory-per-file", "99999999999999999999", "between 16 MiB and 1 PiB (0: no limit)"),
    ("--memory-per-file", "1MiB", "between 16 MiB and 1 PiB (0: no limit)"),
    ("--timeout-per-file", "1e12", "at most a week"),
])
def test_bad_command_line_values_are_one_line_exit_2(tmp_path, flag, value, phrase):
    (tmp_path / "a.py").write_text("x = 1\n")
    code, out, err = run(["check", "a.py", flag, value], tmp_path)
    assert code == 2 and err.count("\n") == 1 and phrase in err, err


def test_the_budget_keys_are_read(tmp_path):
    table = textwrap.dedent('''\
        [tool.shardcheck]
        timeout-per-file = 2.5
        memory-per-file = "1GiB"
        generated-size-limit = "64KiB"
        ''')
    (tmp_path / "pyproject.toml").write_text(table)
    cfg = cfgmod.load(str(tmp_path / "pyproject.toml"))
    assert (cfg.timeout_per_file, cfg.memory_per_file, cfg.generated_size_limit) == (
        2.5, 2**30, 64 * 2**10)
    defaults = cfgmod.Config()
    assert (defaults.timeout_per_file, defaults.memory_per_file,
            defaults.generated_size_limit) == (60.0, 2 * 2**30, 512 * 2**10)


def test_the_longest_timeout_is_waited_for_in_steps(tmp_path):
    # found by the fuzz suite: poll() cannot wait 2**31 ms at once (1e12 s then; a week
    # is the longest accepted now)
    (tmp_path / "pyproject.toml").write_text("[tool.shardcheck]\ntimeout-per-file = 604800\n")
    (tmp_path / "a.py").write_text(BAD)
    code, out, err = cli(["check", "a.py", "--no-cache"], tmp_path)
    assert code == 1 and "SC101" in out and "Traceback" not in err
