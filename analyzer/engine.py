"""Run the rules over one file: parse, build the semantic model, check, place, suppress.

Never raises for bad input: a file that does not parse is one ``syntax-error`` finding;
a crash inside the model or a rule is an ``internal-error`` finding naming the rule, and
the other rules' findings are kept.
"""

from __future__ import annotations

import io
import json
import os
import re
import tokenize
import traceback
from dataclasses import dataclass
from dataclasses import replace as dc_replace
from typing import TYPE_CHECKING, Dict, FrozenSet, Iterable, List, Optional, Tuple

import libcst as cst

from sharding_types import PartialMesh

from .codes import (INTERNAL_ERROR, INVALID_SUPPRESSION, SKIPPED_FILE, SYNTAX_ERROR,
                    UNUSED_SUPPRESSION)
from . import notebooks
from .config import Config
from .deep import degrading_deep_statements, from_recursion
from .ftypes import ERROR, Finding, Fix, Pending, Related
from .positions import Positions, node_positions
from .precheck import cleared, declared_words
from .project import Project, module_name_for
from .rule import RuleContext
from .rules import all_rules
from .sources import (LibcstLimitation, SourceError, Unreadable, decode_source, looks_generated,
                      parse_source, read_source, source_of)

if TYPE_CHECKING:
    from libcst.metadata import CodeRange

    from .interp.model import Interpreter

# ruff's forms, case-insensitive: a bare noqa, or noqa followed by ': SC101, SC102'
_SUPPRESS = re.compile(r"#\s*(?:shardcheck:\s*ignore(?:\[(?P<codes>[^\]]*)\])?"
                       r"|noqa(?::\s*(?P<noqa>[A-Za-z0-9_\-]+(?:[,\s]+[A-Za-z0-9_\-]+)*))?)",
                       re.IGNORECASE)


def _meta(code: str, message: str, path: str, row: int, col: int) -> Finding:
    rule = all_rules()[code]
    return Finding(code, rule.NAME, message, rule.SEVERITY, path, row, col, row, col)


def skipped(path: str, why: str) -> Finding:
    """The one finding of a file shardcheck did not analyse (``skipped-file``)."""
    return _meta(SKIPPED_FILE, f"this file was not analysed: {why}", path, 1, 1)


def crashed(path: str, why: str) -> Finding:
    """The finding of a file whose check failed inside shardcheck, not for a budget of
    the file's (a worker that died, an exception outside the rules): an internal error,
    so the run exits 2 rather than pass with the file's findings missing."""
    return _meta(INTERNAL_ERROR, f"shardcheck failed while checking this file ({why}), so "
                 "its findings are missing; please report it with this file", path, 1, 1)


_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # Python's line breaks (str.splitlines has more)


def _suppressions(text: str, comments_out: Optional[list] = None
                  ) -> Tuple[dict, List[Tuple[int, int, str]]]:
    """(line number -> codes/names suppressed there, '*' for all; the unknown names
    in `# shardcheck: ignore[...]` comments as (line, column, name)). Only comments
    count, not the same text inside a string. ``comments_out`` collects each comment as
    (line, column, "shardcheck" or "noqa", the items it names)."""
    out: dict = {}
    unknown: List[Tuple[int, int, str]] = []
    known: Optional[set] = None
    comments: Optional[Dict[int, int]] = None
    tokenized = False
    for i, line in enumerate(_LINE_BREAK.split(text), 1):
        if "#" not in line:
            continue
        for m in _SUPPRESS.finditer(line):
            if not tokenized:
                comments, tokenized = _comment_starts(text), True
            if comments is not None and not (i in comments and comments[i] <= m.start()):
                continue
            if m.group("noqa") is not None:
                items = {c.strip().upper() if c.strip().upper().startswith("SC") else c.strip()
                         for c in re.split(r"[,\s]+", m.group("noqa")) if c.strip()}
            elif m.group("codes") is not None:
                items = {c.strip() for c in m.group("codes").split(",") if c.strip()}
                if known is None:
                    known = set(all_rules()) | {r.NAME for r in all_rules().values()}
                for c in sorted(items):
                    if c not in known and c.upper() not in known:
                        unknown.append((i, m.start() + 1, c))
                items = {c.upper() if c.upper() in known else c for c in items}
            else:
                items = {"*"}
            out.setdefault(i, set()).update(items)
            if comments_out is not None:
                kind = "noqa" if m.group(0).lstrip("#").strip().lower().startswith("noqa") \
                    else "shardcheck"
                comments_out.append((i, m.start() + 1, kind, items))
    return out, unknown


