"""``shardcheck confirm --mesh data=64,model=8 examples/``: tracing every example's
jitted functions on a 512-device AbstractMesh, against running them on 8 CPU devices.

    python benchmarks/confirm_mesh.py

Prints, measured in one run:
- the wall time of the whole ``--mesh`` command (static analysis at scale, one
  subprocess that imports JAX and traces every call), median of 3; target < 5 s;
- the wall time of ``shardcheck confirm examples/`` on 8 CPU devices, once, and the
  ratio between the two;
- the case the production mesh finds and 8 devices do not: examples/kv_heads.py.
"""

import json
import pathlib
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
MESH = "data=64,model=8"


def confirm(*args: str):
    start = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "shardcheck.cli", "confirm", *args, "--format", "json"],
                       cwd=ROOT, capture_output=True, text=True, timeout=900)
    wall = time.perf_counter() - start
    if r.returncode not in (0, 1):
        raise SystemExit(r.stderr)
    return wall, json.loads(r.stdout)


def main() -> None:
    walls = []
    for _ in range(3):
        wall, scaled = confirm("--mesh", MESH, "examples/")
        walls.append(wall)
    scale_wall = statistics.median(walls)
    device_wall, devices = confirm("examples/")
    calls = [c for r in scaled for c in r["calls"]]
    traced = [c for c in calls if c["outputs"] is not None]
    print(f"confirm --mesh {MESH} examples/ (512 devices, abstract): {scale_wall:5.2f} s "
          f"(median of 3; runs {', '.join(f'{w:.2f}' for w in walls)}); "
          f"{len(traced)} of {len(calls)} calls traced, "
          f"{sum(c['seconds'] for c in calls) * 1000:.0f} ms of tracing in all")
    print(f"confirm examples/ (8 CPU devices, run and compiled):   {device_wall:5.2f} s   "
          f"the abstract run takes {scale_wall / device_wall:.2f}x of it")
    print(f"target < 5 s: {'met' if scale_wall < 5 else 'MISSED'}")
    kv_dev = [r for r in devices if r["path"].endswith("kv_heads.py")][0]
    kv_scale = [r for r in scaled if r["path"].endswith("kv_heads.py")][0]
    err = kv_scale["calls"][0]["error"]
    print(f"examples/kv_heads.py on 8 devices: {'error' if kv_dev['error'] else 'no error'}; "
          f"at {MESH}: {err['type'] if err else 'no error'} at line {err and err['line']}: "
          f"{err['message'][:100] if err else ''}")
    print(f"  static analysis at that scale: {', '.join(kv_scale['calls'][0]['predicted'])}")
    failing = sorted(pathlib.Path(r["path"]).name for r in scaled if not r["ok"])
    print(f"examples that do not fit the production mesh: {', '.join(failing)}")


if __name__ == "__main__":
    main()
