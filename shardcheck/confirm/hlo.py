"""Collectives in compiled HLO text: what ``shardcheck confirm`` reports per jitted function.

XLA's SPMD partitioner turns a sharded program into one per-device program plus the
collectives that move data between devices. After optimisation, the HLO text holds
each collective with its per-device result shape, its device groups, and metadata
naming the JAX op and source line that caused it. This module reads that text; it
imports neither JAX nor XLA, so it is tested on HLO strings directly.

Bytes are a per-device, per-call cost model (the standard ring algorithms), with
``B`` the per-device result size and ``n`` the group size:

=====================  ===========================
all-reduce             2 (n-1)/n * B
all-gather             (n-1)/n * B   (B gathered)
reduce-scatter         (n-1) * B     (B scattered)
all-to-all             (n-1)/n * B
collective-permute     B
=====================  ===========================

A collective inside a loop body is counted once, not once per iteration.
"""

from __future__ import annotations

import itertools
import math
import os
import re
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from sharding_types import MeshModel

KINDS = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute")

_ELEMENT_BITS = {"pred": 8, "s4": 4, "u4": 4, "s8": 8, "u8": 8, "s16": 16, "u16": 16,
                 "f16": 16, "bf16": 16, "s32": 32, "u32": 32, "f32": 32, "s64": 64, "u64": 64,
                 "f64": 64, "c64": 64, "c128": 128}
_INSTR = re.compile(r"^\s*(?:ROOT\s+)?%?(?P<name>[\w.\-]+)\s*=\s*(?P<shape>.+?)\s+"
                    r"(?P<op>" + "|".join(KINDS) + r")(?P<start>-start)?\(")
_ARRAY = re.compile(r"\b([a-z]\w*?)\[([\d,]*)\]")
_GROUPS_LIST = re.compile(r"replica_groups=\{((?:\{[\d,\s]*\},?\s*)*)\}")
_GROUPS_IOTA = re.compile(r"replica_groups=\[([\d,]+)\]<=\[([\d,]+)\](?:T\(([\d,]+)\))?")
_GROUPS_MESH = re.compile(r"replica_groups=mesh\[([^\]]*)\]\s*\{([^}]*)\}")
_MESH_AXIS = re.compile(r"'(\w+)'=(\d+)")
_PAIRS = re.compile(r"source_target_pairs=\{((?:\{\d+,\d+\},?)*)\}")
_META = re.compile(r"metadata=\{([^}]*)\}")
_SDY_MESH = re.compile(r"#sdy\.mesh<\[([^\]]*)\]")
_SDY_AXIS = re.compile(r"\\?\"(\w+)\\?\"=(\d+)")


@dataclass(frozen=True)
class Collective:
    kind: str
    shape: str  # the per-device result, as HLO writes it
    groups: Tuple[Tuple[int, ...], ...]  # device groups (source-target pairs for a permute)
    result_bytes: int
    bytes: int  # per device, per call (the cost model above)
    op_name: str = ""  # the JAX op it came from, e.g. "jit(mlp)/dot_general"
    file: str = ""
    line: Optional[int] = None
    function: str = ""
    axes: Optional[Tuple[str, ...]] = None  # the mesh axes it runs over, when known

    @property
    def short_shape(self) -> str:
        """The shape without layouts: ``f32[8,64]``."""
        return re.sub(r"\{[\d,]*\}", "", self.shape)

    @property
    def op(self) -> str:
        """The JAX op(s) it came from: ``dot_general``, or ``reduce_sum+dot_general`` for
        a combined collective."""
        name = re.sub(r"^jit\([^)]*\)/", "", self.op_name)
        if name.startswith("(") and name.endswith(")"):
            parts = name[1:-1].split(":")
        else:
            parts = [name]
        ops: List[str] = []
        for p in parts:
            leaf = p.rsplit("/", 1)[-1]
            if leaf and leaf not in ops:
                ops.append(leaf)
        return "+".join(ops)

    @property
    def group_size(self) -> int:
        return max((len(g) for g in self.groups), default=1) if self.kind != "collective-permute" else 2


