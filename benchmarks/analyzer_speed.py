"""shardcheck's speed on a tree, as ratios from one run (issue 14's targets).

    python benchmarks/analyzer_speed.py TREE [-j N] [--sample K] [--json]

The tree is copied to a scratch directory (the pre-commit case edits files). Its
"sharding files" are those that spell a sharding API (``precheck.spells_sharding_api``:
a mesh, a spec or sharding, a collective, shard_map, ...); the rest is the remainder of
the corpus. Reported, all from this one run on this machine:

  startup        `shardcheck --version` (best of 10), and a bare `python -c pass`
  floor          libcst parse + an empty visitor over the sharding files, this process
  single         shardcheck over the sharding files, no cache, this process     <= 1.3x floor
                 (the two timed in one pass, each file's floor just before its check:
                 ``interleaved``)
  corpus         shardcheck over every file in one run / over the sharding files
                 alone (best of two each, alternated)                           <= 1.2x
  -j N           the CLI's worker pool over the sharding files, no cache        <= 1.2 single/N + startup
  cached         a re-run of the CLI on the whole tree, every result cached     imports no libcst
  pre-commit     the CLI on 5 edited files of the tree, the cache warm for the rest   < 0.5 s
                 (5 that use sharding APIs, beside a fresh Python that only imports libcst
                 and parses them; and 5 that use none); the 5 again after a code edit (a
                 statement added to the first function of each: the importers that read
                 it are analysed again, which a comment or a new function spares them);
                 and again with ``--daemon``, a warm process serving the run, beside
                 libcst's parse of those files alone

``--sample K`` checks every K-th file only (the whole tree stays importable), for a
quicker run on a large tree.
"""

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

import libcst as cst

from shardcheck.check import runner
from shardcheck.analyzer.config import Config
from shardcheck.check.discovery import discover
from shardcheck.analyzer.precheck import spells_sharding_api

SHARDCHECK = [sys.executable, "-m", "shardcheck"]
_CLI = os.path.join(os.path.dirname(sys.executable), "shardcheck")
if os.path.exists(_CLI):  # the console script, as users run it
    SHARDCHECK = [_CLI]


class _Empty(cst.CSTVisitor):
    pass


def floor(files):
    """libcst's parse and an empty visit of each file (of a notebook: its code cells, as
    any libcst-based checker must take them out of the JSON first)."""
    from shardcheck.analyzer.notebooks import is_notebook, python_of
    start = time.perf_counter()
    for path in files:
        with open(path, "rb") as f:
            data = f.read()
        try:
            if is_notebook(path):
                data = python_of(data)[0].encode()
            cst.parse_module(data).visit(_Empty())
        except Exception:
            pass
    return time.perf_counter() - start


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


# Commands run as a user's shell runs them: with Python's bytecode cache (a sandbox's
# PYTHONDONTWRITEBYTECODE=1 would recompile shardcheck's modules on every start).
_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


_PARSE_ONLY = ("import sys, libcst\n"
               "for p in sys.argv[1:]:\n"
               "    libcst.parse_module(open(p, 'rb').read())\n")


