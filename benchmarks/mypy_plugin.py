"""mypy on examples/ with and without the shardcheck plugin (cold cache each time).

    python benchmarks/mypy_plugin.py

Prints both wall times and their ratio, measured in one run (runs interleaved, median
of 3 each). Each run uses a fresh cache directory, so it includes analysing JAX itself.
"""

import pathlib
import statistics
import tempfile
import time

from mypy import api

ROOT = pathlib.Path(__file__).resolve().parent.parent


def run(plugin: bool) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        cfg = pathlib.Path(tmp) / "pyproject.toml"
        cfg.write_text("[tool.mypy]\n" + ('plugins = ["shardcheck.plugin"]\n' if plugin else "")
                       + f'mypy_path = "{ROOT}"\ncheck_untyped_defs = true\n'
                       'follow_imports = "silent"\n')
        start = time.perf_counter()
        out, err, status = api.run([str(ROOT / "examples"), "--exclude", "examples/broken/",
                                    "--config-file", str(cfg), "--cache-dir", tmp + "/cache"])
        wall = time.perf_counter() - start
        assert status in (0, 1), err
        return wall


def main() -> None:
    times = {False: [], True: []}
    for _ in range(3):
        for plugin in (False, True):
            times[plugin].append(run(plugin))
    without, with_ = statistics.median(times[False]), statistics.median(times[True])
    print(f"mypy on examples/ without the plugin  {without:6.2f} s")
    print(f"mypy on examples/ with the plugin     {with_:6.2f} s   {with_ / without:.2f}x")


if __name__ == "__main__":
    main()