@dataclass
class HloModule:
    name: str  # e.g. "jit_mlp"
    num_partitions: int
    collectives: List[Collective] = field(default_factory=list)
    mesh: Optional[MeshModel] = None  # names and sizes; HLO does not record axis types

    @property
    def function(self) -> str:
        return self.name[4:] if self.name.startswith("jit_") else self.name

    @property
    def bytes(self) -> int:
        return sum(c.bytes for c in self.collectives)


def array_bytes(shape: str) -> int:
    """Bytes of every array in an HLO shape (a tuple sums its elements)."""
    total = 0
    for dtype, dims in _ARRAY.findall(shape):
        bits = _ELEMENT_BITS.get(dtype)
        if bits is None:
            continue
        n = math.prod(int(d) for d in dims.split(",") if d) if dims else 1
        total += (n * bits + 7) // 8
    return total


def _largest(shape: str) -> int:
    sizes = [array_bytes(f"{d}[{s}]") for d, s in _ARRAY.findall(shape)]
    return max(sizes, default=0)


def iota_groups(group_shape: Sequence[int], dims: Sequence[int],
                perm: Optional[Sequence[int]] = None) -> Tuple[Tuple[int, ...], ...]:
    """XLA's iota replica groups ``[G,S]<=[dims]T(perm)``: ``arange(prod(dims))``
    reshaped to ``dims``, transposed by ``perm``, flattened, cut into G groups of S."""
    perm = list(perm) if perm else list(range(len(dims)))
    tdims = [dims[p] for p in perm]
    strides = [math.prod(dims[i + 1:]) for i in range(len(dims))]
    flat = [sum(idx[k] * strides[perm[k]] for k in range(len(perm)))
            for idx in itertools.product(*(range(d) for d in tdims))]
    size = group_shape[-1] if group_shape else len(flat)
    return tuple(tuple(flat[i:i + size]) for i in range(0, len(flat), size))


def _mesh(axes: Iterable[Tuple[str, str]]) -> Optional[MeshModel]:
    """A mesh from ``(name, size)`` pairs read out of HLO text; None if they are not one."""
    pairs = [(a, int(s)) for a, s in axes]
    try:
        return MeshModel(tuple(a for a, _ in pairs), tuple(s for _, s in pairs)) if pairs else None
    except ValueError:  # an axis named twice
        return None


def groups_for(mesh: MeshModel, axes: Sequence[str]) -> Tuple[Tuple[int, ...], ...]:
    """The device groups of a collective over ``axes`` of ``mesh`` (devices in mesh order)."""
    names, sizes = list(mesh.axis_names), list(mesh.axis_sizes)
    strides = [math.prod(sizes[i + 1:]) for i in range(len(sizes))]
    inner = [k for k in range(len(sizes)) if names[k] in axes]
    outer = [k for k in range(len(sizes)) if names[k] not in axes]
    out = []
    for o in itertools.product(*(range(sizes[k]) for k in outer)):
        base = sum(i * strides[k] for i, k in zip(o, outer))
        out.append(tuple(base + sum(i * strides[k] for i, k in zip(v, inner))
                         for v in itertools.product(*(range(sizes[k]) for k in inner))))
    return tuple(out)


def _mesh_groups(line: str) -> Optional[Tuple[MeshModel, Tuple[str, ...]]]:
    """``replica_groups=mesh['data'=2,'model'=4] {'model'}`` (newer XLA): mesh and axes."""
    m = _GROUPS_MESH.search(line)
    if not m:
        return None
    mesh = _mesh(_MESH_AXIS.findall(m.group(1)))
    axes = tuple(re.findall(r"'(\w+)'(?!:)", m.group(2)))
    if mesh is None or ":" in m.group(2) or any(a not in mesh for a in axes):
        return None  # sub-axes ('x':(1)2) are not modelled
    return mesh, axes


