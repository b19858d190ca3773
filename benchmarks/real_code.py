"""shardcheck over real code (e.g. fetched google/flax and jax-ml/jax trees).

    python benchmarks/real_code.py TREE [TREE...]

Prints files, lines, wall time, internal errors, and findings by rule, split into those
inside `assertRaises` / `pytest.raises` blocks (code meant to fail: recall) and those
outside (on correct code: false positives when error-level).
"""

import collections
import json
import sys
import time

from shardcheck.check import runner
from shardcheck.analyzer.config import Config
from shardcheck.check.discovery import discover


def main(paths):
    report = {}
    for path in paths:
        config = Config(root=path)
        files, _ = discover([path], config)
        lines = sum(open(f, "rb").read().count(b"\n") for f in files)
        start = time.perf_counter()
        res = runner.run(files, config, jobs=2)
        wall = time.perf_counter() - start
        inside = collections.Counter(f"{f.code} {f.name} ({f.severity})" for f in res.findings if f.in_expected_failure)
        outside = collections.Counter(f"{f.code} {f.name} ({f.severity})" for f in res.findings
                                      if not f.in_expected_failure)
        report[path] = {
            "files": len(files), "lines": lines, "wall_s": round(wall, 2),
            "internal_errors": sum(f.code == "SC002" for f in res.findings),
            "syntax_errors": sum(f.code == "SC001" for f in res.findings),
            "errors_outside_raises_blocks": sum(
                1 for f in res.findings if not f.in_expected_failure and f.severity == "error"
                and f.code not in ("SC001", "SC002")),
            "inside_raises_blocks": dict(inside), "outside_raises_blocks": dict(outside),
        }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main(sys.argv[1:])
