"""Fuzzing with hypothesis: type strings, mutated Python sources through `check` and
`types`, wrong-shaped and corrupt cache entries, and bad config values for every key.
Nothing may raise past the public API, report an internal error (SC002), or hang.

Bounded to well under a minute by default. ``SHARDCHECK_FUZZ=long`` (or a number of
examples per test, e.g. ``SHARDCHECK_FUZZ=5000``) runs the long, opt-in campaign.
"""

import json
import os
import pathlib
import signal
import tempfile
from contextlib import contextmanager

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from shardcheck.check import config as cfgmod
from shardcheck.check.cache import Cache
from shardcheck.analyzer.engine import NotAnalysed, read_and_check
from shardcheck.analyzer.inferred_types import infer_types
from shardcheck.analyzer.ftypes import Finding
from sharding_types import ShardingSyntaxError, parse
from test_robustness import BAD, run

ROOT = pathlib.Path(__file__).resolve().parents[2]
_MODE = os.environ.get("SHARDCHECK_FUZZ", "")
_LONG = _MODE.isdigit() or _MODE == "long"


def _examples(default: int) -> int:
    if _MODE.isdigit():
        return int(_MODE)
    return default * 50 if _LONG else default


def fuzz(default_examples: int):
    return settings(max_examples=_examples(default_examples), deadline=None, database=None,
                    suppress_health_check=list(HealthCheck), derandomize=not _LONG)


@contextmanager
def no_hang(seconds: int = 120):
    """A hang fails the example instead of blocking the run (main thread, POSIX)."""
    if not hasattr(signal, "SIGALRM"):
        yield
        return

    def hung(signum, frame):
        raise AssertionError(f"hung: no answer in {seconds} s")
    old = signal.signal(signal.SIGALRM, hung)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


# -- type strings -------------------------------------------------------------------------
_TYPE_PIECES = ["float32", "bfloat16", "int4", "key<fry>", "float8_e4m3fn", "bool", "~", "[", "]",
                "<host>", "<device>", "@", "(", ")", ",", "{", "}", "V:", "U:", "R:", "data",
                "model", "x", "B", "_", "8", "16", "0", "-1", " ", "9" * 5000, "\u00e9", "\x00",
                "@(data,model)", "{V:(x,y)}", "[8@data,16]"]


@fuzz(300)
@given(st.one_of(st.lists(st.sampled_from(_TYPE_PIECES), max_size=12).map("".join),
                 st.text(max_size=40)))
def test_fuzz_type_strings_parse_or_raise_a_syntax_error(text):
    try:
        t = parse(text)
    except ShardingSyntaxError:
        return
    assert parse(str(t)) == t  # what parses prints back to the same type


# -- mutated sources through check and types -------------------------------------------------
def _seed_sources():
    files = sorted((ROOT / "examples").rglob("*.py")) + sorted((ROOT / "tests/golden").glob("*.py"))
    return [p.read_bytes() for p in files]


SEEDS = _seed_sources()
NASTY = [b"\x00", b"\xff\xfe", b"\xe9", b"\xef\xbb\xbf", b"(", b")", b"[", b"]", b":", b"\n",
         b"    ", b"\t", b"\r", b"\x0c", b"# -*- coding: bogus -*-\n", b"# coding: latin-1\n",
         b"lambda", b"\\", b'"""', b"'", b"@", b"**", b"(" * 300, b"a." * 600 + b"b",
         b" + ".join([b"1"] * 1200), b"jax.make_mesh((0,), ('x',))", b"P('x', 'x')",
         b"jax.make_mesh((2, 4), ('data', 'model'))", b"jnp.zeros((8, 0))", b"9" * 5000,
         b"# noqa", b"# shardcheck: ignore[SC999]", b"async ", b"await ", b"yield ",
         b"global x\n", b"nonlocal x\n", b"return\n", b"type X = int\n", b"f'{x!r:>{w}}'",
         b"match x:\n    case 1:\n        pass\n", b"\xf0\x9f\x98\x80", b"\xed\xa0\x80"]


@st.composite
def mutated_source(draw):
    data = bytearray(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(0, 6))):
        n = len(data)
        at = draw(st.integers(0, n))
        kind = draw(st.sampled_from(["delete", "insert", "nasty", "duplicate", "crop"]))
        if kind == "delete":
            del data[at:at + draw(st.integers(1, 40))]
        elif kind == "insert":
            data[at:at] = draw(st.binary(max_size=12))
        elif kind == "nasty":
            data[at:at + draw(st.integers(0, 3))] = draw(st.sampled_from(NASTY))
        elif kind == "duplicate":
            data[at:at] = data[at:at + draw(st.integers(1, 400))]
        else:  # keep a window of lines, so examples stay small and fast
            lines = bytes(data).splitlines(keepends=True)
            start = draw(st.integers(0, max(0, len(lines) - 1)))
            data = bytearray(b"".join(lines[start:start + draw(st.integers(1, 60))]))
    return bytes(data)


@fuzz(60)
@given(mutated_source())
def test_fuzz_mutated_sources_through_check_and_types(data):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "fuzzed.py")
        with open(path, "wb") as f:
            f.write(data)
        with no_hang():
            _, found = read_and_check(path, cfgmod.Config())
            assert all(isinstance(x, Finding) for x in found)
            assert not [x for x in found if x.code == "SC002"], found
            try:
                infer_types(data, path)
            except (SyntaxError, NotAnalysed):
                pass


