"""The manifest: what shardcheck's registries hold, in one generated table.

The registries are the code itself: the rule classes (``rules/``), the API families of
the interpreter (``jaxapi/``, each declaring ``MAKES_SHARDINGS``), and the version
profiles' deprecated and removed names (``compat/``). Reading them means importing the
whole analysis, which the paths that must stay light (choosing rules, the pre-check
before libcst) cannot afford. So ``python docs/generate.py`` writes what they hold, once,
to ``analyzer/manifest.py`` (read by ``catalog`` and ``precheck``) and
``docs/manifest.json`` (for the docs and other tools); ``tests/test_docs.py`` regenerates
both and fails when either is out of date. Nothing here is kept by hand twice.

The pre-check's vocabulary is derived: every name of a family that makes sharding values,
every deprecated or removed sharding API and every other spelling of one, reduced to the
fewest lower-case words that ``precheck`` and ``relevance`` still find each of them by,
together with ``precheck.OPEN_WORDS``, the words of open classes of names (keywords such as
``out_sharding=``) no registry lists.
"""

from __future__ import annotations

import re
import sys
from typing import Dict, Iterable, List, Set, Tuple

# Names analysed by their sharding keywords (``nnx.Param(w, sharding=...)``): an NNX
# variable without one places nothing, so the name itself is no word of the vocabulary.
BY_KEYWORD = frozenset({"flax.nnx.Param", "flax.nnx.Variable", "flax.nnx.variablelib.Param",
                        "flax.nnx.variablelib.Variable"})


def families() -> Dict[str, Tuple[bool, List[str]]]:
    """Each API family of the interpreter (its module's name under ``jaxapi``): whether
    its names make sharding values (its ``MAKES_SHARDINGS``), and the names it models (a
    prefix as ``prefix*``)."""
    from . import api, jaxapi  # noqa: F401  # jaxapi registers the handlers
    out: Dict[str, Tuple[bool, List[str]]] = {}
    entries = list(api._BY_NAME.items()) + [(p + "*", fn) for p, fn in api._BY_PREFIX]
    for name, fn in entries:
        module = sys.modules[fn.__module__]
        family = fn.__module__.rsplit(".", 1)[-1]
        if not hasattr(module, "MAKES_SHARDINGS"):
            raise TypeError(f"{fn.__module__} models {name!r} but does not say whether its "
                            "names make sharding values: set MAKES_SHARDINGS = True or False")
        out.setdefault(family, (bool(module.MAKES_SHARDINGS), []))[1].append(name)
    return {k: (flag, sorted(names)) for k, (flag, names) in sorted(out.items())}


def vocabulary_names() -> List[str]:
    """Every name a file must be analysed for when it spells it: the names of the families
    that make sharding values, the deprecated and removed sharding APIs (JAX's and
    Flax's), and each other spelling of one of these (but not the NNX variables, which
    their sharding keywords stand for: ``BY_KEYWORD``)."""
    from . import compat
    names: Set[str] = {n for flag, members in families().values() if flag for n in members}
    names.update(compat.DEPRECATED)
    names.update(compat.FLAX_REMOVED)
    targets = set(names)
    for profile in compat.PROFILES:
        for alias, canonical in {**profile.legacy_aliases, **profile.aliases}.items():
            if canonical in targets or compat.deprecated_entry(canonical):
                names.add(alias)
    return sorted(n for n in names if n and n not in BY_KEYWORD)


def spelled(name: str) -> str:
    """The least of ``name`` a source must spell to reach it: its last component (for a
    special method, the class's, whose value it is called on)."""
    parts = name.rstrip(".*").split(".")
    return next(p for p in reversed(parts) if not p.startswith("__"))


def found_by(words: Iterable[str], identifier: str) -> bool:
    """Whether ``relevance.spells`` finds ``identifier`` by ``words`` (its word-start
    rule, ``relevance.at_word_start``). What it finds, ``precheck``'s substring test
    finds too."""
    from .relevance import at_word_start
    # in the order precheck.TRIGGERS has them (sorted), which relevance's pattern alternates
    return at_word_start(re.compile("|".join(re.escape(w) for w in sorted(words))), identifier)


def precheck_words() -> List[str]:
    """The pre-check's vocabulary: ``precheck.OPEN_WORDS`` and the spelled part of every
    name of ``vocabulary_names`` (``jax.P``, which ``precheck`` matches apart, aside),
    without the words the others already find every name by."""
    from .precheck import OPEN_WORDS
    spellings = sorted({spelled(n) for n in vocabulary_names()} - {"P"})
    words = set(OPEN_WORDS) | {s.lower() for s in spellings}
    for word in sorted(words - set(OPEN_WORDS), key=lambda w: (-len(w), w)):
        rest = words - {word}
        if all(found_by(rest, s) for s in spellings if s.lower() == word or word in s.lower()):
            words = rest
    return sorted(words)


def build() -> dict:
    """The manifest: the rules (code, name, severity, whether the engine reports it
    itself, the first JAX version, the one-line summary), the API families, and the
    pre-check's vocabulary."""
    from .rules import all_rules
    return {
        "rules": [{"code": r.CODE, "name": r.NAME, "severity": r.SEVERITY, "meta": r.META,
                   "jax_since": r.JAX_SINCE, "summary": r.summary()}
                  for r in all_rules().values()],
        "api_families": {k: {"makes_shardings": flag, "names": names}
                         for k, (flag, names) in families().items()},
        "precheck_vocabulary": precheck_words(),
    }


def python_module(manifest: dict) -> str:
    """``analyzer/manifest.py``: what the light paths read of ``manifest``."""
    rules = "".join(f"    {r['code']!r}: ({r['name']!r}, {r['severity']!r}, {r['meta']!r}),\n"
                    for r in manifest["rules"])
    words = "".join(f"    {w!r},\n" for w in manifest["precheck_vocabulary"])
    return (
        '"""Generated by ``python docs/generate.py`` from the registries '
        "(``analyzer/registry_manifest.py``):\n"
        'do not edit. ``tests/test_docs.py`` fails when it is out of date."""\n\n'
        "from typing import Dict, Tuple\n\n"
        "# code -> (name, severity, reported by the engine itself)\n"
        f"RULES: Dict[str, Tuple[str, str, bool]] = {{\n{rules}}}\n\n"
        "# lower-case words: every name of the sharding vocabulary is found by one\n"
        f"PRECHECK_WORDS: Tuple[str, ...] = (\n{words})\n")
