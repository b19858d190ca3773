"""The analyzer's data types: findings, fixes and rule examples. No JAX import."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

if TYPE_CHECKING:  # findings and fixes are read from the cache without importing libcst
    import libcst as cst

ERROR = "error"
WARNING = "warning"


@dataclass(frozen=True)
class Fix:
    """A replacement of the text between two positions (1-based rows and columns)."""

    message: str
    row: int
    column: int
    end_row: int
    end_column: int
    content: str
    applicability: str = "safe"  # or "unsafe": applied only with --unsafe-fixes
    # further edits of the same fix, (row, column, end_row, end_column, content): a
    # codemod that moves an import rewrites its uses too; all are applied or none
    more: Tuple[Tuple[int, int, int, int, str], ...] = ()

    def edits(self) -> List[Tuple[int, int, int, int, str]]:
        return [(self.row, self.column, self.end_row, self.end_column, self.content), *self.more]

    def as_json(self) -> Dict[str, Any]:
        return {"message": self.message, "applicability": self.applicability, "edits": [{
            "content": c, "location": {"row": r, "column": col},
            "end_location": {"row": er, "column": ec}} for r, col, er, ec, c in self.edits()]}


@dataclass(frozen=True)
class Related:
    """Another place a finding involves (the value an ``out_specs`` entry claims is
    replicated, the helper that built a spec): a ``note:`` line in text output,
    ``relatedLocations`` in SARIF."""

    message: str
    filename: str
    row: int
    column: int
    end_row: int
    end_column: int

    def as_json(self) -> Dict[str, Any]:
        return {"message": self.message, "filename": self.filename,
                "location": {"row": self.row, "column": self.column},
                "end_location": {"row": self.end_row, "column": self.end_column}}

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Related":
        return cls(d["message"], d["filename"], d["location"]["row"], d["location"]["column"],
                   d["end_location"]["row"], d["end_location"]["column"])


@dataclass
class Pending:
    """A finding a rule raised at a node; the engine gives it a position. ``related``:
    (node, what happens there) pairs, placed the same way (in whichever file holds them)."""

    code: str
    name: str
    message: str
    severity: str
    node: Optional[cst.CSTNode]
    fix_content: Optional[str] = None  # replace the node's text with this
    fix_message: str = ""
    related: List[Tuple[cst.CSTNode, str]] = field(default_factory=list)
    fix_node: Optional[cst.CSTNode] = None  # the text the fix replaces, if not ``node``'s
    fix_unsafe: bool = False  # the fix may change what the program means
    fix_more: List[Tuple[cst.CSTNode, str]] = field(default_factory=list)  # more (node, text) edits
    fails_at: Optional[cst.CSTNode] = None  # where JAX raises, if not at ``node``


@dataclass(frozen=True)
class Finding:
    code: str
    name: str
    message: str
    severity: str
    filename: str
    row: int
    column: int  # 1-based
    end_row: int
    end_column: int
    fix: Optional[Fix] = None
    in_expected_failure: bool = field(default=False, compare=False)  # inside assertRaises
    related: Tuple[Related, ...] = ()
    cell: Optional[int] = None  # a notebook's cell (rows then count within it)

    def as_json(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"code": self.code, "name": self.name, "message": self.message,
               "severity": self.severity, "filename": self.filename,
               "location": {"row": self.row, "column": self.column},
               "end_location": {"row": self.end_row, "column": self.end_column},
               "fix": self.fix.as_json() if self.fix else None,
               "related": [r.as_json() for r in self.related]}
        if self.cell is not None:
            out["cell"] = self.cell
        return out

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Finding":
        fix = None
        if d.get("fix"):
            e, *more = d["fix"]["edits"]
            fix = Fix(d["fix"]["message"], e["location"]["row"], e["location"]["column"],
                      e["end_location"]["row"], e["end_location"]["column"], e["content"],
                      d["fix"].get("applicability", "safe"),
                      tuple((m["location"]["row"], m["location"]["column"], m["end_location"]["row"],
                             m["end_location"]["column"], m["content"]) for m in more))
        return cls(d["code"], d["name"], d["message"], d["severity"], d["filename"],
                   d["location"]["row"], d["location"]["column"], d["end_location"]["row"],
                   d["end_location"]["column"], fix, d.get("in_expected_failure", False),
                   tuple(Related.from_json(r) for r in d.get("related") or ()), d.get("cell"))


@dataclass(frozen=True)
class Valid:
    """Code the rule must not flag. It also runs cleanly under every supported JAX.
    For a rule on config files (``ShardRule.CONFIG``), ``code`` is the config's YAML and
    ``driver`` the Python program that runs it (the YAML given to it as ``CONFIG``)."""

    code: str
    driver: str = ""


@dataclass(frozen=True)
class Invalid:
    """Code the rule flags at ``line``; under every supported JAX it fails as
    ``jax_outcome`` says.

    ``jax_outcome``: "error" (running it raises), "deprecation" (it warns with a
    DeprecationWarning), or "wrong-result" (it runs, and ``witness``, appended to the
    code, asserts what the author meant and fails).
    """

    code: str
    line: int
    message: str = ""  # a substring the message must contain
    jax_outcome: str = "error"
    # a regex JAX's exception text matches, on every supported JAX (analyzer/compat holds
    # each version's wording)
    jax_error: str = ""
    witness: str = ""
    driver: str = ""  # a config rule's program that runs the YAML ``code`` (see Valid)
