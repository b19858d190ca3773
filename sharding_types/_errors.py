"""The errors of the runtime layer. No JAX import."""

from __future__ import annotations

from typing import Mapping, Optional, Sequence

GRAMMAR = """\
grammar:  [~]DTYPE[<MEMORY>][DIM,DIM,...][{V:AXES, U:AXES, R:AXES}]
  DTYPE   float32, bfloat16, int8, bool, key<fry>, ... (numpy/JAX dtype names)
  MEMORY  host | any (device memory is not printed)
  DIM     SIZE or NAME, then optionally @AXIS or @(AXIS,AXIS,...)
          SIZE is an integer; NAME (e.g. B) binds to a size on first use; _ is any size
  AXES    AXIS or (AXIS,AXIS,...): the varying (V), unreduced (U), reduced (R) mesh axes
examples: float32[8@data,16@(x,y)]  bfloat16[B@data,S,H@model]  float32[4,2]{V:(x,y)}  ~int32[]"""


class ShardingError(Exception):
    """Base class of every error shardcheck's runtime layer raises."""

    __module__ = "sharding_types"  # tracebacks name the public import path


class ShardingSyntaxError(ShardingError, ValueError):
    """A sharding type string does not follow the grammar.

    ``text``, ``position`` (0-based column) and ``expected`` say what went wrong where.
    """

    __module__ = "sharding_types"

    def __init__(self, text: str, position: int, message: str):
        self.text = text
        self.position = position
        self.expected = message
        caret = " " * (position + 4) + "^"
        super().__init__(
            f"invalid sharding type {text!r}: {message} (at column {position + 1})\n"
            f"    {text}\n{caret}\n{GRAMMAR}")


class ShardingMismatchError(ShardingError, TypeError):
    """A value's sharding type is not the one asserted.

    Attributes: ``expected`` and ``actual`` (ShardingType), ``reasons`` (one line per
    difference), ``bindings`` (named dims bound so far), ``mesh`` (the value's mesh or
    None), ``where`` (e.g. "argument 'x' of train_step").
    """

    __module__ = "sharding_types"

    def __init__(self, expected, actual, reasons: Sequence[str],
                 bindings: Optional[Mapping[str, int]] = None, mesh=None,
                 where: str = ""):
        self.expected = expected
        self.actual = actual
        self.reasons = tuple(reasons)
        self.bindings = dict(bindings or {})
        self.mesh = mesh
        self.where = where
        head = f"sharding mismatch{' for ' + where if where else ''}"
        lines = [head,
                 f"  expected: {expected}",
                 f"  actual:   {actual}"]
        lines += [f"  - {r}" for r in self.reasons]
        if self.bindings:
            lines.append("  bound dims: " + ", ".join(f"{k}={v}" for k, v in self.bindings.items()))
        lines.append(f"  mesh: {mesh if mesh is not None else '(no mesh)'}")
        super().__init__("\n".join(lines))
