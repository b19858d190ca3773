"""``shardcheck server``: a language server (LSP over stdio, on pygls and lsprotocol).

It publishes ``check``'s findings for each open Python file on open, change and save
(the editor's buffer, checked as ``check - --stdin-filename PATH`` checks it: the
file's ``[tool.shardcheck]``, its ``per-file-ignores`` and ``exclude``, sibling imports
read from disk), offers each finding's fix as a quick fix and all safe fixes as
``source.fixAll.shardcheck``, and on hover shows the sharding type shardcheck infers
for the array expression under the cursor.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Dict, List, Optional, Tuple

from ._version import __version__

FIX_ALL = "source.fixAll.shardcheck"


class _Document:
    """What the last analysis of one document gave."""

    def __init__(self, version: Optional[int], source: str, findings: list) -> None:
        self.version, self.source, self.findings = version, source, findings


class _Settings:
    """The config and project for a file, cached per pyproject.toml (and its mtime)."""

    def __init__(self) -> None:
        self._configs: Dict[Tuple[str, float], Any] = {}

    def config(self, path: str):
        """(config, None) or (None, the config error's message)."""
        from shardcheck.analyzer import config as cfgmod
        found = cfgmod.find_pyproject(path)
        try:
            key = (found or "", os.stat(found).st_mtime if found else 0.0)
        except OSError:
            key = (found or "", 0.0)
        if key not in self._configs:
            try:
                self._configs = {key: cfgmod.load(None, start=path)}
            except cfgmod.ConfigError as e:
                return None, str(e)
        return self._configs[key], None

    @staticmethod
    def project(cfg, path: str):
        from shardcheck.analyzer.project import Project
        project = Project(cfg)
        if os.path.isfile(path):  # its siblings import as they would from the file
            project.add_file(path)
        return project


class _Handlers:
    """The server's state (the last analysis of each document) and its answers."""

    def __init__(self, ls, t) -> None:
        from pygls.uris import from_fs_path, to_fs_path
        self.ls, self.t = ls, t
        self.from_fs_path, self.to_fs_path = from_fs_path, to_fs_path
        self.docs: Dict[str, _Document] = {}
        self.hovers: Dict[str, Tuple[str, Any]] = {}  # uri -> (source, its HoverIndex)
        self.settings = _Settings()

    def rng(self, lines: List[str], row: int, col: int, end_row: int, end_col: int):
        """1-based rows, 1-based code-point columns -> an LSP range in the client's units."""
        t = self.t
        r = t.Range(start=t.Position(line=max(row - 1, 0), character=max(col - 1, 0)),
                    end=t.Position(line=max(end_row - 1, 0), character=max(end_col - 1, 0)))
        return self.ls.workspace.position_codec.range_to_client_units(lines, r)

    def diagnostic(self, f, index: int, lines: List[str]):
        from shardcheck.analyzer.ftypes import ERROR
        t = self.t
        related = []
        for r in f.related:
            other = lines if os.path.abspath(r.filename) == os.path.abspath(f.filename) else []
            related.append(t.DiagnosticRelatedInformation(
                location=t.Location(uri=self.from_fs_path(os.path.abspath(r.filename)) or r.filename,
                                    range=self.rng(other, r.row, r.column, r.end_row, r.end_column)),
                message=r.message))
        return t.Diagnostic(
            range=self.rng(lines, f.row, f.column, f.end_row, f.end_column), message=f.message,
            severity=t.DiagnosticSeverity.Error if f.severity == ERROR else t.DiagnosticSeverity.Warning,
            code=f.code, source="shardcheck", related_information=related or None,
            data={"index": index})

    def _config_error(self, problem: str) -> list:
        t = self.t
        message = f"shardcheck: config error: {problem}"
        self.ls.window_log_message(t.LogMessageParams(type=t.MessageType.Error, message=message))
        start = t.Position(line=0, character=0)
        return [t.Diagnostic(range=t.Range(start=start, end=start), message=message,
                             severity=t.DiagnosticSeverity.Error, source="shardcheck")]

    def analyse(self, uri: str) -> Optional[_Document]:
        """Check the document as it is now and publish its diagnostics."""
        from shardcheck.analyzer.engine import check_source
        t = self.t
        doc = self.ls.workspace.get_text_document(uri)
        path = self.to_fs_path(uri)
        if path is None or not (path.endswith((".py", ".pyi")) or doc.language_id == "python"):
            return None
        source = doc.source
        cfg, problem = self.settings.config(path)
        findings: list = []
        if cfg is None:
            diagnostics = self._config_error(problem or "")
        else:
            here = os.path.abspath(path)
            if not cfg.is_excluded(here):
                found = check_source(source, path, cfg, self.settings.project(cfg, path))
                # a finding placed in a module this one imports belongs to that file
                findings = self._baselined(cfg, [f for f in found
                                                 if os.path.abspath(f.filename) == here])
            diagnostics = [self.diagnostic(f, i, doc.lines) for i, f in enumerate(findings)]
        self.docs[uri] = _Document(doc.version, source, findings)
        self.ls.text_document_publish_diagnostics(
            t.PublishDiagnosticsParams(uri=uri, version=doc.version, diagnostics=diagnostics))
        return self.docs[uri]

    def _baselined(self, cfg, findings: list) -> list:
        """The findings the config's baseline file does not hide (all, if it is bad)."""
        if not cfg.baseline:
            return findings
        from shardcheck.analyzer.baseline import BaselineError, load
        try:
            return load(cfg.baseline).split(findings)[0]
        except BaselineError as e:
            self.ls.window_log_message(self.t.LogMessageParams(
                type=self.t.MessageType.Warning, message=f"shardcheck: baseline error: {e}"))
            return findings

    def current(self, uri: str) -> Optional[_Document]:
        known = self.docs.get(uri)
        if known is not None and known.source == self.ls.workspace.get_text_document(uri).source:
            return known
        return self.analyse(uri)

    def close(self, uri: str) -> None:
        self.docs.pop(uri, None)
        self.hovers.pop(uri, None)
        self.ls.text_document_publish_diagnostics(
            self.t.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def code_action(self, params):
        t = self.t
        uri = params.text_document.uri
        known = self.current(uri)
        if known is None:
            return None
        lines = self.ls.workspace.get_text_document(uri).lines
        only = params.context.only
        actions = []
        if not only or any(str(k).startswith("quickfix") for k in only):
            actions += _quick_fixes(t, params, known, lines, self.rng, uri)
        if not only or any(FIX_ALL.startswith(str(k)) for k in only):
            fix_all = _fix_all(t, known, lines, uri, self.to_fs_path(uri) or uri)
            if fix_all is not None:
                actions.append(fix_all)
        return actions or None

    def hover(self, params):
        from shardcheck.analyzer.hover import index
        t = self.t
        uri = params.text_document.uri
        doc = self.ls.workspace.get_text_document(uri)
        path = self.to_fs_path(uri)
        if path is None:
            return None
        cfg = self.settings.config(path)[0]
        if cfg is None:
            return None
        cached = self.hovers.get(uri)
        if cached is None or cached[0] != doc.source:  # one analysis per version
            cached = self.hovers[uri] = (doc.source, index(doc.source, path, cfg,
                                                           self.settings.project(cfg, path)))
        pos = self.ls.workspace.position_codec.position_from_client_units(doc.lines, params.position)
        found = cached[1].at(pos.line + 1, pos.character + 1)
        if found is None:
            return None
        return t.Hover(contents=t.MarkupContent(kind=t.MarkupKind.Markdown, value=found.markdown()),
                       range=self.rng(doc.lines, found.row, found.column, found.end_row,
                                      found.end_column))


def build():
    """The server, its features registered (ImportError when pygls is not installed)."""
    from lsprotocol import types as t
    from pygls.lsp.server import LanguageServer

    ls = LanguageServer("shardcheck", __version__)
    h = _Handlers(ls, t)

    @ls.feature(t.TEXT_DOCUMENT_DID_OPEN)
    def did_open(params: t.DidOpenTextDocumentParams) -> None:
        h.analyse(params.text_document.uri)

    @ls.feature(t.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(params: t.DidChangeTextDocumentParams) -> None:
        h.analyse(params.text_document.uri)

    @ls.feature(t.TEXT_DOCUMENT_DID_SAVE)
    def did_save(params: t.DidSaveTextDocumentParams) -> None:
        h.analyse(params.text_document.uri)  # a save may change what sibling files import

    @ls.feature(t.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(params: t.DidCloseTextDocumentParams) -> None:
        h.close(params.text_document.uri)

    @ls.feature(t.TEXT_DOCUMENT_CODE_ACTION, t.CodeActionOptions(
        code_action_kinds=[t.CodeActionKind.QuickFix, FIX_ALL], resolve_provider=False))
    def code_action(params: t.CodeActionParams):
        return h.code_action(params)

    @ls.feature(t.TEXT_DOCUMENT_HOVER)
    def hover(params: t.HoverParams):
        return h.hover(params)

    return ls


def _quick_fixes(t, params, known: _Document, lines: List[str], rng, uri: str) -> list:
    """A quick fix for each diagnostic in the request whose finding has a fix."""
    actions = []
    for d in params.context.diagnostics:
        if d.source != "shardcheck" or not isinstance(d.data, dict):
            continue
        index = d.data.get("index")
        if not isinstance(index, int) or not 0 <= index < len(known.findings):
            continue
        f = known.findings[index]
        if f.fix is None or f.code != d.code:
            continue
        fix = f.fix
        unsafe = fix.applicability != "safe"
        title = f"{fix.message or 'Fix ' + f.code} ({f.code})" + (" [unsafe: review it]" if unsafe else "")
        edits = [t.TextEdit(range=rng(lines, r, c, er, ec), new_text=content)
                 for r, c, er, ec, content in fix.edits()]
        actions.append(t.CodeAction(title=title, kind=t.CodeActionKind.QuickFix, diagnostics=[d],
                                    is_preferred=not unsafe,
                                    edit=t.WorkspaceEdit(changes={uri: edits})))
    return actions


def _fix_all(t, known: _Document, lines: List[str], uri: str, path: str):
    """One edit applying every safe fix of the document, as ``check --fix`` would
    (None when there is none, or the result would not compile)."""
    from shardcheck.analyzer.fixes import apply_to_text, fixable
    chosen = [f for f in known.findings if fixable(f, unsafe=False)]
    if not chosen:
        return None
    new, applied = apply_to_text(known.source, chosen)
    if not applied or new == known.source:
        return None
    try:
        compile(new, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return None
    end = t.Position(line=len(lines), character=0)
    edit = t.TextEdit(range=t.Range(start=t.Position(line=0, character=0), end=end), new_text=new)
    return t.CodeAction(title=f"shardcheck: apply {len(applied)} safe fix(es)", kind=FIX_ALL,
                        edit=t.WorkspaceEdit(changes={uri: [edit]}))


def run() -> int:
    """Serve LSP on stdin/stdout until the client exits."""
    try:
        server = build()
    except ImportError as e:
        print(f"shardcheck: the language server needs pygls 2 and lsprotocol, which "
              f"shardcheck depends on; reinstall it (pip install 'pygls>=2,<3'): {e}",
              file=sys.stderr)
        return 2
    server.start_io()
    return 0