def _groups(line: str, num_partitions: int) -> Tuple[Tuple[int, ...], ...]:
    mg = _mesh_groups(line)
    if mg is not None:
        return groups_for(*mg)
    m = _PAIRS.search(line)
    if m:
        return tuple(tuple(int(x) for x in p.split(",")) for p in re.findall(r"\{(\d+,\d+)\}", m.group(1)))
    m = _GROUPS_IOTA.search(line)
    if m:
        perm = [int(x) for x in m.group(3).split(",")] if m.group(3) else None
        return iota_groups([int(x) for x in m.group(1).split(",")],
                           [int(x) for x in m.group(2).split(",")], perm)
    m = _GROUPS_LIST.search(line)
    if m:
        groups = tuple(tuple(int(x) for x in g.split(",") if x.strip())
                       for g in re.findall(r"\{([\d,\s]*)\}", m.group(1)))
        groups = tuple(g for g in groups if g)
        if groups:
            return groups
    return (tuple(range(num_partitions)),)  # no groups: every device


def _cost(kind: str, result: int, n: int) -> int:
    if n <= 1:
        return 0
    if kind == "all-reduce":
        return 2 * (n - 1) * result // n
    if kind == "reduce-scatter":
        return (n - 1) * result
    if kind == "collective-permute":
        return result
    return (n - 1) * result // n  # all-gather, all-to-all


def _tables(text: str) -> Dict[str, Dict[int, Dict[str, str]]]:
    """The FileNames / FunctionNames / FileLocations / StackFrames tables at the top of
    an HLO module printed with stack frames (JAX 0.10+)."""
    tables: Dict[str, Dict[int, Dict[str, str]]] = {}
    current: Optional[str] = None
    for line in text.splitlines()[:5000]:
        s = line.strip()
        if s in ("FileNames", "FunctionNames", "FileLocations", "StackFrames"):
            current = s
            tables[s] = {}
            continue
        if current is None:
            continue
        m = re.match(r"(\d+)\s+(.*)$", s)
        if not m:
            if s.startswith("%") or s.startswith("ENTRY") or s.startswith("HloModule"):
                break
            current = None if not s else current
            continue
        idx, rest = int(m.group(1)), m.group(2)
        if rest.startswith('"'):
            tables[current][idx] = {"value": rest.strip('"')}
        else:
            tables[current][idx] = dict(re.findall(r"(\w+)=(\d+)", rest))
    return tables


def _source(meta: str, tables: dict, prefer: Optional[str]) -> Tuple[str, Optional[int], str]:
    m = re.search(r'source_file="([^"]*)"\s+source_line=(\d+)', meta)
    if m:
        return m.group(1), int(m.group(2)), ""
    m = re.search(r"stack_frame_id=(\d+)", meta)
    if not m or "StackFrames" not in tables:
        return "", None, ""
    frames, locs = tables.get("StackFrames", {}), tables.get("FileLocations", {})
    files, funcs = tables.get("FileNames", {}), tables.get("FunctionNames", {})
    chain: List[Tuple[str, Optional[int], str]] = []
    fid, seen = int(m.group(1)), set()
    while fid in frames and fid not in seen:
        seen.add(fid)
        loc = locs.get(int(frames[fid].get("file_location_id", 0)), {})
        chain.append((files.get(int(loc.get("file_name_id", 0)), {}).get("value", ""),
                      int(loc["line"]) if "line" in loc else None,
                      funcs.get(int(loc.get("function_name_id", 0)), {}).get("value", "")))
        parent = int(frames[fid].get("parent_frame_id", 0))
        if parent == fid:
            break
        fid = parent
    if not chain:
        return "", None, ""
    if prefer:
        for f in chain:
            if f[0] and os.path.abspath(f[0]) == os.path.abspath(prefer):
                return f
    return chain[0]


_HLO_MESH = re.compile(r"\bmesh\[((?:'\w+'=\d+,?)+)\]")


def mesh_of(text: str, num_partitions: Optional[int] = None) -> Optional[MeshModel]:
    """The mesh JAX records in a module (before optimisation): axis names and sizes;
    with several, the one with ``num_partitions`` devices if it is unique. JAX 0.10
    writes ``#sdy.mesh<["data"=2, "model"=4]>``, newer XLA ``mesh['data'=2,'model'=4]``."""
    meshes: List[MeshModel] = []
    found = [_mesh(_SDY_AXIS.findall(m.group(1))) for m in _SDY_MESH.finditer(text)]
    found += [_mesh(_MESH_AXIS.findall(m.group(1))) for m in _HLO_MESH.finditer(text)]
    for mesh in found:
        if mesh is not None and mesh not in meshes and not all(
                re.fullmatch(r"axis_\d+", a) for a in mesh.axis_names):
            meshes.append(mesh)
    if num_partitions is not None:
        meshes = [m for m in meshes if m.size == num_partitions]
    return meshes[0] if len(meshes) == 1 else None