def _comment_starts(text: str) -> Optional[Dict[int, int]]:
    """Line -> column where its comment starts; None if the text does not tokenize
    (then every match counts, as a best effort for a file that does not parse)."""
    starts: Dict[int, int] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                starts[tok.start[0]] = tok.start[1]
    except (tokenize.TokenError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return starts


def _suppressed(f: Finding, sup: dict) -> bool:
    for row in {f.row, f.end_row}:
        items = sup.get(row)
        if items and ("*" in items or f.code in items or f.name in items):
            return True
    return False


def check_source(source: bytes | str, path: str = "<string>", config: Optional[Config] = None,
                 project: Optional[Project] = None, module_name: Optional[str] = None,
                 rule_codes: Optional[Iterable[str]] = None) -> List[Finding]:
    """All findings for one file's source, sorted by position.

    Never raises for bad input: undecodable bytes, or source CPython rejects, is one
    ``syntax-error`` finding; a crash inside the model or a rule is an ``internal-error``
    finding; nesting too deep to analyse is a ``skipped-file`` finding."""
    config = config or Config()
    codes = set(rule_codes) if rule_codes is not None else set(config.enabled_codes())
    codes -= set(config.ignored_for(path))
    if notebooks.is_notebook(path):  # its code cells, joined; findings go back to cells
        broken: List[Tuple[int, int, int, str]] = []
        try:
            text, where = notebooks.python_of(source.encode() if isinstance(source, str)
                                              else source, broken)
        except notebooks.NotANotebook as e:
            return [_meta(SYNTAX_ERROR, f"this file does not parse: {e}", path, 1, 1)]
        cells = [dc_replace(_meta(SYNTAX_ERROR, f"this cell does not parse: {msg} (Jupyter "
                                  "raises SyntaxError when it runs; the other cells are checked)",
                                  path, row, col), cell=cell)
                 for cell, row, col, msg in broken]
        found = notebooks.locate(_check_python(text, path, config, project, "", codes),
                                 path, where)
        return sorted(cells + found, key=lambda f: (f.cell or 0, f.row, f.column))
    return _check_python(source, path, config, project, module_name, codes)


def _check_python(source: bytes | str, path: str, config: Config, project: Optional[Project],
                  module_name: Optional[str], codes: set) -> List[Finding]:
    """``check_source`` of Python source (a notebook's cells, joined, included)."""
    try:
        findings, text = degrading_deep_statements(_findings, source, path, config, project,
                                                   module_name, codes)
    except (RecursionError, MemoryError) as e:
        findings = [too_deep(path, e)]
        text = source if isinstance(source, str) else source.decode("utf-8", errors="replace")
    return _kept(findings, path, text, codes, config, project)


def _kept(findings: List[Finding], path: str, text: str, codes: set, config: Config,
          project: Optional[Project]) -> List[Finding]:
    """The findings each file's selection and suppression comments keep, sorted (this
    file's first, then those placed in modules it imports), without duplicates."""
    comments: list = []
    sup, unknown = _suppressions(text, comments)
    for row, col, name in unknown:
        findings.append(_meta(INVALID_SUPPRESSION, f"`# shardcheck: ignore[...]` names {name!r}, "
                              "which is not a rule code or name, so it suppresses nothing; "
                              "`shardcheck rules` lists them", path, row, col))
    sups = {path: sup}
    allowed = {path: codes}
    seen = set()
    used: set = set()  # (line, item) of this file's comments that silenced a finding
    out = []
    for f in sorted(findings, key=lambda f: (f.filename != path, f.filename, f.row, f.column,
                                             f.code, f.message)):
        if f.filename not in sups:  # a module this file imports
            sups[f.filename] = _suppressions(project.text_of(f.filename)
                                             if project is not None else "")[0]
            allowed[f.filename] = set() if config.is_excluded(f.filename) else (
                codes - set(config.ignored_for(f.filename)))
        key = (f.filename, f.code, f.row, f.column, f.message)
        if key in seen or f.code not in allowed[f.filename]:
            continue
        if f.code != INVALID_SUPPRESSION and _suppressed(f, sups[f.filename]):
            if f.filename == path:
                used.update((row, item) for row in (f.row, f.end_row)
                            for item in ("*", f.code, f.name))
            continue
        seen.add(key)
        out.append(f)
    if config.warn_unused_ignores:
        out.extend(_unused(comments, used, codes, path))
    return out


def _unused(comments: list, used: set, codes: set, path: str) -> List[Finding]:
    """``unused-suppression`` findings: the items of each comment that silenced no
    finding on their line. In a ``# noqa``, only shardcheck's codes count (other tools
    read the same comment), and a bare ``# noqa`` never; a code not enabled here is left
    alone (another configuration may need it)."""
    from .catalog import rule_table
    names = {r.NAME: c for c, r in rule_table().items()}
    out = []
    for row, col, kind, items in comments:
        for item in sorted(items):
            code = names.get(item, item.upper())
            if kind == "noqa" and (item == "*" or code not in rule_table()):
                continue
            if item != "*" and (code not in codes or code not in rule_table()):
                continue
            if (row, item) in used or (row, code) in used:
                continue
            what = ("`# shardcheck: ignore` silences nothing: no finding is reported on this "
                    "line" if item == "*" else f"{item!r} in this suppression comment silences "
                    f"nothing: no {item} finding is reported on this line")
            out.append(_meta(UNUSED_SUPPRESSION, f"{what}. Remove it, so a later finding here "
                             "is not silenced unseen", path, row, col))
    return out


def _findings(source: bytes | str, path: str, config: Config, project: Optional[Project],
              module_name: Optional[str], codes: set) -> Tuple[List[Finding], str]:
    """(the unfiltered findings, the text read for suppression comments)."""
    text: Optional[str] = source if isinstance(source, str) else None
    try:
        if text is None:
            text = decode_source(source)  # type: ignore[arg-type]  # bytes here
        words = declared_words(config)
        if cleared(text, path, project, module_name, words):
            return [], text  # no sharding API within reach: nothing for the rules (precheck)
        kept = _relevant_text(text, path, config, project, module_name, words)
        module = parse_source(text, path, kept[0] if kept is not None else None)
    except SourceError as e:
        finding = _meta(SYNTAX_ERROR, e.msg, path, e.lineno or 1, e.offset or 1)
    except LibcstLimitation as e:
        finding = _meta(INTERNAL_ERROR, "shardcheck's parser (libcst) cannot read this file, "
                        f"though Python can: {e}", path, e.row, e.column)
    else:
        return _analysed(module, text, path, config, project, module_name, codes, kept), text
    if text is None:
        text = source.decode("utf-8", errors="replace")  # type: ignore[union-attr]  # bytes here: str returned above
    return [finding], text


def _relevant_text(text: str, path: str, config: Config, project: Optional[Project],
                   module_name: Optional[str], words: FrozenSet[str]
                   ) -> Optional[Tuple[str, List[int]]]:
    """The statements of ``text`` that can matter to a finding, and the row in ``text``
    of each line (``relevance.kept``), or None to parse it whole (as ``shardcheck
    specs`` does: its map lists every site)."""
    from . import relevance
    if config.assume_defaults or not relevance.ENABLED:
        return None
    if module_name is None:
        module_name = module_name_for(path) if os.path.isfile(path) else ""
    return relevance.kept(text, project, module_name, os.path.basename(path) == "__init__.py",
                          words)


def too_deep(path: str, exc: BaseException) -> Finding:
    """The finding of a file whose analysis ran out of stack or memory: a limit of
    shardcheck's, reported as a skipped file, not an internal error."""
    if isinstance(exc, RecursionError):
        return skipped(path, "it is too deeply nested to analyse")
    return skipped(path, "it is too large to analyse in the memory available (memory-per-file)")


def _analysed(module: cst.Module, text: str, path: str, config: Config,
              project: Optional[Project], module_name: Optional[str], codes: set,
              kept: Optional[Tuple[str, List[int]]] = None) -> List[Finding]:
    """The findings of the analysis and the rules; a crash inside them is an
    ``internal-error`` finding naming where (``RecursionError``/``MemoryError``
    propagate: those are the file's size, not a bug). ``kept``: ``relevance.kept``'s
    text and rows, offered to ``parse_source`` (the rows place findings if it was read)."""
    if module_name is None:
        module_name = module_name_for(path) if os.path.isfile(path) else ""
    read = source_of(module)  # before the analysis parses the modules it imports
    rows = kept[1] if kept is not None and read is kept[0] else None
    try:
        model = analyze(module, module_name, config, project, explain=False)
        # at another mesh (--mesh), the program's own meshes tell what the scaling causes
        base = (analyze(module, module_name, dc_replace(config, scale_mesh=None), project,
                        explain=False)
                if config.scale_mesh is not None else None)
    except (RecursionError, MemoryError):
        raise
    except Exception as exc:  # the model is shared by all rules: nothing to check
        if from_recursion(exc):  # libcst re-raises a RecursionError as other errors
            raise RecursionError("nested too deeply to analyse") from exc
        return [_internal(path, "the semantic model", exc)]
    findings, pending = _run_rules(model, path, config, codes)
    if base is not None:
        pending = scale_caused(pending, _run_rules(base, path, config, codes)[1], model)
    if pending:
        findings.extend(_place(module, path, pending, model.raises_blocks, project,
                               _helper_specs(model), read, rows))
    return findings


def _run_rules(model: "Interpreter", path: str, config: Config,
               codes: set) -> Tuple[List[Finding], List[Pending]]:
    """(internal-error findings of rules that crashed, what the others report)."""
    findings: List[Finding] = []
    pending: List[Pending] = []
    ctx = RuleContext(model, path, config)
    for code, rule_cls in all_rules().items():
        if code not in codes or rule_cls.META:
            continue
        try:
            pending.extend(rule_cls().check(ctx))
        except (RecursionError, MemoryError):
            raise
        except Exception as exc:
            if from_recursion(exc):
                raise RecursionError("nested too deeply to analyse") from exc
            findings.append(_internal(path, f"rule {code} {rule_cls.NAME}", exc))
    return findings, pending


# Rules comparing a declared type with the inferred one: at another mesh size they
# repeat what an earlier failure caused, or compare with a global shape the scaling
# changed (a shard_map output built from a local type the source states for its own mesh).
_DECLARATION_CONFLICTS = frozenset({"SC204", "SC307", "SC308", "SC309"})


def scale_caused(scaled: List[Pending], base: List[Pending],
                 model: "Interpreter") -> List[Pending]:
    """The findings at another mesh size (``--mesh``) worth reporting, given ``base``,
    the findings at the program's own meshes.

    A declaration conflict found at both sizes is kept. One found only at the new size
    is dropped when the scaling already breaks the program elsewhere (an error-level
    finding of another kind, such as SC104, that only the new size has: JAX stops
    there, and what follows is its consequence), or when it compares a global value
    whose shape differs from the declared one (global shapes do not depend on the
    mesh, so the difference is the scaling's artefact, not the program's)."""
    at_base = {(p.code, id(p.node)) for p in base}
    new = [p for p in scaled if (p.code, id(p.node)) not in at_base]
    breaks = any(p.code not in _DECLARATION_CONFLICTS and p.severity == ERROR for p in new)
    facts = {id(f.node): f.fact for f in model.events.facts}
    kept = []
    for p in scaled:
        if p.code in _DECLARATION_CONFLICTS and (p.code, id(p.node)) not in at_base and (
                breaks or _global_shape_differs(facts.get(id(p.node)))):
            continue
        kept.append(p)
    return kept


def _global_shape_differs(fact: object) -> bool:
    """An annotation conflict on a global value (not inside shard_map) whose known
    sizes differ from the declared ones."""
    from .facts import AnnotationConflict
    if not isinstance(fact, AnnotationConflict):
        return False
    declared, inferred = fact.declared, fact.inferred
    if declared.varying or inferred.varying or inferred.shape is None \
            or len(inferred.shape) != len(declared.dims):
        return False
    return any(d.size is not None and s is not None and d.size != s
               for d, s in zip(declared.dims, inferred.shape))


def _internal(path: str, what: str, exc: BaseException) -> Finding:
    tb = traceback.extract_tb(exc.__traceback__)
    where = f" at {os.path.basename(tb[-1].filename)}:{tb[-1].lineno}" if tb else ""
    return _meta(INTERNAL_ERROR, f"{what} crashed on this file ({type(exc).__name__}: {exc}"
                 f"{where}); please report it. Other rules' findings are kept.", path, 1, 1)


class _Places:
    """Where nodes are: in the checked module, or in a module it imports (a function of
    another file that this file calls is analyzed here, under this file's contexts)."""

    def __init__(self, module: cst.Module, path: str, project: Optional[Project],
                 read: Optional[str] = None, rows: Optional[List[int]] = None):
        # the places of the few nodes asked about, unless the text read is not known
        self.own = Positions(module, read, rows) if read is not None else node_positions(module)
        self.path = path
        self.project = project

    def at(self, node: Optional[cst.CSTNode]) -> Optional[Tuple[str, CodeRange]]:
        if node is None:
            return None
        r = self.own.get(node)
        if r is not None:
            return self.path, r
        hit = self.project.locate(node) if self.project is not None else None
        if hit is None:
            return None
        # spelled as the checked file is: relative to the working directory, or absolute
        where = hit[0] if os.path.isabs(self.path) else os.path.relpath(hit[0])
        return where, hit[1]


def _helper_specs(model: "Interpreter") -> dict:
    """Call node -> the P(...) inside the helper function it called, for every spec a
    helper built (a finding about such a spec points at the call, and notes the helper)."""
    out = dict(model.helper_origins)
    for use in list(model.events.spec_uses) + list(model.events.axis_typed):
        if use.spec.built_at is not None and use.spec.node is not None:
            out[use.spec.node] = use.spec.built_at
    return out


def _place(module: cst.Module, path: str, pending: List[Pending], raises_blocks: list,
           project: Optional[Project] = None, helper_specs: Optional[dict] = None,
           read: Optional[str] = None, rows: Optional[List[int]] = None) -> List[Finding]:
    """Findings at their nodes' files and lines: a node in an imported module is
    reported there, once, not copied to this file."""
    places = _Places(module, path, project, read, rows)
    helper_specs = helper_specs or {}
    ranges: List[Tuple[str, int, int]] = []
    for w in raises_blocks:
        at = places.at(w)
        if at is not None:
            ranges.append((at[0], at[1].start.line, at[1].end.line))
    out = []
    for p in pending:
        at = places.at(p.node)
        where, r = at if at is not None else (path, None)
        row, col, erow, ecol = (r.start.line, r.start.column + 1, r.end.line, r.end.column + 1) if r else (1, 1, 1, 1)
        fix = None
        fat = places.at(p.fix_node) if p.fix_node is not None else at
        if p.fix_content is not None and fat is not None and fat[0] == where:
            more = [(places.at(n), text) for n, text in p.fix_more]
            if all(m is not None and m[0] == where for m, _ in more):  # all edits, or no fix
                first, *rest = [_edit(fat[1], p.fix_content)] + \
                    [_edit(m[1], text) for m, text in more]  # type: ignore[index]  # checked above
                fix = Fix(p.fix_message or "apply the suggested replacement", *first,
                          "unsafe" if p.fix_unsafe else "safe", tuple(rest))
        inside = any(f == where and a <= row <= b for f, a, b in ranges)
        fails = places.at(p.fails_at) if p.fails_at is not None else None
        if fails is not None:  # a spec written outside the block, used inside it
            inside = inside or any(f == fails[0] and a <= fails[1].start.line <= b
                                   for f, a, b in ranges)
        related = []
        notes = list(p.related)
        if p.node in helper_specs:
            notes.append((helper_specs[p.node], "the spec is built here, by the helper this "
                          "line calls"))
        for node, note in notes:
            rat = places.at(node)
            if rat is not None:
                rp, rr = rat
                related.append(Related(note, rp, rr.start.line, rr.start.column + 1,
                                       rr.end.line, rr.end.column + 1))
        out.append(Finding(p.code, p.name, p.message, p.severity, where, row, col, erow, ecol,
                           fix, inside, tuple(related)))
    return out


def _edit(r, content: str) -> Tuple[int, int, int, int, str]:
    """A fix's edit of the text at ``r`` (a ``CodeRange``); ``DELETE_LINE``: its lines."""
    from .codemods import DELETE_LINE
    if content == DELETE_LINE:
        return (r.start.line, 1, r.end.line + 1, 1, "")
    return (r.start.line, r.start.column + 1, r.end.line, r.end.column + 1, content)


def check_file(path: str, config: Optional[Config] = None,
               project: Optional[Project] = None) -> List[Finding]:
    """All findings for the file at ``path`` (see ``read_and_check``)."""
    return read_and_check(path, config or Config(), project)[1]


def read_and_check(path: str, config: Config, project: Optional[Project] = None,
                   data: Optional[bytes] = None) -> Tuple[Optional[bytes], List[Finding]]:
    """(the bytes read, or None if it could not be read; the file's findings). ``data``:
    the file's bytes if the caller has read them already (the cache hashed them).

    A file that cannot be read (permission denied, a dangling symlink, a symlink loop),
    is not a regular file (a FIFO), or is a generated file over the size limit is one
    ``skipped-file`` finding."""
    try:
        data = read_source(path) if data is None else data
    except Unreadable as e:
        return None, [skipped(path, str(e))]
    limit = config.generated_size_limit
    if limit and len(data) > limit and looks_generated(path, data):
        return data, [skipped(path, f"it looks generated and is larger than "
                                    f"generated-size-limit ({_size(limit)}); set "
                                    "`generated-size-limit = 0` to check it")]
    return data, check_source(data, path, config, project)


def _size(n: int) -> str:
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n} bytes"


