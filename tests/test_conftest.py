"""What tests/conftest.py does to the test run's output, seen as CI sees it (``-q``, two
xdist workers, output to a pipe): xdist's status line once, and the skips of other JAX
versions' profiles folded into one ``-ra`` line."""

import pathlib
import shutil
import subprocess
import sys
import textwrap

CONFTEST = pathlib.Path(__file__).resolve().parent / "conftest.py"


def test_one_status_line_and_one_line_for_other_profiles_skips(tmp_path):
    shutil.copy(CONFTEST, tmp_path / "conftest.py")
    (tmp_path / "test_profiles.py").write_text(textwrap.dedent('''\
        import pytest

        @pytest.mark.parametrize("version", ["0.11", "0.12"])
        def test_profile(version):
            pytest.skip(f"profile {version}; the installed JAX is 0.10.2")

        def test_other():
            pytest.skip("needs a GPU")
        '''))
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-ra", "-n", "2",
                          "-p", "no:cacheprovider", "-p", "no:randomly",
                          "-p", "no:hypothesispytest", "-p", "no:jaxtyping", str(tmp_path)],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120).stdout
    assert out.count("bringing up nodes...") == 1, out
    assert "SKIPPED [2] tests of other JAX versions' profiles (0.11, 0.12): the installed " \
           "JAX is 0.10.2" in out, out
    assert "needs a GPU" in out and "3 skipped" in out, out
