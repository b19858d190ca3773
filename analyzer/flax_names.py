"""The names a file's Flax modules give the components of their parameter paths.

A Flax model's parameter tree is keyed by its submodules' names and its parameters'
names: Linen names a submodule by the attribute ``setup`` assigns it (``self.wq =
nn.Dense(...)``: ``wq``; a list: ``layers_0``), by ``name=``, or automatically
(``Dense_0``), and a parameter by ``self.param("kernel", ...)`` or the built-in layer's
own (``kernel``, ``bias``, ``embedding``, ``scale``); NNX by the attribute path
(``self.layers = [...]``: ``layers/0``). A regex partition rule names those components
(``attention/(wq|wk|wv)/kernel``), so a literal word of a rule that is no part of any name
the file's modules can give matches no parameter of theirs.

``path_names(module)`` reads them from the syntax of one file, and answers None (unknown)
wherever a name could come from elsewhere: a submodule of a class the file does not
define and Flax does not build in, a name computed at run time (``name=f"{kind}_proj"``),
a module class whose bases are not Flax's or the file's.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from typing import Any, Callable, Dict, FrozenSet, Iterator, List, Optional, Set

import libcst as cst

from .syntax import dotted, import_bindings, string_value, walk

_FLAX = ("flax", "flax.linen", "flax.nnx")
# Flax's built-in layers (linen and nnx): the names of the parameters and variables each
# creates (an empty tuple: none); a layer not listed makes a file's names unknown
_BUILT_IN: Dict[str, FrozenSet[str]] = {
    **dict.fromkeys(("Dense", "DenseGeneral", "Conv", "ConvTranspose", "ConvLocal", "Einsum",
                     "Linear", "LinearGeneral"), frozenset({"kernel", "bias"})),
    "Embed": frozenset({"embedding"}),
    **dict.fromkeys(("LayerNorm", "RMSNorm", "GroupNorm", "BatchNorm", "InstanceNorm"),
                    frozenset({"scale", "bias", "mean", "var"})),
    **dict.fromkeys(("MultiHeadDotProductAttention", "MultiHeadAttention", "SelfAttention"),
                    frozenset({"query", "key", "value", "out", "kernel", "bias"})),
    "LoRA": frozenset({"lora_a", "lora_b"}),
    **dict.fromkeys(("Dropout", "Sequential", "List", "Dict", "Param", "BatchStat", "Variable", "Cache",
                     "Intermediate", "Rngs", "RngStream"), frozenset()),
}
# what else keys a tree the rules are matched against: variable collections, a train
# state's and optax's fields
_TREE_KEYS = frozenset({"params", "batch_stats", "cache", "intermediates", "opt_state",
                        "step", "mu", "nu", "count", "inner_state", "gradient_step",
                        "inner_opt_state", "acc_grads", "mini_step", "hyperparams",
                        "notfinite_count", "last_finite", "total_notfinite", "trace",
                        "ema", "value", "kernel", "bias", "embedding", "scale"})


@dataclass(frozen=True)
class PathNames:
    """The names of one file's Flax modules: every path component they can give (a
    numbered one, ``layers_0``/``Dense_3``, as its stem), and the module classes read."""

    names: FrozenSet[str]
    classes: FrozenSet[str]
    own: FrozenSet[str]  # the names the file itself writes (not Flax's generic keys)

    def holds(self, word: str) -> bool:
        """Whether ``word`` (a run of identifier characters a regex matches literally)
        can be part of a path component these modules give."""
        stem = word.rstrip("0123456789").rstrip("_") or word
        if not stem.strip("_0123456789"):
            return True  # digits and underscores: a list index, a numbered name
        return any(stem in n or word in n for n in self.names)


def path_names(module: cst.Module) -> Optional[PathNames]:
    """The path names of the Flax module classes ``module`` defines; None where it
    defines none, or where one of them may take a name from elsewhere."""
    flax = _flax_aliases(module)
    if not flax:
        return None
    classes = {c.name.value: c for c in _classes(module)}
    modules: Set[str] = set()
    grew = True
    while grew:  # a class of the file that derives from a module class is one too
        grew = False
        for name, c in classes.items():
            if name not in modules and any(_is_module_base(b.value, flax, modules)
                                           for b in c.bases):
                modules.add(name)
                grew = True
    if not modules:
        return None
    names: Set[str] = set(_TREE_KEYS)
    for name in modules:
        c = classes[name]
        if not all(_known_base(b.value, flax, modules, classes) for b in c.bases):
            return None
        if not _read_class(c, flax, modules, classes, names):
            return None
    # a class of the file outside them that looks like a module (a base this file does not
    # show is Flax's) could give names too
    for name, c in classes.items():
        if name not in modules and _looks_like_module(c) and \
                not all(_known_base(b.value, flax, modules, classes) for b in c.bases):
            return None
    return PathNames(frozenset(names), frozenset(modules), frozenset(names - _TREE_KEYS))


def _flax_aliases(module: cst.Module) -> Dict[str, str]:
    """The names this file binds to ``flax.linen`` / ``flax.nnx`` (or to ``flax``)."""
    out: Dict[str, str] = {}
    for node in walk(module, layout=False):
        for bound, full in import_bindings(node):
            # import flax.linen as nn; from flax import nnx; from flax.linen import Dense
            if full in _FLAX or full.rsplit(".", 1)[0] in _FLAX and \
                    isinstance(node, cst.ImportFrom):
                out[bound] = full
    return out


def _classes(module: cst.Module) -> Iterator[cst.ClassDef]:
    for node in walk(module, layout=False):
        if isinstance(node, cst.ClassDef):
            yield node


def _flax_name(expr: cst.BaseExpression, flax: Dict[str, str]) -> str:
    """``nn.Dense`` -> ``flax.linen.Dense`` (through the file's aliases), else ""."""
    name = dotted(expr)
    for bound, full in flax.items():
        if name == bound:
            return full
        if name.startswith(bound + "."):
            return full + name[len(bound):]
    return ""


def _is_module_base(base: cst.BaseExpression, flax: Dict[str, str], modules: Set[str]) -> bool:
    full = _flax_name(base, flax)
    return full in ("flax.linen.Module", "flax.nnx.Module", "flax.linen.module.Module") or \
        (isinstance(base, cst.Name) and base.value in modules)


def _known_base(base: cst.BaseExpression, flax: Dict[str, str], modules: Set[str],
                classes: Dict[str, cst.ClassDef]) -> bool:
    """A base whose names the file shows: Flax's module, a class of the file, object."""
    return _is_module_base(base, flax, modules) or dotted(base) in ("object", "abc.ABC", "ABC") \
        or (isinstance(base, cst.Name) and base.value in classes)


def _looks_like_module(c: cst.ClassDef) -> bool:
    """A class that creates variables as a Flax module does: a ``setup`` method, a
    ``@compact`` method, or a call of ``self.param``/``self.variable``."""
    for node in walk(c.body, layout=False):
        if isinstance(node, cst.FunctionDef) and (node.name.value == "setup" or any(
                dotted(d.decorator).endswith("compact") for d in node.decorators)):
            return True
        if isinstance(node, cst.Attribute) and node.attr.value in ("param", "variable") \
                and isinstance(node.value, cst.Name) and node.value.value == "self":
            return True
    return False


def _read_class(c: cst.ClassDef, flax: Dict[str, str], modules: Set[str],
                classes: Dict[str, cst.ClassDef], names: Set[str]) -> bool:
    """Add the names class ``c`` gives to ``names``; False where one may come from
    elsewhere."""
    for node in walk(c.body, layout=False):
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) \
                and node.value.value == "self":
            names.add(node.attr.value)  # an attribute set or read: a submodule's name
        elif isinstance(node, cst.AnnAssign) and isinstance(node.target, cst.Name):
            names.add(node.target.value)  # a field: a submodule passed in is named by it
            if "Module" in _annotation_text(node.annotation):
                return False  # a submodule of a class the file does not show
        elif isinstance(node, cst.Assign) and any(
                isinstance(t.target, cst.Attribute) for t in node.targets):
            if any(_foreign(call, flax, classes) for call in _calls_made(node.value)):
                return False  # self.x = Layer(...): a submodule of a class not shown
        elif isinstance(node, cst.Call):
            if isinstance(node.func, cst.Call) and _foreign(node.func, flax, classes):
                return False  # Layer(...)(x), compact style
            if not _read_call(node, flax, classes, names):
                return False
    return True


