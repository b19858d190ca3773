"""Run code snippets under real JAX on 8 CPU devices and report how each ended.

One worker process imports JAX once (without starting a backend), then forks a child per
snippet, so each snippet starts fresh (no mesh set, no compiled state) at little cost.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from typing import Dict, List

_WORKER = textwrap.dedent(r'''
    import json, os, sys, traceback, warnings
    os.environ["JAX_PLATFORMS"] = "cpu"
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
    import jax  # imported once; the backend starts in each child
    jobs = json.load(sys.stdin)
    results = []
    for job in jobs:
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            out = {"status": "ok", "error": "", "type": "", "result": None}
            ns = {"__name__": "__main__"}
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("error", DeprecationWarning)
                    exec(compile(job["code"], "<snippet>", "exec"), ns)
                out["result"] = ns.get("RESULT")  # a snippet may report JSON-able facts
            except BaseException as e:
                kind = "deprecation" if isinstance(e, DeprecationWarning) else "error"
                out = {"status": kind, "error": str(e)[:2000], "type": type(e).__name__}
            os.write(w, json.dumps(out).encode())
            os.close(w)
            os._exit(0)
        os.close(w)
        data = b""
        while True:
            chunk = os.read(r, 65536)
            if not chunk:
                break
            data += chunk
        os.close(r)
        os.waitpid(pid, 0)
        results.append(json.loads(data) if data else {"status": "crash", "error": "", "type": ""})
    json.dump(results, sys.stdout)
''')


def run_snippets(codes: List[str]) -> List[Dict[str, str]]:
    """status per snippet: ok | error | deprecation | crash, with the exception text, and
    ``result``: the snippet's global RESULT when it ran to the end."""
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    r = subprocess.run([sys.executable, "-c", _WORKER], input=json.dumps([{"code": c} for c in codes]),
                       capture_output=True, text=True, env=env, timeout=600)
    if r.returncode != 0:
        raise RuntimeError(f"snippet worker failed:\n{r.stderr[-4000:]}")
    return json.loads(r.stdout)