@dataclass(frozen=True)
class InferredType:
    """What the analyzer believes a name holds after an assignment."""

    row: int
    column: int
    name: str
    type: Optional[str]  # JAX's syntax, or None when (partly) unknown
    partial: str  # what is known, e.g. "?[8@x,?]", for unknown ones


def analyze(module: cst.Module, module_name: str, config: Config,
            project: Optional[Project] = None, definitions_only: bool = False,
            trace=None, path: Optional[str] = None, explain: bool = True) -> "Interpreter":
    """The one factory of a module's analysis: every consumer (check, types, confirm,
    the project's import resolution, the server's hover) builds it here, so options such
    as the declared meshes, the default mesh and ``--mesh`` apply everywhere alike.
    ``trace(interpreter)`` runs before the analysis (``hover`` wraps its evaluation).
    ``path``: the module's file, where ``shardcheck specs`` looks for its Python config.
    ``explain``: say why each unknown sharding site is unknown (the map's ``reason``;
    nothing else reads it, and ``check`` does without: its walks cost up to a tenth)."""
    from .compat import profile_for
    from .interp.model import Interpreter
    it = Interpreter(module, module_name, project, config.mesh_values(),
                     config.default_mesh_value(), definitions_only=definitions_only,
                     scale_mesh=config.scale_mesh_value(), profile=profile_for(config.jax_version))
    it.logical_config = config.logical  # read by jaxapi/logical.py
    it.assume_defaults = config.assume_defaults  # shardcheck specs (interp/objects.py)
    it.explain_sites = explain
    if config.assume_defaults and path is not None:  # shardcheck specs (analyzer/pyconfig.py)
        from .pyconfig import find_for
        found = find_for(path, config.root)
        if found is not None:
            if project is not None:
                project.used.add(found)  # a cached result goes stale when the config changes
            it.python_config = (found, os.path.relpath(found, config.root)
                                if config.root else found)
            it.logical_config = _with_python_config_rules(config, *it.python_config)
    if trace is not None:
        trace(it)
    return it.build()


