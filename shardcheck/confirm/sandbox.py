"""How ``shardcheck confirm`` runs one program: as a test runner would, on devices it chose.

Each program runs in a fresh interpreter (the recording driver of ``shardcheck.confirm``)
in its own temporary working directory (its files land there, not in the user's cwd),
with its own directory on ``sys.path`` (and ``PYTHONPATH``'s entries, a relative one
read from the user's working directory, as ``python PROGRAM`` there reads it), stdin
closed and its own process group. Its
stdout and stderr go to files, and the driver writes its results to a third file the
program never sees: a program that prints without a final newline, replaces
``sys.stdout`` or leaves a background child holding stdout cannot hide or stall them.
Past the timeout the whole process group is killed and the program reported as timed
out; when it ends, whatever it left running in its group is killed too.

Devices are chosen like a user would (``choose_devices``): the meshes the source
states need so many devices; the accelerator JAX finds runs the program when it has
that many, else that many virtual CPU devices do, and the header says so.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Dict, Optional, Sequence

DEFAULT_TIMEOUT = 300.0  # seconds a program may run (``--timeout``, ``confirm-timeout``)
DEFAULT_CPU_DEVICES = 8  # virtual CPU devices when the source states no larger mesh
ACCELERATORS = ("tpu", "gpu")  # preferred in this order when JAX finds several
# jaxlib alone runs on the CPU; an accelerator comes with one of these distributions
_PLUGINS = ("jax-cuda12-plugin", "jax-cuda13-plugin", "jax-cuda12-pjrt", "jax-cuda13-pjrt",
            "jax-rocm60-plugin", "jax-rocm7-plugin", "libtpu", "libtpu-nightly", "jax-metal")


class UsageError(Exception):
    """A ``--platform`` or ``--devices`` this machine cannot honour (exit status 2)."""


@dataclass(frozen=True)
class Platform:
    """A backend JAX finds on this machine: ``cpu``, ``gpu`` or ``tpu``."""

    name: str
    kind: str  # the device kind, as ``jax.devices()[0].device_kind`` says
    count: int  # devices (for the CPU: virtual, as many as asked)


@dataclass(frozen=True)
class DevicePlan:
    """Where one program runs: ``platform`` (JAX_PLATFORMS), ``devices`` it will see
    (the virtual CPU count, or the accelerator's), and ``note`` for the header."""

    platform: str
    devices: int
    needs: Optional[int] = None  # the devices the meshes the source states need
    note: str = ""


@dataclass
class Outcome:
    """What running one program gave: the driver's results (None when it wrote none),
    the process's exit status, whether it timed out, and the tail of its stderr."""

    results: Optional[dict]
    status: Optional[int]  # None when killed at the timeout
    timed_out: bool
    seconds: float
    stderr_tail: str
    disk_full: bool = False  # the sandbox's disk had no space left when it ended


def _has_accelerator_plugin() -> bool:
    from importlib import metadata
    for name in _PLUGINS:
        try:
            metadata.version(name)
            return True
        except metadata.PackageNotFoundError:
            continue
    return False


_PROBE = r"""
import json, jax
found = {}
for name in ("tpu", "gpu"):
    try:
        ds = jax.devices(name)
    except RuntimeError:
        continue
    if ds:
        found[name] = {"kind": ds[0].device_kind, "count": len(ds)}
print(json.dumps(found))
"""


def platforms(timeout: float = 120.0) -> Dict[str, Platform]:
    """The backends JAX finds here. The CPU is always one; an accelerator is looked for
    (in a subprocess: shardcheck itself never starts JAX) only when a JAX plugin for one
    is installed and ``JAX_PLATFORMS`` does not pin the CPU."""
    found = {"cpu": Platform("cpu", "cpu", 0)}
    pinned = os.environ.get("JAX_PLATFORMS", "").strip().lower()
    if pinned == "cpu" or not _has_accelerator_plugin():
        return found
    try:
        proc = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL)
        seen = json.loads(proc.stdout.strip().splitlines()[-1]) if proc.returncode == 0 else {}
    except (subprocess.TimeoutExpired, ValueError, IndexError):
        seen = {}
    for name, d in seen.items():
        found[name] = Platform(name, str(d["kind"]), int(d["count"]))
    return found