def _calls_made(value: cst.BaseExpression) -> Iterator[cst.Call]:
    """The calls an assigned value makes the result of: a call, or each element of a
    list, tuple or comprehension of them."""
    if isinstance(value, cst.Call):
        yield value
    elif isinstance(value, (cst.List, cst.Tuple)):
        for e in value.elements:
            yield from _calls_made(e.value)
    elif isinstance(value, (cst.ListComp, cst.GeneratorExp)):
        yield from _calls_made(value.elt)


def _foreign(call: cst.Call, flax: Dict[str, str], classes: Dict[str, cst.ClassDef]) -> bool:
    """A call of a class (a capitalized name) neither Flax's nor this file's."""
    name = dotted(call.func)
    if not name or not name.rsplit(".", 1)[-1][:1].isupper():
        return False
    full = _flax_name(call.func, flax)
    if full:
        return full.rsplit(".", 1)[-1] not in _BUILT_IN
    return name not in classes


def _annotation_text(annotation: cst.Annotation) -> str:
    return " ".join(dotted(n) for n in walk(annotation.annotation, layout=False)
                    if isinstance(n, (cst.Name, cst.Attribute)))


def _read_call(call: cst.Call, flax: Dict[str, str], classes: Dict[str, cst.ClassDef],
               names: Set[str]) -> bool:
    func = call.func
    full = _flax_name(func, flax)
    short = full.rsplit(".", 1)[-1] if full else ""
    if short in _BUILT_IN:
        names.add(short)  # an automatic name: Dense_0
        names.update(_BUILT_IN[short])
    elif isinstance(func, cst.Name) and func.value in classes:
        names.add(func.value)  # a module class of the file, named automatically
    elif isinstance(func, cst.Attribute) and func.attr.value in ("param", "variable") \
            and isinstance(func.value, cst.Name) and func.value.value == "self":
        literal = _literal_argument(call, 1 if func.attr.value == "variable" else 0)
        if literal is None:
            return False
        names.add(literal)
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "name":
            value = arg.value
            if isinstance(value, cst.SimpleString) and isinstance(string_value(value), str):
                names.add(str(string_value(value)))
            elif isinstance(value, cst.Call) and dotted(value.func) == "str":
                pass  # name=str(i): a number
            elif not (isinstance(value, cst.Name) and value.value == "None"):
                return False  # a name computed at run time
    return True