# -- cache entries ----------------------------------------------------------------------------
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=4),
    max_leaves=12)


@st.composite
def cache_entry(draw):
    """Bytes for a cache entry: random JSON, random bytes, or a valid entry with one
    field replaced by something else."""
    finding = {"code": "SC101", "name": "unknown-mesh-axis", "message": "m", "severity": "error",
               "filename": "bad.py", "location": {"row": 5, "column": 1},
               "end_location": {"row": 5, "column": 2}, "fix": None,
               "in_expected_failure": False}
    entry = {"findings": [finding], "deps": {}}
    kind = draw(st.sampled_from(["json", "bytes", "field"]))
    if kind == "json":
        return json.dumps(draw(json_values)).encode()
    if kind == "bytes":
        return draw(st.binary(max_size=64))
    path = draw(st.sampled_from([("findings",), ("deps",), ("findings", 0),
                                 ("findings", 0, "location"), ("findings", 0, "location", "row"),
                                 ("findings", 0, "fix"), ("findings", 0, "code"),
                                 ("findings", 0, "in_expected_failure")]))
    target = entry
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = draw(json_values)
    return json.dumps(entry).encode()


@fuzz(300)
@given(cache_entry())
def test_fuzz_a_wrong_cache_entry_is_a_miss_or_well_formed(tmp_path_factory, raw):
    d = tmp_path_factory.mktemp("cache")
    cache = Cache(str(d), "fp")
    src = d / "bad.py"
    src.write_text(BAD)
    digest = cache.file_hash(str(src))
    target = pathlib.Path(cache._entry_path(cache._key(str(src), digest)))
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(raw)
    got = cache.get(str(src), digest)
    assert got is None or all(isinstance(f, Finding) and isinstance(f.row, int) for f in got)


@fuzz(8)
@given(cache_entry())
def test_fuzz_a_run_over_a_wrong_cache_entry_matches_a_run_without_cache(tmp_path_factory, raw):
    d = tmp_path_factory.mktemp("run")
    (d / "bad.py").write_text(BAD)
    _, clean, _ = run(["check", ".", "--no-cache", "--format", "json"], d)
    run(["check", ".", "--cache-dir", "cache"], d)
    for entry in (d / "cache").rglob("*.json"):
        entry.write_bytes(raw)
    code, out, err = run(["check", ".", "--cache-dir", "cache", "--format", "json"], d)
    assert code in (0, 1) and "Traceback" not in err
    found = json.loads(out)
    # a miss is re-checked; a hit (a mutation that left a well-formed entry) is trusted
    assert found == json.loads(clean) or all(
        isinstance(f["location"]["row"], int) and isinstance(f["message"], str) for f in found)


# -- config values for every key ------------------------------------------------------------
toml_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=10)
toml_values = st.recursive(
    st.booleans() | st.integers(-2**63, 2**63 - 1) | st.floats() | toml_text
    | st.sampled_from(["SC101", "SC1", "ALL", "64MiB", "1.5GB", "explicit", "x", "", "0", "-1"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(toml_text, inner, max_size=3),
    max_leaves=10)


def _toml(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a TOML basic string (no lone surrogates here)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return "{" + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + "}"


@fuzz(30)
@given(st.sampled_from(cfgmod.KNOWN_KEYS), toml_values)
def test_fuzz_a_config_value_is_accepted_or_a_config_error_naming_the_key(key, value):
    try:
        cfgmod.from_table({key: value})
    except cfgmod.ConfigError as e:
        assert key in str(e) and "\n" not in str(e), str(e)


@fuzz(40)
@given(st.sampled_from(cfgmod.KNOWN_KEYS), toml_values)
def test_fuzz_a_config_value_through_the_command_line(tmp_path_factory, key, value):
    import tomllib
    text = f"[tool.shardcheck]\n{json.dumps(key)} = {_toml(value)}\n"
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        assume(False)
    d = tmp_path_factory.mktemp("cfg")
    (d / "pyproject.toml").write_text(text, encoding="utf-8")
    (d / "a.py").write_text("import jax\nx = 1\n")
    with no_hang():
        code, out, err = run(["check", "a.py", "--no-cache"], d)
    assert "Traceback" not in err
    if code == 2:
        assert err.startswith("shardcheck: config error: ") and err.count("\n") == 1, err
        assert key in err, err
    else:
        assert code in (0, 1) and "SC002" not in out, out


@pytest.mark.skipif(not _LONG, reason="SHARDCHECK_FUZZ=long: the whole examples tree, mutated")
@fuzz(40)
@given(mutated_source())
def test_fuzz_long_mutated_sources_through_the_command_line(tmp_path_factory, data):
    d = tmp_path_factory.mktemp("cli")
    (d / "fuzzed.py").write_bytes(data)
    (d / "bad.py").write_text(BAD)
    code, out, err = run(["check", ".", "--no-cache"], d)
    assert "Traceback" not in err and "SC002" not in out and code in (0, 1), out + err
    assert "bad.py:5:" in out