def check_options(found: Dict[str, Platform], platform: Optional[str],
                  devices: Optional[int]) -> None:
    """Refuse (``UsageError``) a ``--platform``/``--devices`` this machine cannot honour."""
    if devices is not None and devices < 1:
        raise UsageError("--devices must be at least 1")
    if platform is None or platform == "cpu":
        return
    have = ", ".join(sorted(found))
    if platform not in found:
        raise UsageError(f"--platform {platform}: JAX finds no {platform} on this machine "
                         f"(it finds: {have}); drop --platform, or use --platform cpu")
    count = found[platform].count
    if devices is not None and devices != count:
        raise UsageError(f"--devices {devices}: the {platform} has {count} device"
                         f"{'s' if count != 1 else ''} and JAX cannot make more or fewer; "
                         f"drop --devices, or use --platform cpu --devices {devices} for "
                         f"{devices} virtual CPU devices")


def choose_devices(found: Dict[str, Platform], needs: Optional[int],
                   platform: Optional[str] = None, devices: Optional[int] = None) -> DevicePlan:
    """Where a program whose meshes need ``needs`` devices (None: the source does not
    say) runs, given the options (already checked by ``check_options``)."""
    accel = next((found[a] for a in ACCELERATORS if a in found), None)
    if platform is not None and platform != "cpu":
        p = found[platform]
        short = needs is not None and needs > p.count
        return DevicePlan(platform, p.count, needs, f"needs {needs} devices; forced onto "
                          f"{p.count} {platform}" if short else "")
    cpu_count = devices or max(DEFAULT_CPU_DEVICES, needs or 0)
    if platform == "cpu" or accel is None:
        return DevicePlan("cpu", cpu_count, needs)
    if devices is not None:  # a count the accelerator has runs there, another on the CPU
        if devices == accel.count:
            return DevicePlan(accel.name, accel.count, needs)
        return DevicePlan("cpu", devices, needs, f"--devices {devices}: this machine has "
                          f"{accel.count} {accel.name}: ran on {devices} cpu devices")
    if needs is None or needs <= accel.count:
        return DevicePlan(accel.name, accel.count, needs)
    return DevicePlan("cpu", cpu_count, needs, f"needs {needs} devices; this machine has "
                      f"{accel.count} {accel.name}: ran on {cpu_count} cpu devices; "
                      f"`--platform {accel.name}` to force")


def mesh_devices(source: bytes, path: str, config=None, project=None) -> Optional[int]:
    """The devices the largest mesh the source states needs (its sizes as written, not
    a mesh declared in the config); None when no mesh with known sizes is made."""
    from shardcheck.analyzer.config import Config
    from shardcheck.analyzer.deep import degrading_deep_statements
    from shardcheck.analyzer.engine import analyze
    from shardcheck.analyzer.project import module_name_for
    from shardcheck.analyzer.sources import decode_source, parse_source
    cfg = dataclasses.replace(config or Config(), meshes=(), default_mesh=None,
                              scale_mesh=None, _codes=None)

    def largest(text: str) -> Optional[int]:
        model = analyze(parse_source(text, path), module_name_for(path), cfg, project)
        sizes = [m.mesh.sizes for m in model.events.meshes if m.mesh.sizes is not None]
        known = [_product(s) for s in sizes if None not in s]
        return max(known) if known else None
    try:
        return degrading_deep_statements(largest, decode_source(source))
    except Exception:  # noqa: BLE001  (no analysis: the source states nothing usable)
        return None


def _product(sizes) -> int:
    out = 1
    for s in sizes:
        out *= int(s)
    return out


def _stop_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_sandboxed(code: str, env: Dict[str, str], timeout: Optional[float],
                  workdir: str, result_path: str, argv: Sequence[str] = ()) -> Outcome:
    """Run ``python -c code`` in ``workdir`` with stdin closed, in its own process group;
    the driver's results are read from ``result_path``. ``timeout`` None or 0: no limit."""
    out_path = os.path.join(os.path.dirname(result_path), "output")
    started = time.monotonic()
    with open(out_path, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-c", code, *argv], cwd=workdir, env=env,
                                stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                start_new_session=True)
        timed_out = False
        try:
            status: Optional[int] = proc.wait(timeout=timeout or None)
        except subprocess.TimeoutExpired:
            timed_out, status = True, None
        finally:
            _stop_group(proc.pid)  # the program's children: a test runner stops them too
            proc.wait()
    seconds = time.monotonic() - started
    results = None
    try:
        with open(result_path, encoding="utf-8") as fh:
            results = json.load(fh)
    except (OSError, ValueError):
        pass
    full = results is None and not timed_out and disk_full(workdir)
    return Outcome(results, status, timed_out, seconds, _tail(out_path), full)


def disk_full(path: str) -> bool:
    """The file system of ``path`` has (almost) no space left for an ordinary user."""
    try:
        st = os.statvfs(path)
    except (OSError, AttributeError):
        return False
    return st.f_bavail * st.f_frsize < 64 * 2**10