def _literal_argument(call: cst.Call, index: int) -> Optional[str]:
    positional: List[cst.Arg] = [a for a in call.args if a.keyword is None and not a.star]
    if len(positional) <= index or not isinstance(positional[index].value, cst.SimpleString):
        return None
    value = string_value(positional[index].value)  # type: ignore[arg-type]
    return value if isinstance(value, str) else None


# -- the words a regex must match literally --------------------------------------------------
if sys.version_info >= (3, 11):
    from re import _parser as _sre
else:  # pragma: no cover
    import sre_parse as _sre

_WORD = re.compile(r"\w")


def missing_word(regex: str, holds: Callable[[str], bool]) -> Optional[str]:
    """A word (a run of identifier characters) that every match of ``regex`` contains
    literally and ``holds`` rejects; None where there is none, or the regex is
    case-insensitive or does not parse. Alternatives (``(wq|wk)``) reject only where each
    one holds such a word; an optional part (``?``, ``*``) is not read."""
    try:
        parsed = _sre.parse(regex)
    except (re.error, RecursionError, OverflowError):
        return None
    if parsed.state.flags & re.IGNORECASE:
        return None
    return _missing(list(parsed.data), holds)


def _missing(items: List[Any], holds: Callable[[str], bool]) -> Optional[str]:
    run: List[str] = []
    for op, av in items + [(None, None)]:
        if op is _sre.LITERAL and _WORD.match(chr(av)):
            run.append(chr(av))
            continue
        if run:
            word = "".join(run)
            run = []
            if not holds(word):
                return word
        if op is _sre.SUBPATTERN:
            found = _missing(list(av[-1]), holds)
        elif op is _sre.BRANCH:
            alternatives = [_missing(list(alt), holds) for alt in av[1]]
            found = alternatives[0] if all(alternatives) else None
        elif op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT) and av[0] >= 1:
            found = _missing(list(av[2]), holds)
        else:
            found = None
        if found is not None:
            return found
    return None