class NotAnalysed(Exception):
    """A file whose analysis ran past shardcheck's limits (too deeply nested or too large)."""


def _model(source: bytes | str, path: str, config: Config, project: Optional[Project]):
    """The built analysis of ``source``: ``SyntaxError`` (whose message says why) when
    it does not decode or parse. Call it on a deep stack (``on_deep_stack``)."""
    text = source if isinstance(source, str) else decode_source(source)
    try:
        module = parse_source(text, path)
    except LibcstLimitation as e:
        raise SyntaxError(f"shardcheck's parser (libcst) cannot read this file, though Python "
                          f"can: {e}") from None
    name = module_name_for(path) if os.path.isfile(path) else ""
    return analyze(module, name, config, project, path=path if name else None)


def _with_python_config_rules(config: Config, found: str, shown: str):
    """Where the project declares and discovers no logical axis rules, those the
    script's Python config ``found`` sets to literals."""
    declared = config.logical
    if declared is not None and declared.rules is not None:
        return declared
    from .config import ConfigError
    from .logical_config import LogicalConfig, _axes, _rules
    from .pyconfig import literal_fields
    fields = literal_fields(found)
    if "logical_axis_rules" not in fields:
        return declared
    axes_v = fields.get("mesh_axes")
    try:
        rules = _rules(fields["logical_axis_rules"], shown)
        axes = _axes(axes_v, shown) if axes_v is not None else None
    except ConfigError:  # not a rule table: as if it set none
        return declared
    wrappers = declared.wrappers if declared is not None else ()
    return LogicalConfig(rules, axes, wrappers, shown, discovered=True)