NO_SPACE = "No space left on device"


def out_of_space(where: str) -> dict:
    """The error of a program that ended because the disk was full."""
    return {"type": "DiskFull", "message": f"ran out of disk space ({NO_SPACE}) in {where}: "
            "free space there, or point TMPDIR at a larger disk", "line": None, "trace": []}


def _tail(path: str, limit: int = 4000) -> str:
    try:
        with open(path, "rb") as fh:
            fh.seek(max(0, os.path.getsize(path) - limit))
            return fh.read().decode("utf-8", "replace")
    except OSError:
        return ""


def program_env(plan: DevicePlan, dump_flags: Optional[str]) -> Dict[str, str]:
    """The environment a program runs in: the user's, on the chosen platform, with the
    user's XLA flags but shardcheck's device count and dump flags."""
    env = dict(os.environ)
    flags = [f for f in env.pop("XLA_FLAGS", "").split()
             if not f.startswith(("--xla_force_host_platform_device_count", "--xla_dump"))]
    if dump_flags:
        flags.append(dump_flags)
    if flags:
        env["XLA_FLAGS"] = " ".join(flags)
    if env.get("PYTHONPATH"):
        # Python makes these absolute against its working directory, the sandbox's:
        # `PYTHONPATH=src` means the user's src/, as `python PROGRAM` run here would read it
        env["PYTHONPATH"] = os.pathsep.join(os.path.abspath(p)
                                            for p in env["PYTHONPATH"].split(os.pathsep))
    if plan.platform == "cpu":
        env["JAX_PLATFORMS"] = "cpu"
    # an accelerator is JAX's own default where one is found (and JAX_PLATFORMS=gpu
    # would also demand ROCm on a CUDA machine: "gpu" stands for both)
    env.pop("PYTHONSTARTUP", None)
    return env


class Sandbox:
    """A temporary directory per program: ``cwd`` (the program's working directory), its
    output and the driver's results file; removed on exit."""

    def __enter__(self) -> "Sandbox":
        self.root = tempfile.mkdtemp(prefix="shardcheck-confirm-")
        self.cwd = os.path.join(self.root, "cwd")
        self.result = os.path.join(self.root, "result.json")
        os.mkdir(self.cwd)
        return self

    def __exit__(self, *exc) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def failure(outcome: Outcome, timeout: Optional[float]) -> Optional[dict]:
    """The error of a run whose driver wrote no results, or that ran out of time."""
    if outcome.timed_out:
        return {"type": "Timeout", "message": f"timed out after {_secs(timeout)} s",
                "line": None, "trace": []}
    if outcome.results is not None:
        return None
    if outcome.disk_full or NO_SPACE in outcome.stderr_tail:
        return out_of_space(tempfile.gettempdir())
    status = outcome.status
    if status is not None and status < 0:
        try:
            name = signal.Signals(-status).name
        except ValueError:
            name = f"signal {-status}"
        return {"type": "Killed", "message": f"the program was killed by {name}",
                "line": None, "trace": []}
    last = [ln for ln in outcome.stderr_tail.strip().splitlines() if ln.strip()][-1:]
    return {"type": "RunFailed", "message": f"exited with status {status} and no results"
            + (f": {last[0]}" if last else ""), "line": None, "trace": []}


def _secs(t: Optional[float]) -> str:
    return f"{t:g}" if t is not None else "?"


def device_shortage(error: Optional[dict]) -> bool:
    """JAX's error when a mesh needs more devices than there are (make_mesh), or other
    than there are (create_device_mesh)."""
    msg = (error or {}).get("message", "")
    return msg.startswith("Number of devices ") and "the product of mesh_shape" in msg


def shorten(text: str, width: int = 200) -> str:
    """``text`` within ``width`` characters, cut between words with an ellipsis."""
    if len(text) <= width:
        return text
    cut = text[:width - 1]
    space = cut.rfind(" ")
    if space > width // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:") + "…"


def quiet_progress() -> bool:
    """No progress when stderr is not a terminal, or in CI."""
    return not sys.stderr.isatty() or bool(os.environ.get("CI")) or os.environ.get("TERM") == "dumb"


def progress_line(done: int, total: int, path: str, verdict: str, seconds: float) -> str:
    width = 20
    filled = width * done // max(total, 1)
    return (f"[{'#' * filled}{'.' * (width - filled)}] {done}/{total}  {path}: {verdict} "
            f"({seconds:.1f} s)")


def cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1
