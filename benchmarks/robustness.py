"""A 10 MB file and a 10,000-file tree under the per-file budgets: wall time and the peak
memory of the largest process, as a user runs `shardcheck check`.

    python benchmarks/robustness.py [--mb 10] [--files 10000] [--jobs 2] [--json]

Cases (each a fresh `python -m shardcheck check` process, no cache unless stated):
  * big_file: one hand-written-looking file of ``--mb`` MB (assignments, functions and
    jax calls) with the default budgets (timeout-per-file 60 s, memory-per-file 2 GiB):
    the file gets one ``skipped-file`` finding once a budget runs out, and the run
    ends; its time and memory are bounded by the budgets, not by the file.
  * big_generated: the same bytes marked ``# @generated``: skipped before parsing.
  * tree: ``--files`` small files in 100 packages, one in ten with a real finding:
    every finding must be reported (none lost), no file may be skipped, and the
    cached re-run reuses every result.
Peak memory is the largest resident set of any process of the run (the CLI or one of
its workers), from ``getrusage(RUSAGE_CHILDREN)`` measured per case in a fresh
process; it is a benchmark, not a test: numbers vary with the machine and its load.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

BAD = ('import jax\nimport jax.numpy as jnp\nfrom jax.sharding import NamedSharding, '
       'PartitionSpec as P\nmesh = jax.make_mesh((2, 4), ("data", "model"))\n'
       'x = jax.device_put(jnp.zeros((8, 16)), NamedSharding(mesh, P("batch", None)))\n')
GOOD = ('import jax\nimport jax.numpy as jnp\nfrom jax.sharding import NamedSharding, '
        'PartitionSpec as P\n\n\ndef step{i}(w, x):\n    h = x @ w\n    return jnp.tanh(h).sum()\n\n\n'
        'mesh = jax.make_mesh((2, 4), ("data", "model"))\n'
        'x = jax.device_put(jnp.zeros((8, 16)), NamedSharding(mesh, P("data", None)))\n')


def big_source(megabytes: float) -> str:
    """About ``megabytes`` MB of plausible Python: constants, small functions, jax calls."""
    chunk = []
    for i in range(200):
        chunk.append(f"W{i} = [{', '.join(str(j * i % 97) for j in range(16))}]\n")
        chunk.append(f"def f{i}(x, y=W{i}):\n    z = x * {i} + len(y)\n    return z\n\n")
    body = "".join(chunk)
    out = [BAD]
    size = len(BAD)
    n = 0
    while size < megabytes * 1e6:
        block = body.replace("W", f"W{n}_").replace("def f", f"def f{n}_")
        out.append(block)
        size += len(block)
        n += 1
    return "".join(out)


def measure(args: list, cwd: str) -> dict:
    """Wall time, exit status and peak RSS of `shardcheck ARGS`, from a fresh process
    (so RUSAGE_CHILDREN sees only this run)."""
    probe = (
        "import json, resource, subprocess, sys, time\n"
        "t = time.perf_counter()\n"
        "r = subprocess.run([sys.executable, '-m', 'shardcheck', *sys.argv[1:]], "
        "capture_output=True, text=True)\n"
        "wall = time.perf_counter() - t\n"
        "rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
        "print(json.dumps({'wall_s': wall, 'rc': r.returncode, 'peak_rss_mb': rss / 1024, "
        "'stdout': r.stdout, 'stderr': r.stderr}))\n")
    r = subprocess.run([sys.executable, "-c", probe, *args], cwd=cwd, capture_output=True,
                       text=True, check=True)
    return json.loads(r.stdout)


def tree(root: str, n: int) -> int:
    """``n`` files in 100 packages; returns how many have a finding."""
    bad = 0
    for i in range(n):
        pkg = os.path.join(root, f"pkg{i % 100}")
        os.makedirs(pkg, exist_ok=True)
        with open(os.path.join(pkg, f"m{i}.py"), "w") as f:
            if i % 10 == 0:
                f.write(BAD)
                bad += 1
            else:
                f.write(GOOD.format(i=i))
    return bad


def summary(name: str, m: dict, **extra) -> dict:
    lines = [x for x in m["stdout"].splitlines() if x.strip()]
    return {"case": name, "wall_s": round(m["wall_s"], 2), "peak_rss_mb": round(m["peak_rss_mb"]),
            "rc": m["rc"], "last_line": lines[-1] if lines else "", **extra}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=10.0)
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="shardcheck-robust-")
    rows = []
    try:
        big = os.path.join(work, "big")
        os.makedirs(big)
        src = big_source(args.mb)
        with open(os.path.join(big, "big.py"), "w") as f:
            f.write(src)
        m = measure(["check", "--no-cache", "big.py"], big)
        rows.append(summary("big_file", m, mb=round(len(src) / 1e6, 1),
                            skipped="SC003" in m["stdout"],
                            finding=next((x for x in m["stdout"].splitlines() if "SC003" in x), "")))
        with open(os.path.join(big, "big.py"), "w") as f:
            f.write("# @generated by benchmarks/robustness.py\n" + src)
        m = measure(["check", "--no-cache", "big.py"], big)
        rows.append(summary("big_generated", m, skipped="generated-size-limit" in m["stdout"]))

        root = os.path.join(work, "tree")
        os.makedirs(root)
        bad = tree(root, args.files)
        m = measure(["check", ".", "-j", str(args.jobs), "--format", "json", "--cache-dir",
                     os.path.join(work, "cache"), "-v"], root)
        found = json.loads(m["stdout"])
        lost = bad - sum(1 for f in found if f["code"] == "SC101")
        skipped = sum(1 for f in found if f["code"] == "SC003")
        rows.append(summary("tree", m, files=args.files, jobs=args.jobs,
                            files_per_s=round(args.files / m["wall_s"], 1), findings_lost=lost,
                            files_skipped=skipped, stats=m["stderr"].strip()))
        m = measure(["check", ".", "-j", str(args.jobs), "--cache-dir",
                     os.path.join(work, "cache"), "-v"], root)
        rows.append(summary("tree_cached", m, files=args.files, stats=m["stderr"].strip()))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        for r in rows:
            print(json.dumps(r))


if __name__ == "__main__":
    main()