def axes_of(groups: Sequence[Sequence[int]], mesh: MeshModel,
            permute: bool = False) -> Optional[Tuple[str, ...]]:
    """The mesh axes a collective's device groups span (device ``i`` sits at flat
    position ``i`` of the mesh, as in the executable's device assignment)."""
    names, sizes = list(mesh.axis_names), list(mesh.axis_sizes)
    total = mesh.size

    def pos(i: int) -> Tuple[int, ...]:
        out = []
        for s in reversed(sizes):
            out.append(i % s)
            i //= s
        return tuple(reversed(out))
    varying: set = set()
    for g in groups:
        if any(i < 0 or i >= total for i in g):
            return None
        ps = [pos(i) for i in g]
        varying |= {k for k in range(len(sizes)) if len({p[k] for p in ps}) > 1}
    if not permute:
        want = math.prod(sizes[k] for k in varying)
        if any(len(g) != want for g in groups):
            return None  # the groups are not whole sub-meshes
    return tuple(names[k] for k in sorted(varying))


def parse_module(text: str, before: str = "", prefer_file: Optional[str] = None) -> HloModule:
    """The collectives of one optimised HLO module. ``before``: the same module before
    optimisation (it names the mesh); ``prefer_file``: map sources to this file's lines."""
    head = re.search(r"^HloModule\s+([\w.\-]+)", text, re.M)
    parts = re.search(r"num_partitions=(\d+)", text)
    mod = HloModule(head.group(1) if head else "?", int(parts.group(1)) if parts else 1)
    mod.mesh = mesh_of(before or text, mod.num_partitions)
    tables = _tables(text)
    for line in text.splitlines():
        m = _INSTR.match(line)
        if not m:
            continue
        kind, shape = m.group("op"), m.group("shape")
        if m.group("start"):
            result = (_largest(shape) if kind in ("all-gather", "collective-permute")
                      else array_bytes(shape))
        else:
            result = array_bytes(shape)
        groups = _groups(line, mod.num_partitions)
        n = 2 if kind == "collective-permute" else max((len(g) for g in groups), default=1)
        meta = _META.search(line)
        meta_s = meta.group(1) if meta else ""
        op = re.search(r'op_name="([^"]*)"', meta_s)
        file, lineno, func = _source(meta_s, tables, prefer_file)
        axes = axes_of(groups, mod.mesh, kind == "collective-permute") if mod.mesh else None
        mg = _mesh_groups(line)
        if mg is not None and not all(re.fullmatch(r"axis_\d+", a) for a in mg[0].axis_names):
            axes = mg[1]  # XLA named the axes itself (newer XLA)
        mod.collectives.append(Collective(kind, shape.strip(), groups, result, _cost(kind, result, n),
                                          op.group(1) if op else "", file, lineno, func, axes))
    return mod


def read_dump(directory: str, prefer_file: Optional[str] = None,
              functions: Optional[Sequence[str]] = None) -> List[HloModule]:
    """The modules XLA dumped to ``directory`` (``--xla_dump_to``), optimised text only;
    ``functions``: keep ``jit_<name>`` modules for these names."""
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return []
    out = []
    for fname in names:
        m = re.match(r"(module_\d+)\.(.+?)\.(?:[\w.\-]*_)?after_optimizations\.txt$", fname)
        if not m or "buffer-assignment" in fname or "memory-usage" in fname:
            continue
        if functions is not None and m.group(2)[4:] not in functions:
            continue
        before_path = os.path.join(directory, f"{m.group(1)}.{m.group(2)}.before_optimizations.txt")
        with open(os.path.join(directory, fname), encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        before = ""
        if os.path.exists(before_path):
            with open(before_path, encoding="utf-8", errors="replace") as fh:
                before = fh.read()
        out.append(parse_module(text, before, prefer_file))
    return out


def fmt_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"