def best_wall(cmd, repeat, cwd=None, env=None):
    """The best wall time of ``repeat`` runs of ``cmd`` (a quiet moment's figure)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(cmd, cwd=cwd, env=env or _ENV, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        best = min(best, time.perf_counter() - start)
    return best


def in_process(files, jobs=1):
    """shardcheck in this process (no budgets: no worker processes), no cache."""
    config = Config(timeout_per_file=0, memory_per_file=0)
    return timed(lambda: runner.run(files, config, jobs=jobs))


def interleaved(files):
    """(floor, shardcheck in this process, its result) over ``files`` from one pass, file
    by file: just before each file's check, that file's floor is timed, and taken out of
    the run's time. A busy minute of a shared machine then weighs on both alike; timed
    one after the other, two passes of the floor alone differed by up to 40% here. A
    file the run never analyses (the pre-check clears it) has its floor timed after."""
    from shardcheck.check import supervisor
    real, seen, spent = supervisor.check_one, set(), [0.0]

    def check_one(path, data=None):
        seen.add(path)
        spent[0] += floor([path])
        return real(path, data)

    supervisor.check_one = check_one
    try:
        total, res = in_process(files)
    finally:
        supervisor.check_one = real
    return spent[0] + floor([f for f in files if f not in seen]), total - spent[0], res


def measure(tree, jobs, sample):
    work = tempfile.mkdtemp(prefix="shardcheck-speed-")
    try:
        root = os.path.join(work, "tree")
        shutil.copytree(tree, root, symlinks=True, ignore=shutil.ignore_patterns(".git"))
        return _measure(root, work, jobs, sample)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _measure(root, work, jobs, sample):
    files, _ = discover([root], Config(root=root))
    files = files[::sample]
    texts = {}
    for f in files:
        with open(f, "rb") as fh:
            texts[f] = fh.read().decode("utf-8", errors="replace")
    sharding = [f for f in files if spells_sharding_api(texts[f])]
    rest = [f for f in files if f not in set(sharding)]
    out = {"machine": f"{platform.machine()}, {os.cpu_count()} cores, Python "
                      f"{platform.python_version()}, load {os.getloadavg()[0]:.1f} at start",
           "files": len(files), "sharding_files": len(sharding),
           "lines": sum(t.count("\n") for t in texts.values()),
           "sharding_lines": sum(texts[f].count("\n") for f in sharding)}
    out["startup_s"] = best_wall(SHARDCHECK + ["--version"], 10)
    out["bare_python_s"] = best_wall([sys.executable, "-c", "pass"], 10)
    out["floor_s"], out["single_s"], res = interleaved(sharding)
    out["findings"] = len(res.findings)
    # the whole tree in one run (its files share the modules they import, as a run over
    # the tree does), beside the sharding files alone: each the best of two, alternated
    wholes, alones = [], []
    for _ in range(2):
        wholes.append(in_process(files)[0])
        alones.append(in_process(sharding)[0])
    out["whole_s"], out["sharding_alone_s"] = min(wholes), min(alones)
    out["parallel_s"] = _pool_in_own_process(sharding, jobs)
    cache = os.path.join(work, "cache")
    cli = SHARDCHECK + ["check", "--exit-zero", "-j", str(jobs), "--cache-dir", cache]
    out["cold_cache_s"] = best_wall(cli + files, 1)
    out["warm_cache_s"] = best_wall(cli + files, 3)
    # the edits append a comment line: to Python files (a notebook would stop being JSON)
    py_sharding = [f for f in sharding if f.endswith(".py")]
    edited = py_sharding[:: max(1, len(py_sharding) // 5)][:5]
    for f in edited:
        with open(f, "a", encoding="utf-8") as fh:
            fh.write("\n# edited\n")
    out["precommit_files"] = len(edited)
    out["precommit_s"] = best_wall(cli + edited, 1)  # pre-commit names the staged files
    out["precommit_warm_s"] = best_wall(cli + edited, 2)  # the same again: all cached
    # what any libcst-based checker pays for those files: a fresh Python importing libcst
    # and parsing them (no analysis at all)
    out["precommit_floor_s"] = best_wall([sys.executable, "-c", _PARSE_ONLY] + edited, 2)
    # a code edit: a statement added to the first function of each, so each importer that
    # reads that function is analysed again (a comment, or a new function, leaves their
    # results to the cache: what they read of the file is unchanged)
    out["precommit_code_files"] = sum(_edit_first_function(f) for f in edited)
    out["precommit_code_s"], said = _wall_and_stderr(cli + ["-v"] + edited)
    out["precommit_code_importers"] = next(
        (x for x in said.splitlines() if x.startswith("checked ")), "")
    py_rest = [f for f in rest if f.endswith(".py")]
    plain = py_rest[:: max(1, len(py_rest) // 5)][:5]  # edited files that use no sharding API
    for f in plain:
        with open(f, "a", encoding="utf-8") as fh:
            fh.write("\n# edited\n")
    out["precommit_plain_files"] = len(plain)
    out["precommit_plain_s"] = best_wall(cli + plain, 1) if plain else 0.0
    _precommit_daemon(out, cli, edited, plain, work)
    out["load_at_end"] = round(os.getloadavg()[0], 1)
    out["ratio_single_to_floor"] = out["single_s"] / out["floor_s"]
    out["ratio_corpus_to_sharding"] = out["whole_s"] / out["sharding_alone_s"]
    out["ratio_parallel_to_ideal"] = out["parallel_s"] / (out["single_s"] / jobs + out["startup_s"])
    out["ratio_warm_to_cold"] = out["warm_cache_s"] / out["cold_cache_s"]
    return {k: round(v, 3) if isinstance(v, float) else v for k, v in out.items()}


_POOL_TIMED = ("import sys, time\n"
               "from shardcheck.check import runner\n"
               "from shardcheck.analyzer.config import Config\n"
               "jobs, files = int(sys.argv[1]), sys.argv[2:]\n"
               "start = time.perf_counter()\n"
               "runner.run(files, Config(), jobs=jobs)\n"
               "print(time.perf_counter() - start)\n")


def _pool_in_own_process(files, jobs):
    """``runner.run(files, jobs=jobs)`` timed in a fresh process (its imports not
    counted): this one's heap, grown by the runs before, would slow the workers it forks
    (a -j 2 run here took 3.0x the ideal; the same in a fresh process, 1.07x)."""
    r = subprocess.run([sys.executable, "-c", _POOL_TIMED, str(jobs)] + list(files), env=_ENV,
                       capture_output=True, text=True, check=True)
    return float(r.stdout.strip().splitlines()[-1])


_PARSE_TIMED = ("import sys, time, libcst\n"
                "data = [open(p, 'rb').read() for p in sys.argv[1:]]\n"
                "start = time.perf_counter()\n"
                "for d in data:\n"
                "    libcst.parse_module(d)\n"
                "print(time.perf_counter() - start)\n")


def _edit_first_function(path):
    """Add a statement at the top of the first top-level function of ``path`` (1), or
    nothing where it has none (0)."""
    import ast
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return 0
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            lines = text.splitlines(True)
            lines.insert(first.lineno - 1, " " * first.col_offset + "_edited = 1\n")
            with open(path, "w", encoding="utf-8") as fh:
                fh.write("".join(lines))
            return 1
    return 0


def _wall_and_stderr(cmd):
    """(the wall time of one run of ``cmd``, what it wrote on stderr)."""
    start = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                       env=_ENV)
    return time.perf_counter() - start, r.stderr


def _parse_only(files):
    """libcst's parse of ``files`` in a fresh process that has imported it (this one's
    heap, grown by the runs above, would slow its garbage collector)."""
    best = float("inf")
    for _ in range(2):
        r = subprocess.run([sys.executable, "-c", _PARSE_TIMED] + files, env=_ENV,
                           capture_output=True, text=True, check=True)
        best = min(best, float(r.stdout))
    return best


def _precommit_daemon(out, cli, edited, plain, work):
    """The pre-commit case again with ``--daemon`` (a warm process serves the run), each
    edited file edited once more so that it misses the cache; beside it, libcst's parse of
    those files in a process that has imported it already."""
    env = dict(_ENV, SHARDCHECK_DAEMON_DIR=os.path.join(work, "daemon"))
    subprocess.run(SHARDCHECK + ["daemon", "start"], env=env, stdout=subprocess.DEVNULL,
                   check=True)
    try:
        for key, group in (("precommit_daemon_s", edited), ("precommit_daemon_plain_s", plain)):
            for f in group:
                with open(f, "a", encoding="utf-8") as fh:
                    fh.write("\n# edited again\n")
            out[key] = best_wall(cli + ["--daemon"] + group, 1, env=env) if group else 0.0
        out["precommit_daemon_warm_s"] = best_wall(cli + ["--daemon"] + edited, 2, env=env)
    finally:
        subprocess.run(SHARDCHECK + ["daemon", "stop"], env=env, stdout=subprocess.DEVNULL)
    out["precommit_parse_s"] = _parse_only(edited)


def report(out, jobs):
    print(f"{out['files']} files ({out['lines']} lines), {out['sharding_files']} of them use "
          f"sharding APIs ({out['sharding_lines']} lines); {out['findings']} findings")
    print(f"machine: {out['machine']}, {out['load_at_end']} at end")
    rows = [
        ("startup: shardcheck --version", out["startup_s"],
         f"bare python {out['bare_python_s']:.3f} s (target < 0.15 s)"),
        ("floor: libcst parse + visit", out["floor_s"], "sharding files"),
        ("shardcheck, 1 process", out["single_s"],
         f"{out['ratio_single_to_floor']:.2f}x floor (target <= 1.3)"),
        ("whole tree, 1 process", out["whole_s"],
         f"{out['ratio_corpus_to_sharding']:.2f}x the sharding files alone "
         f"({out['sharding_alone_s']:.3f} s; best of 2 each) (target <= 1.2)"),
        (f"shardcheck -j {jobs}", out["parallel_s"],
         f"{out['ratio_parallel_to_ideal']:.2f}x single/{jobs} + startup (target <= 1.2)"),
        ("CLI, filling the cache", out["cold_cache_s"], "whole tree"),
        ("CLI, all cached", out["warm_cache_s"],
         f"{100 * out['ratio_warm_to_cold']:.1f}% of the first run"),
        (f"pre-commit: {out['precommit_files']} edited files", out["precommit_s"],
         f"again, cached: {out['precommit_warm_s']:.3f} s (target < 0.5 s); "
         f"libcst import + parse alone {out['precommit_floor_s']:.3f} s"),
        (f"pre-commit: {out['precommit_code_files']} edited in a function", out["precommit_code_s"],
         f"importers: {out['precommit_code_importers']}"),
        (f"pre-commit: {out['precommit_plain_files']} edited, no sharding API",
         out["precommit_plain_s"], "(target < 0.5 s)"),
        (f"pre-commit --daemon: {out['precommit_files']} edited", out["precommit_daemon_s"],
         f"again, cached: {out['precommit_daemon_warm_s']:.3f} s (target < 0.5 s); "
         f"their parse alone, libcst imported {out['precommit_parse_s']:.3f} s"),
        (f"pre-commit --daemon: {out['precommit_plain_files']} edited, no sharding API",
         out["precommit_daemon_plain_s"], "(target < 0.5 s)"),
    ]
    for name, seconds, note in rows:
        print(f"{name:34s} {seconds:8.3f} s   {note}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path", nargs="?", default=os.path.join(os.path.dirname(__file__), "..", "examples"))
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--sample", type=int, default=1, help="check every K-th file only")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    out = measure(os.path.abspath(args.path), args.jobs, max(1, args.sample))
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        report(out, args.jobs)


if __name__ == "__main__":
    sys.exit(main())