def _deep_or_not_analysed(fn, *args):
    try:
        return degrading_deep_statements(fn, *args)
    except (RecursionError, MemoryError) as e:
        raise NotAnalysed(too_deep(args[1], e).message.replace("this file was not analysed: ",
                                                               "")) from None


def infer_types(source: bytes | str, path: str = "<string>", config: Optional[Config] = None,
                project: Optional[Project] = None) -> List[InferredType]:
    """Every array-valued assignment and the type inferred for it (``shardcheck types``).

    A line analyzed more than once (a loop body, a function called in several
    contexts) keeps its type only if every analysis agrees. Raises ``SyntaxError``
    for source that does not decode or parse, ``NotAnalysed`` past the limits."""
    return _deep_or_not_analysed(_infer_types, source, path, config, project)


def _infer_types(source: bytes | str, path: str, config: Optional[Config],
                 project: Optional[Project]) -> List[InferredType]:
    model = _model(source, path, config or Config(), project)
    by_node: dict = {}
    for rec in model.events.types:
        t = rec.value.sharding_type(rec.mesh_order)
        entry = (str(t) if t is not None else None, str(rec.value), rec.name)
        prev = by_node.get(rec.node)
        if prev is None:
            by_node[rec.node] = entry
        elif prev[0] != entry[0]:
            by_node[rec.node] = (None, prev[1] if prev[1] == entry[1] else "?", rec.name)
    if not by_node:
        return []
    positions = node_positions(model.module)
    out = []
    for node, (t, partial, nm) in by_node.items():
        pos = positions.get(node)
        if pos is None:
            continue
        out.append(InferredType(pos.start.line, pos.start.column + 1, nm, t, partial))
    return sorted(out, key=lambda r: (r.row, r.column))


