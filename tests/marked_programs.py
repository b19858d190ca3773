"""Programs whose expected findings are marked in their source, checked statically and
run under JAX: the harness of the test modules that drive ``check`` with small
programs in the shape of real code (``tests/analyzer/test_instances.py``,
``test_python_flow.py``, ``tests/analyzer/jaxapi/test_*.py``).

A case is ``name -> (program, message)``: the line of each expected error-level finding
is marked ``# <- CODE``; ``message`` is a part of the error JAX raises when the
program (after the module's ``head``) runs, or None where it runs to the end; where JAX
words it differently across versions, ``compat:NAME`` names its signature in
``analyzer/compat/errors.py``, matched as the installed JAX words it."""

from __future__ import annotations

import re
from typing import Callable, Dict, List, Optional, Tuple

import pytest

Cases = Dict[str, Tuple[str, Optional[str]]]


def expected(head: str, program: str) -> List[Tuple[str, int]]:
    """(code, line) of each marked finding, lines counted from the head's first."""
    rows = []
    for i, line in enumerate((head + program).splitlines(), 1):
        m = re.search(r"# <- (SC\d+)", line)
        if m:
            rows.append((m.group(1), i))
    return rows


def found(head: str, program: str) -> List[Tuple[str, int]]:
    """(code, line) of each error-level finding ``check`` reports on the program."""
    from shardcheck.analyzer.engine import check_source
    return [(f.code, f.row) for f in check_source(head + program, "m.py")
            if f.severity == "error"]


def assert_marks_agree_with_messages(head: str, cases: Cases) -> None:
    """A case expects a finding exactly when it expects JAX to raise."""
    for name, (program, message) in cases.items():
        assert bool(expected(head, program)) == (message is not None), name


def case_tests(head: str, cases: Cases) -> Tuple[Callable[..., None], ...]:
    """A module's tests of its cases, to bind to names at its top level: ``check``
    reports exactly the marked lines (one test per case), a case marks a finding exactly
    when it expects JAX to raise, and JAX agrees (one batch)::

        test_check_follows_the_code, test_every_case_with_a_finding_expects_jax_to_raise, \\
            test_jax_agrees = case_tests(HEAD, CASES)
    """
    @pytest.mark.parametrize("name", sorted(cases))
    def follows(name: str) -> None:
        program, _ = cases[name]
        assert found(head, program) == expected(head, program)

    def marks_agree() -> None:
        assert_marks_agree_with_messages(head, cases)

    def jax_agrees() -> None:
        assert_jax_agrees(head, cases)
    return follows, marks_agree, jax_agrees


def assert_jax_agrees(head: str, cases: Cases) -> None:
    """Every case run under JAX (one batch): it raises the expected message, or runs."""
    from jax_snippets import run_snippets
    names = sorted(cases)
    results = run_snippets([head + cases[n][0] for n in names])
    for name, res in zip(names, results):
        message = cases[name][1]
        if message is not None and message.startswith("compat:"):
            assert res["status"] == "error" and _signature(message[7:]).matches(
                res["type"], res["error"]), (name, res)
        elif message is not None:
            assert res["status"] == "error" and message in res["error"], (name, res)
        else:
            assert res["status"] == "ok", (name, res)


def _signature(name: str):
    from importlib.metadata import version
    from shardcheck.analyzer.compat import profile_for
    sig = profile_for(version("jax")).errors.get(name)
    assert sig is not None, f"no error signature {name!r} in analyzer/compat/errors.py"
    return sig
