"""Config objects built in the code: ``ml_collections.ConfigDict`` and ``argparse``.

``check`` follows a config the program builds where it can see every value:

- ``ml_collections.ConfigDict()`` (and ``FrozenConfigDict``, ``ConfigDict({...})``,
  ``ConfigDict(other)``) is an attribute bag: ``config.model = ConfigDict()``,
  ``config.model.num_heads = 6`` store on it, and a read gives what was stored
  (``interp/instances.py``: an attribute the code wrote reads back as written, until the
  config is given to a call that might change it). ``FrozenConfigDict`` never changes.
  Checked on ml_collections 1.1: ``ConfigDict()`` starts empty; ``ConfigDict(d)`` holds
  ``d``'s keys (nested dicts become ConfigDicts); ``FrozenConfigDict(c)`` copies ``c``.
- ``argparse.ArgumentParser``: ``add_argument("--head-dim", type=int, default=16)``
  declares ``args.head_dim``; ``parser.parse_args([])`` (an argument list the code
  spells, here empty) gives the defaults, as argparse does (``dest`` is the first long
  option with ``-`` turned into ``_``, or the first short one; a ``type`` is applied to a
  string default, not to another). ``parse_args()`` with no list reads ``sys.argv``:
  what the command line says is not in the source, so every field is unknown.

``shardcheck specs`` (``assume_defaults``) has its own config model
(``analyzer/pyconfig.py``); these handlers serve ``check``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import libcst as cst

from ..api import ApiCall, ApiContext, method_of, models
from ..interp.objects import library_class
from ..values import UNKNOWN, ClassVal, Const, DictVal, InstanceVal, TupleVal, Value

# Not the pre-check's vocabulary: config objects hold values: a mesh or spec in one
# spells the vocabulary where it is made
MAKES_SHARDINGS = False

CONFIG_DICTS = ("ml_collections.ConfigDict", "ml_collections.config_dict.ConfigDict",
                "ml_collections.config_dict.config_dict.ConfigDict")
FROZEN_CONFIG_DICTS = ("ml_collections.FrozenConfigDict",
                       "ml_collections.config_dict.FrozenConfigDict",
                       "ml_collections.config_dict.config_dict.FrozenConfigDict")


_CONFIG_DICT = library_class("ConfigDict")
_FROZEN_CONFIG_DICT = library_class("FrozenConfigDict", frozen=True)
_NAMESPACE = library_class("Namespace")


def _fields(v: Value) -> Optional[Dict[str, Value]]:
    """The entries a ConfigDict built from ``v`` holds (nested dicts as ConfigDicts)."""
    if isinstance(v, InstanceVal) and v.cls in (_CONFIG_DICT, _FROZEN_CONFIG_DICT):
        return dict(v.given)
    if isinstance(v, DictVal):
        out: Dict[str, Value] = {}
        for k, x in v.items:
            if not isinstance(k, str):
                return None
            inner = _fields(x) if isinstance(x, DictVal) else None
            out[k] = _config(inner, _CONFIG_DICT) if inner is not None else x
        return out
    if isinstance(v, Const) and v.value is None:
        return {}
    return None


def _config(fields: Dict[str, Value], cls: ClassVal) -> InstanceVal:
    return InstanceVal(cls, tuple(fields.items()), made=True, written=frozenset(fields))


@models(*CONFIG_DICTS, *FROZEN_CONFIG_DICTS)
def config_dict(it: ApiContext, c: ApiCall) -> Value:
    if it.assume_defaults or c.args.starred or set(c.args.kw) - {"initial_dictionary"}:
        return UNKNOWN
    given = c.args.get(0, "initial_dictionary") if c.args.given(0, "initial_dictionary") \
        else Const(None)
    fields = _fields(given)
    if fields is None:
        return UNKNOWN
    return _config(fields, _FROZEN_CONFIG_DICT if c.name in FROZEN_CONFIG_DICTS else _CONFIG_DICT)


# -- argparse ---------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class ArgumentParserVal(Value):
    """An ``argparse.ArgumentParser`` and the arguments added to it so far, in order:
    (dest, what ``parse_args([])`` gives it), or None for one the source does not spell."""

    arguments: Tuple[Optional[Tuple[str, Value]], ...] = ()


@models("argparse.ArgumentParser")
def argument_parser(it: ApiContext, c: ApiCall) -> Value:
    return UNKNOWN if it.assume_defaults else ArgumentParserVal()


def _dest(flags: List[str], dest: Value) -> Optional[str]:
    if isinstance(dest, Const) and isinstance(dest.value, str):
        return dest.value
    longs = [f for f in flags if f.startswith("--")]
    if longs:
        return longs[0][2:].replace("-", "_")
    shorts = [f for f in flags if f.startswith("-")]
    if shorts:
        return shorts[0][1:].replace("-", "_")
    return None  # a positional argument: required, so parse_args([]) exits


def _default(c: ApiCall) -> Value:
    """What ``parse_args([])`` gives the argument (UNKNOWN where the source does not
    say, or an action or ``nargs`` changes it)."""
    kw = c.args.kw
    if set(kw) - {"type", "default", "help", "dest", "metavar", "choices"}:
        return UNKNOWN  # action=, nargs=, required=, const=: not modelled
    default = kw["default"].value if "default" in kw else Const(None)
    typ = kw["type"].node if "type" in kw else None
    if isinstance(default, Const) and isinstance(default.value, str) and typ is not None:
        # argparse applies `type` to a string default
        conv = {"int": int, "float": float, "str": str}.get(
            typ.value if isinstance(typ, cst.Name) else "")
        if conv is None:
            return UNKNOWN
        try:
            return Const(conv(default.value))
        except ValueError:
            return UNKNOWN
    return default if isinstance(default, (Const, TupleVal)) else UNKNOWN


@method_of(ArgumentParserVal)
def parser_method(it: ApiContext, base: Value, c: ApiCall) -> Optional[Value]:
    """``parser.add_argument(...)`` (the parser held by that name now has it) and
    ``parser.parse_args([])``."""
    assert isinstance(base, ArgumentParserVal)
    if c.name == "add_argument":
        flags = [a.value for a in c.args.pos if isinstance(a, Const) and isinstance(a.value, str)]
        dest = _dest(flags, c.args.kw["dest"].value if "dest" in c.args.kw else UNKNOWN)
        entry = None if dest is None or len(flags) != len(c.args.pos) or c.args.starred \
            else (dest, _default(c))
        func = c.node.func if isinstance(c.node, cst.Call) else None
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            c.env.rebind(func.value.value, ArgumentParserVal(base.arguments + (entry,)))
        return UNKNOWN  # the argparse.Action, which code rarely keeps
    if c.name in ("parse_args", "parse_known_args"):
        given = c.args.get(0, "args") if c.args.given(0, "args") else None
        if not (isinstance(given, TupleVal) and not given.items) or None in base.arguments:
            return UNKNOWN  # sys.argv, or arguments the source does not spell
        fields = dict(e for e in base.arguments if e is not None)
        ns = InstanceVal(_NAMESPACE, tuple(fields.items()), made=True, written=frozenset(fields))
        return ns if c.name == "parse_args" else TupleVal((ns, TupleVal((), is_list=True)))
    return UNKNOWN