@dataclass(frozen=True)
class JitCallSite:
    """A call of a jitted function whose inputs the analyzer knows (``confirm --mesh``).

    ``target`` is the module-level name that holds the function; ``wrap``: it holds the
    plain function, jitted at the call (``jax.jit(f)(x)``). ``args``/``kwargs`` are
    JSON trees: ``{"type": "float32[16@data,64]"}``, ``{"const": 3}``, ``{"tuple": [...]}``,
    ``{"list": [...]}``, ``{"dict": [[key, tree], ...]}``. ``mesh``: the context mesh
    (names and types known; a size None where unknown). ``skipped`` says why the call
    cannot be re-traced ("" if it can).
    """

    rows: Tuple[int, ...]
    target: str
    wrap: bool
    args: Optional[list]
    kwargs: Optional[dict]
    mesh: Optional[PartialMesh]
    skipped: str = ""


def _tree(v, order) -> Optional[dict]:
    from .values import ArrayVal, Const, DictVal, TupleVal
    if isinstance(v, ArrayVal):
        t = v.sharding_type(order)
        return {"type": str(t)} if t is not None and not t.varying else None
    if isinstance(v, Const) and (v.value is None or isinstance(v.value, (bool, int, float, str))):
        return {"const": v.value}
    if isinstance(v, TupleVal):
        items = [_tree(i, order) for i in v.items]
        return None if None in items else {"list" if v.is_list else "tuple": items}
    if isinstance(v, DictVal):
        pairs = [[k, _tree(i, order)] for k, i in v.items]
        if any(t is None or not isinstance(k, (str, int)) for k, t in pairs):
            return None
        return {"dict": pairs}
    return None


