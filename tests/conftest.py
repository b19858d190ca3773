"""Every test sees 8 CPU devices; JAX reads these before it initializes.

The environment is set here, when pytest loads this file, before any test module (or
any xdist worker's test) imports JAX; subprocesses the tests start inherit it.
"""

import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")
_flags = os.environ.get("XLA_FLAGS", "").split()
_flags = [f for f in _flags if not f.startswith("--xla_force_host_platform_device_count")]
_flags.append("--xla_force_host_platform_device_count=8")
if not any(f.startswith("--xla_backend_optimization_level") for f in _flags):
    # LLVM at -O0: most of the time of these small programs is XLA's CPU code
    # generation, which nothing here observes. jax.typeof, JAX's errors and XLA's HLO
    # passes (SPMD partitioning, the collectives confirm reports) are unchanged.
    # Set --xla_backend_optimization_level in XLA_FLAGS to test at another level.
    _flags.append("--xla_backend_optimization_level=0")
os.environ["XLA_FLAGS"] = " ".join(_flags)

import pathlib  # noqa: E402
import sys  # noqa: E402

import pytest  # noqa: E402

# The tests are laid out like the packages they test (tests/analyzer/, tests/check/, ...);
# the helpers here (jax_snippets, ground_truth, ...) and the helpers of one test module
# that another reuses (test_robustness's BAD and run, ...) import by their bare names.
_TESTS = pathlib.Path(__file__).resolve().parent
for _folder in [_TESTS] + sorted(p for p in _TESTS.iterdir()
                                 if p.is_dir() and any(p.glob("test_*.py"))):
    if str(_folder) not in sys.path:
        sys.path.insert(0, str(_folder))


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def _compile_shardcheck() -> None:
    """Write the bytecode of shardcheck's own modules, where they are imported from.

    An editable install (README command 2) leaves them uncompiled, and where
    PYTHONDONTWRITEBYTECODE is set no import writes them either: then each of the many
    ``python -m shardcheck`` processes the tests start compiled the modules it imports
    again (0.4 s a process; 0.8 s against 1.2 s for `check` of one small file). Once per
    run, in the controller, before its workers start; a module whose bytecode is current
    is not compiled again."""
    import compileall
    import json
    import subprocess
    import tempfile
    # where a process started outside the checkout imports them from (an editable
    # install's own tree), as the tests' `python -m shardcheck` processes do
    find = ("import importlib.util as u, json; print(json.dumps([list(u.find_spec(p)"
            ".submodule_search_locations) for p in ('shardcheck', 'sharding_types')]))")
    try:
        out = subprocess.run([sys.executable, "-c", find], cwd=tempfile.gettempdir(),
                             capture_output=True, text=True, timeout=60).stdout
        places = [where for found in json.loads(out) for where in found]
    except Exception:  # not installed: nothing to compile
        return
    for where in places:
        try:
            compileall.compile_dir(where, quiet=2)
        except Exception:  # a read-only install: the processes compile as before
            pass


if not os.environ.get("PYTEST_XDIST_WORKER"):
    _compile_shardcheck()


# pytest rewrites the asserts of every module of a package that installs a pytest plugin
# (shardcheck's own, hypothesis's, jaxtyping's), as each is imported: each test process
# parsed and rewrote the whole analyzer (collection: 14.9 s, 8.5 s without any
# rewriting). The tests' own asserts are still rewritten; the packages' are plain.
NOT_REWRITTEN = ("shardcheck", "sharding_types", "analyzer", "plugin", "hypothesis",
                 "_hypothesis_pytestplugin", "_hypothesis_globals", "_hypothesis_ftz_detector",
                 "jaxtyping", "xdist", "platformdirs")


def pytest_configure(config):
    try:  # pytest's own state: where it is not found, every package stays rewritten
        from _pytest.assertion.rewrite import assertstate_key
        hook = config.stash[assertstate_key].hook
        hook._must_rewrite.difference_update(NOT_REWRITTEN)
        hook._marked_for_rewrite_cache.clear()
    except (ImportError, KeyError, AttributeError):
        pass


def pytest_xdist_auto_num_workers(config):
    """``-n auto``: a worker per core, at most 6 (the suite has few heavy files; more
    workers would only each pay for collecting)."""
    return max(1, min(_cpus(), 6))


@pytest.fixture(scope="session")
def jax8():
    """JAX with 8 CPU devices and no mesh set; tests set their own mesh.

    XLA_FLAGS (above) gives the 8 devices: it is read when the backend starts, whichever
    test starts it first, so no ``jax.config`` update is needed (one after the backend
    started would raise)."""
    import jax
    assert jax.device_count() == 8, (jax.devices(), os.environ.get("XLA_FLAGS"))
    return jax


@pytest.fixture
def wrong_reduce_rule(monkeypatch):
    """Test-only hook: the analyzer's rule for ``jnp.max`` forgets ``keepdims``, so confirm
    (whose runtime half still records what JAX says) must report a disagreement."""
    from shardcheck.analyzer.transfer import OPS, Op
    real = OPS["jax.numpy.max"]
    monkeypatch.setitem(OPS, "jax.numpy.max",
                        Op(lambda x, axes, keepdims, *rest: real.rule(x, axes, False, *rest), real.read))


@pytest.fixture
def concise_check(monkeypatch, capsys):
    """``check(root, code, *paths)``: the lines of ``shardcheck check --no-cache`` run in
    ``root`` on ``paths`` (concise output) that name the rule ``code``."""
    from shardcheck.cli import main

    def check(root, code, *paths):
        with monkeypatch.context() as m:
            m.chdir(root)
            main(["check", "--no-cache", "--output-format", "concise", *paths])
        return [line for line in capsys.readouterr().out.splitlines() if code in line]
    return check


# A test of a version profile other than the installed JAX's skips (test_compat): the
# `-ra` summary shows them as one line, not one per profile and test location.
_OTHER_PROFILE = "; the installed JAX is "


@pytest.hookimpl(hookwrapper=True, tryfirst=True)  # around the summary pytest prints
def pytest_terminal_summary(terminalreporter):
    skipped = terminalreporter.stats.get("skipped", [])
    other = [r for r in skipped if _OTHER_PROFILE in str(getattr(r, "longrepr", ""))]
    if other:
        terminalreporter.stats["skipped"] = [r for r in skipped if r not in other]
    yield
    if other:
        terminalreporter.stats["skipped"] = skipped  # the final count still has them
        reasons = {str(r.longrepr[-1]) if isinstance(r.longrepr, tuple) else "" for r in other}
        versions = sorted({why.split("profile ", 1)[-1].split(";", 1)[0] for why in reasons})
        installed = next(iter(reasons)).rsplit(_OTHER_PROFILE, 1)[-1]
        terminalreporter.write_line(
            f"SKIPPED [{len(other)}] tests of other JAX versions' profiles "
            f"({', '.join(versions)}): the installed JAX is {installed}")


@pytest.hookimpl(trylast=True)  # after xdist registers its reporter
def pytest_sessionstart(session):
    """Under ``-q`` with output that is no terminal (CI's log), xdist writes its status
    line, "bringing up nodes...", when the workers start and again when they have
    collected: once says it."""
    reporter = session.config.pluginmanager.getplugin("terminaldistreporter")
    if reporter is None or session.config.option.verbose >= 0:
        return
    show = reporter.ensure_show_status
    shown = []

    def once():
        if not shown:
            shown.append(True)
            show()
    reporter.ensure_show_status = once
