"""The rule API: one class per rule, registered by subclassing.

A rule reads the facts of the file's semantic model and reports at nodes. Its class
docstring is its documentation (What it does / Why is this bad? / Example / Use instead),
and ``VALID`` / ``INVALID`` examples double as tests, against the analyzer and against
JAX itself.
"""

from __future__ import annotations

import inspect
from typing import ClassVar, Dict, Iterator, List, Optional, Sequence, Set, Tuple, Type, TypeVar

import libcst as cst

from . import compat
from .compat import describe
from .ftypes import ERROR, Invalid, Pending, Valid
from .syntax import walk

F = TypeVar("F")


class RuleContext:
    """What a rule sees of one file."""

    def __init__(self, model, path: str, config, call_sites=None) -> None:
        self.model = model
        # which analysed function, and so which module, holds a node (``place_findings.
        # CallSites``), shared with the placing of the findings
        self.call_sites = call_sites
        self.events = model.events
        self.path = path
        self.config = config
        # the JAX version the checked code targets (`jax-version` in [tool.shardcheck])
        self.profile = compat.profile_for(getattr(config, "jax_version", None))
        self._function_nodes: Dict[cst.CSTNode, Set[int]] = {}  # _function_of

    def spec_place(self, spec: cst.CSTNode, at: Optional[cst.CSTNode]
                   ) -> Tuple[cst.CSTNode, List[Tuple[cst.CSTNode, str]]]:
        """Where a finding about a spec meeting an array belongs, and its notes: where the
        spec meets the array (``at``, the line of JAX's traceback), noting where the spec
        is built, for a spec a function builds in an earlier statement (``sharding =
        NamedSharding(...)`` then ``device_put(x, sharding)``) or a constructor stores for
        a method to apply (``self.sharding``); else at the spec. A spec written at module
        level (a table), or built by a caller and passed into the helper that applies it,
        stays where it is written: one finding for its every use, at the line to change."""
        if at is None or any(n is spec for n in walk(at, layout=False)):
            return spec, []
        built_in = self._function_of(spec)
        if built_in is None:
            return spec, []
        used_in = self._function_of(at)
        info = self.model.funcs.get(used_in) if used_in is not None else None
        if used_in is built_in or info is None or built_in not in info.calls:
            return at, [(spec, "the spec is built here")]
        return spec, []

    def _function_of(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        """The innermost function of the analysed module whose body holds ``node`` (None
        at module level, or in another module); each function walked once, on demand."""
        best, best_size = None, 0
        for fn in self.model.funcs:
            nodes = self._function_nodes.get(fn)
            if nodes is None:
                nodes = self._function_nodes[fn] = {id(n) for n in walk(fn, layout=False)}
            if id(node) in nodes and (best is None or len(nodes) < best_size):
                best, best_size = fn, len(nodes)
        return best

    def facts(self, kind: Type[F]) -> Iterator[Tuple[cst.CSTNode, F]]:
        """The facts of type ``kind`` inference recorded, each with its node."""
        for f in self.events.facts:
            if isinstance(f.fact, kind):
                yield f.node, f.fact


class ShardRule:
    CODE: ClassVar[str] = ""
    NAME: ClassVar[str] = ""
    SEVERITY: ClassVar[str] = ERROR
    # The JAX the rule speaks of: the oldest supported minor version it applies to (None:
    # it does not depend on JAX), and the facts of the version profiles it relies on
    # (behaviour flags, error signatures; see analyzer/compat). "Applies to" in
    # `shardcheck explain` is derived from them.
    JAX_SINCE: ClassVar[Optional[str]] = compat.PROFILES[0].version
    JAX_FACTS: ClassVar[Tuple[str, ...]] = ()
    VALID: ClassVar[List[Valid]] = []
    INVALID: ClassVar[List[Invalid]] = []
    META: ClassVar[bool] = False  # reported by the engine itself (syntax-error, internal-error)
    # reported in YAML/JSON config files (analyzer/config_checks.py), not in Python: its
    # examples are configs, each run by its ``driver``
    CONFIG: ClassVar[bool] = False
    # reported over the whole project's files once each file is analysed
    # (analyzer/project_axes.py), not by a file's own analysis: its examples are checked
    # as a project of one file
    PROJECT: ClassVar[bool] = False

    registry: ClassVar[Dict[str, Type["ShardRule"]]] = {}

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if cls.CODE:
            if cls.CODE in ShardRule.registry:
                raise TypeError(f"duplicate rule code {cls.CODE}")
            ShardRule.registry[cls.CODE] = cls

    def check(self, ctx: RuleContext) -> Iterator[Pending]:
        return iter(())

    def report(self, node: Optional[cst.CSTNode], message: str, severity: Optional[str] = None,
               fix_content: Optional[str] = None, fix_message: str = "",
               related: Sequence[Tuple[Optional[cst.CSTNode], str]] = (),
               fix_node: Optional[cst.CSTNode] = None, fix_unsafe: bool = False,
               fix_more: Sequence[Tuple[cst.CSTNode, str]] = (),
               fails_at: Optional[cst.CSTNode] = None) -> Pending:
        """A finding at ``node``; ``related``: other lines it involves, (node, note).
        ``fix_content`` replaces the text of ``fix_node`` (default ``node``); an unsafe fix
        (it may change what the program means) is applied only with ``--unsafe-fixes``.
        ``fix_more``: further (node, text) replacements of the same fix, all or none.
        ``fails_at``: where JAX raises, when not at ``node`` (a spec written on one line and
        used on another): a finding whose failure is inside an ``assertRaises`` block is
        marked as code meant to fail."""
        return Pending(self.CODE, self.NAME, message, severity or self.SEVERITY, node,
                       fix_content, fix_message,
                       [(n, note) for n, note in related if n is not None and n is not node],
                       fix_node, fix_unsafe, list(fix_more), fails_at)

    @classmethod
    def docs(cls) -> str:
        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def summary(cls) -> str:
        doc = cls.docs()
        after = doc.split("## What it does", 1)[-1].strip().split("\n\n")[0]
        return " ".join(line.strip() for line in after.splitlines())

    @classmethod
    def jax_versions(cls) -> str:
        """The JAX versions the rule applies to, from the version profiles."""
        if cls.JAX_SINCE is None:
            return "any JAX version (the rule does not depend on JAX)"
        profiles = compat.profiles_since(cls.JAX_SINCE)
        return f"JAX {describe.versions(profiles)} (checked on {describe.releases(profiles)})"

    @classmethod
    def jax_differences(cls) -> List[str]:
        """How those versions differ in the facts the rule relies on (``JAX_FACTS``)."""
        if cls.JAX_SINCE is None:
            return []
        profiles = compat.profiles_since(cls.JAX_SINCE)
        return [d for d in (describe.difference(f, profiles) for f in cls.JAX_FACTS) if d]

    @classmethod
    def explain(cls) -> str:
        head = f"{cls.CODE} {cls.NAME} ({cls.SEVERITY})"
        text = f"{head}\n{'=' * len(head)}\n\n{cls.docs()}\n\nApplies to: {cls.jax_versions()}.\n"
        diffs = cls.jax_differences()
        if diffs:
            text += (f"Where they differ, shardcheck's analysis follows JAX "
                     f"{compat.DEFAULT.version}:\n" + "".join(f"- {d[0].upper()}{d[1:]}.\n" for d in diffs))
        return text

def did_you_mean(name: str, choices) -> str:
    """`` (did you mean 'data'?)`` when a close choice exists."""
    import difflib
    close = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.5)
    return f" (did you mean {close[0]!r}?)" if close else ""


def axes_str(names) -> str:
    return "(" + ", ".join(repr(n) for n in names) + ")"
