"""Parse sharding types in the syntax of ``str(jax.typeof(x))`` (``_printing`` prints them).

JAX 0.10.2 prints (``jax/_src/core.py: ShapedArray.__str__``)::

    [~]DTYPE[<MEMORY>][SIZE[@AXIS|@(AXIS,...)],...][{V:AXES, U:AXES, R:AXES}]

with 1-tuples of axes printed bare and V/U/R in mesh-axis order. We add named dims
(``B@data``) and ``_`` (any size). No JAX import.
"""

from __future__ import annotations

import difflib
import functools
import re

from ._dtypes import DTYPES
from ._errors import ShardingSyntaxError
from ._model import Dim, ShardingType

__all__ = ["parse", "DTYPES"]

# Every dtype name JAX 0.10.2 prints for a ShapedArray (numpy's and ml_dtypes' names,
# from the dtype table in _dtypes.py), plus extended ``key<impl>`` dtypes, handled
# separately.
MEMORY_SPACES = ("host", "any")  # "device" is the default and never printed
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_INT = re.compile(r"[0-9]+")
_SETS = {"V": "varying", "U": "unreduced", "R": "reduced"}


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.i = 0
        self.dim_axes: list = []  # (dim index, axis, column) to place duplicate errors

    # -- low-level --------------------------------------------------------------------
    def error(self, message: str, at: int | None = None) -> ShardingSyntaxError:
        return ShardingSyntaxError(self.text, self.i if at is None else at, message)

    def skip_ws(self) -> None:
        while self.i < len(self.text) and self.text[self.i] in " \t":
            self.i += 1

    def peek(self) -> str:
        self.skip_ws()
        return self.text[self.i] if self.i < len(self.text) else ""

    def expect(self, ch: str, what: str) -> None:
        if self.peek() != ch:
            got = repr(self.text[self.i]) if self.i < len(self.text) else "the end of the text"
            raise self.error(f"expected {what}, got {got}")
        self.i += 1

    def name(self, what: str) -> str:
        self.skip_ws()
        m = _NAME.match(self.text, self.i)
        if not m:
            got = repr(self.text[self.i]) if self.i < len(self.text) else "the end of the text"
            raise self.error(f"expected {what}, got {got}")
        self.i = m.end()
        return m.group()

    # -- grammar ----------------------------------------------------------------------
    def parse(self) -> ShardingType:
        if not self.text.strip():
            raise self.error("expected a dtype such as float32, got an empty string")
        weak = False
        if self.peek() == "~":
            weak = True
            self.i += 1
        dtype = self.dtype()
        memory = "device"
        if self.peek() == "<":
            start = self.i
            self.i += 1
            memory = self.name("a memory space (host or any) after '<'")
            if memory not in MEMORY_SPACES:
                raise self.error(f"unknown memory space {memory!r}; expected one of "
                                 f"{', '.join(MEMORY_SPACES)} (device memory is not written)",
                                 start + 1)
            self.expect(">", "'>' to close the memory space")
        self.expect("[", f"'[' to open the dims after the dtype {dtype!r}")
        dims = self.dims()
        sets = {"varying": (), "unreduced": (), "reduced": ()}
        if self.peek() == "{":
            self.i += 1
            self.axis_sets(sets)
        self.skip_ws()
        if self.i != len(self.text):
            raise self.error(f"unexpected {self.text[self.i:]!r} after the type")
        seen: dict = {}
        for k, a, pos in self.dim_axes:
            if a in seen:
                raise ShardingSyntaxError(
                    self.text, pos,
                    f"mesh axis {a!r} shards both dim {seen[a]} and dim {k}; a mesh "
                    "axis can shard at most one dimension")
            seen[a] = k
        try:
            return ShardingType(dtype, tuple(dims), varying=sets["varying"],
                                unreduced=sets["unreduced"], reduced=sets["reduced"],
                                weak_type=weak, memory_space=memory)
        except ValueError as e:
            raise self.error(str(e), len(self.text) - 1) from None

    def dtype(self) -> str:
        start = self.i
        dtype = self.name("a dtype such as float32 or bfloat16")
        if dtype == "key":
            # extended PRNG key dtype: key<fry>, key<rbg>, ...
            self.expect("<", "'<' after 'key' (PRNG key dtypes print as key<fry>)")
            impl = self.name("a PRNG implementation name inside key<...>")
            self.expect(">", "'>' to close key<...>")
            return f"key<{impl}>"
        if dtype not in DTYPES:
            close = difflib.get_close_matches(dtype, sorted(DTYPES), n=2)
            hint = f"; did you mean {' or '.join(close)}?" if close else ""
            raise self.error(f"unknown dtype {dtype!r}{hint}", start)
        return dtype

    def dims(self) -> list:
        dims: list = []
        if self.peek() == "]":
            self.i += 1
            return dims
        while True:
            dims.append(self.dim(len(dims)))
            c = self.peek()
            if c == ",":
                self.i += 1
                continue
            if c == "]":
                self.i += 1
                return dims
            got = repr(c) if c else "the end of the text"
            raise self.error(f"expected ',' or ']' after dim {len(dims) - 1}, got {got}")

    def dim(self, index: int) -> Dim:
        self.skip_ws()
        m = _INT.match(self.text, self.i)
        if m:
            try:
                size, name = int(m.group()), None
            except ValueError:  # past Python's int-conversion limit (4,300 digits)
                raise self.error(f"the size of dim {index} has {len(m.group())} digits, more than "
                                 "any array dimension can have") from None
            self.i = m.end()
            if _NAME.match(self.text, self.i):
                raise self.error("a dim is a size or a name, not both")
        else:
            size, name = None, self.name(f"a size or a dim name for dim {index}")
        axes: tuple = ()
        if self.peek() == "@":
            self.i += 1
            at = self.i
            axes = self.axes(f"a mesh axis name after '@' in dim {index}")
            for a in axes:
                self.dim_axes.append((index, a, self.text.find(a, at)))
        return Dim(size=size, name=name, axes=axes)

    def axes(self, what: str) -> tuple:
        if self.peek() == "(":
            open_at = self.i
            self.i += 1
            names = [self.name(what)]
            while self.peek() == ",":
                self.i += 1
                names.append(self.name("a mesh axis name after ','"))
            if self.peek() != ")":
                raise self.error(f"expected ')' to close the axis tuple opened at column "
                                 f"{open_at + 1}")
            self.i += 1
            if len(set(names)) != len(names):
                raise self.error(f"axis tuple ({','.join(names)}) lists an axis twice",
                                 open_at)
            return tuple(names)
        return (self.name(what),)

    def axis_sets(self, sets: dict) -> None:
        while True:
            self.skip_ws()
            start = self.i
            key = self.name("V, U or R (varying, unreduced, reduced) inside {...}")
            if key not in _SETS:
                raise self.error(f"unknown axis set {key!r}; inside {{...}} only V: "
                                 "(varying), U: (unreduced) and R: (reduced) are allowed", start)
            if sets[_SETS[key]]:
                raise self.error(f"the {key}: set is given twice", start)
            self.expect(":", f"':' after {key}")
            sets[_SETS[key]] = self.axes(f"a mesh axis name after {key}:")
            c = self.peek()
            if c == ",":
                self.i += 1
                continue
            if c == "}":
                self.i += 1
                return
            raise self.error("expected ',' or '}' in the axis sets")


@functools.lru_cache(maxsize=4096)
def parse(text: str) -> ShardingType:
    """Parse a sharding type such as ``float32[8@x,16@(x,y)]{V:y}`` or ``bfloat16[B@data,D]``.

    Raises ``ShardingSyntaxError`` (a ``ValueError``) that shows where and what was
    expected. Results are cached: annotations are parsed once.
    """
    if not isinstance(text, str):
        raise TypeError(f"parse() takes a str, got {type(text).__name__}")
    return _Parser(text).parse()