def jit_calls(source: bytes | str, path: str = "<string>", config: Optional[Config] = None,
              project: Optional[Project] = None) -> List[JitCallSite]:
    """The jitted functions this file calls, with the inferred types of their inputs.

    Raises ``SyntaxError`` for source that does not parse."""
    return _deep_or_not_analysed(_jit_calls, source, path, config, project)


def _jit_calls(source: bytes | str, path: str, config: Optional[Config],
               project: Optional[Project]) -> List[JitCallSite]:
    from .values import FuncVal
    model = _model(source, path, config or Config(), project)
    positions = node_positions(model.module)
    module_vars = model.env.vars
    merged: dict = {}
    for call in model.events.jit_calls:
        pos = positions.get(call.node)
        if pos is None:
            continue
        jv = call.jit
        bound = [n for n, v in module_vars.items() if v is jv]
        target, wrap, why = "", False, ""
        if bound:
            target = bound[0]
        elif isinstance(jv.func, FuncVal):
            plain = [n for n, v in module_vars.items() if v is jv.func]
            target, wrap = (plain[0], True) if plain else (jv.func.name, False)
            if not plain:
                why = f"{jv.func.name} is not defined at module level"
            elif isinstance(jv.node, cst.Call) and len(jv.node.args) > 1:
                why = f"the options of jax.jit({plain[0]}, ...) are not reproduced"
        else:
            why = "the jitted callable is not a module-level function"
            kind = type(jv.func).__name__
            target = ("<shard_map>" if kind == "ShardMapVal" else "<grad>" if kind == "_GradVal"
                      else "<partial>" if kind == "PartialVal" else "<callable>")
        mesh = call.ctx.mesh if call.ctx.known else None
        mesh_d = None
        if mesh is not None and mesh.names is not None and mesh.types is not None:
            mesh_d = PartialMesh(mesh.names, mesh.sizes, mesh.types)
        elif not why:
            why = "the mesh in context at the call is unknown"
        order = mesh.names if mesh is not None else None
        args = [_tree(a, order) for a in call.args]
        kwargs = {k: _tree(v, order) for k, v in call.kwargs}
        if not why and (None in args or None in kwargs.values()):
            i = next((i for i, a in enumerate(args) if a is None), None)
            why = (f"the type of argument {i + 1} is unknown" if i is not None else
                   f"the type of keyword argument {next(k for k, v in kwargs.items() if v is None)}"
                   " is unknown")
        site = JitCallSite((pos.start.line,), target, wrap, None if why else args,
                           None if why else kwargs, mesh_d, why)
        key = json.dumps([target, wrap, site.args, site.kwargs, mesh_d, why], sort_keys=True,
                         default=str)
        prev = merged.get(key)
        merged[key] = site if prev is None else JitCallSite(
            tuple(sorted(set(prev.rows) | set(site.rows))), *(
                getattr(site, f) for f in ("target", "wrap", "args", "kwargs", "mesh", "skipped")))
    return sorted(merged.values(), key=lambda s: (s.rows, s.target))
