"""Run the rules over one file: parse, build the semantic model, check, then hand the
facts to ``place_findings`` and the findings to ``suppressions``.

Never raises for bad input: a file that does not parse is one ``syntax-error`` finding;
a crash inside the model or a rule is an ``internal-error`` finding naming the rule, and
the other rules' findings are kept.
"""

from __future__ import annotations

import os
from dataclasses import replace as dc_replace
from typing import TYPE_CHECKING, FrozenSet, Iterable, List, Optional, Tuple

import libcst as cst

from . import notebooks
from .at_scale import scale_caused
from .codes import INTERNAL_ERROR, SYNTAX_ERROR
from .config import Config
from .deep import degrading_deep_statements, from_recursion
from .ftypes import Finding, Pending
from .meta_findings import internal_error, meta_finding, skipped, too_deep
from .place_findings import CallSites, helper_specs, place
from .precheck import cleared, declared_words
from .project import Project, module_name_for
from .rule import RuleContext
from .rules import all_rules
from .sources import (LibcstLimitation, SourceError, Unreadable, decode_source, looks_generated,
                      parse_source, read_source, source_of)
from .suppressions import kept_findings

if TYPE_CHECKING:
    from .interp.model import Interpreter


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
            return [meta_finding(SYNTAX_ERROR, f"this file does not parse: {e}", path, 1, 1)]
        cells = [dc_replace(meta_finding(SYNTAX_ERROR, f"this cell does not parse: {msg} (Jupyter "
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
    return kept_findings(findings, path, text, codes, config, project)


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
        if project is not None and project.shares_parse(path):
            kept, module = None, project.shared_parse(path, text)  # its importers' parse
        else:
            kept = _relevant_text(text, path, config, project, module_name, words)
            module = parse_source(text, path, kept[0] if kept is not None else None)
    except SourceError as e:
        finding = meta_finding(SYNTAX_ERROR, e.msg, path, e.lineno or 1, e.offset or 1)
    except LibcstLimitation as e:
        finding = meta_finding(INTERNAL_ERROR, "shardcheck's parser (libcst) cannot read this file, "
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
        return [internal_error(path, "the semantic model", exc)]
    calls = CallSites(model)
    findings, pending = _run_rules(model, path, config, codes, calls)
    if base is not None:
        pending = scale_caused(pending, _run_rules(base, path, config, codes)[1], model)
    if pending:
        findings.extend(place(module, path, pending, model.raises_blocks, project,
                              helper_specs(model), read, rows, calls))
    return findings


def _run_rules(model: "Interpreter", path: str, config: Config, codes: set,
               calls: Optional[CallSites] = None) -> Tuple[List[Finding], List[Pending]]:
    """(internal-error findings of rules that crashed, what the others report)."""
    findings: List[Finding] = []
    pending: List[Pending] = []
    ctx = RuleContext(model, path, config, calls)
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
            findings.append(internal_error(path, f"rule {code} {rule_cls.NAME}", exc))
    return findings, pending


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
    from . import jaxapi  # noqa: F401  (registers what each API means: the interpreter asks)
    from .compat import profile_for
    from .interp.model import Interpreter, Options
    logical, python_config = config.logical, None
    if config.assume_defaults and path is not None:  # shardcheck specs (analyzer/pyconfig.py)
        from .pyconfig import find_for
        found = find_for(path, config.root)
        if found is not None:
            if project is not None:
                project.used.add(found)  # a cached result goes stale when the config changes
            python_config = (found, os.path.relpath(found, config.root) if config.root else found)
            logical = _with_python_config_rules(config, *python_config)
    it = Interpreter(module, project, Options(
        module_name=module_name, config_meshes=config.mesh_values(),
        default_mesh=config.default_mesh_value(), scale_mesh=config.scale_mesh_value(),
        definitions_only=definitions_only, profile=profile_for(config.jax_version),
        logical_config=logical, assume_defaults=config.assume_defaults, explain_sites=explain,
        python_config=python_config))
    if trace is not None:
        trace(it)
    return it.build()


class NotAnalysed(Exception):
    """A file whose analysis ran past shardcheck's limits (too deeply nested or too large)."""


def _model(source: bytes | str, path: str, config: Config, project: Optional[Project],
           relevant: bool = False):
    """The built analysis of ``source``: ``SyntaxError`` (whose message says why) when
    it does not decode or parse. Call it on a deep stack (``on_deep_stack``).
    ``relevant``: only the statements that can reach a sharding site are parsed
    (``relevance.kept``); the model's ``rows`` then say where each line of what was
    parsed is in the file."""
    text = source if isinstance(source, str) else decode_source(source)
    kept = None
    if relevant:
        from . import relevance
        if relevance.ENABLED:
            module_name = module_name_for(path) if os.path.isfile(path) else ""
            kept = relevance.kept(text, project, module_name,
                                  os.path.basename(path) == "__init__.py", declared_words(config))
    try:
        module = parse_source(text, path, kept[0] if kept is not None else None)
    except LibcstLimitation as e:
        raise SyntaxError(f"shardcheck's parser (libcst) cannot read this file, though Python "
                          f"can: {e}") from None
    name = module_name_for(path) if os.path.isfile(path) else ""
    model = analyze(module, name, config, project, path=path if name else None)
    read = source_of(module)
    model.rows = kept[1] if kept is not None and read is kept[0] else None
    return model


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


