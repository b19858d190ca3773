"""``shardcheck server``: a language server (LSP over stdio, on pygls and lsprotocol).

It publishes ``check``'s findings for each open Python file on open, change and save:
the project's answer for the file, as ``check FILE`` gives it (the file's
``[tool.shardcheck]``, its ``per-file-ignores`` and ``exclude``; the project files that
import it analysed too, for the findings their calls prove in it), with the unsaved
buffers of the open documents standing for their files (``project_answer``). A change
to one document re-publishes each open document whose answer read it, or that it reads:
an edit of train.py's mesh re-publishes model.py's findings, which train.py's call of
model.py's function proves. It offers each finding's fix as a quick fix and all safe
fixes as ``source.fixAll.shardcheck``, and on hover shows the sharding type shardcheck
infers for the array expression under the cursor.

Every analysis runs in a warm worker process under the file's ``timeout-per-file`` and
``memory-per-file`` (``supervisor.SourceWorkers``; a document's analysis with its
importers is one task, under one file's budgets): a document past a budget gets
``check``'s skipped-file diagnostic, and the server answers other requests meanwhile.
An analysis of an older version of a document is never published.
"""

from __future__ import annotations

import asyncio
import functools
import os
import sys
from concurrent.futures import Future
from typing import Any, Dict, FrozenSet, List, Optional, Tuple

from shardcheck._version import __version__

FIX_ALL = "source.fixAll.shardcheck"
# worker processes: one is kept for hovers (``SourceWorkers``), and an edit's analyses
# (the edited document's and those of the open documents it calls) share the others; a
# document's runaway analysis leaves one for them
WORKERS = 3


# uri -> the version of each open document an analysis read the buffer of
Seen = Dict[str, Optional[int]]
_CONFIG_SUFFIXES = (".yml", ".yaml", ".json")


class _Document:
    """What the last analysis of one document gave: its findings, the files its answer
    read (``ProjectAnswer.read``) and the open documents' versions it saw."""

    def __init__(self, version: Optional[int], source: str, findings: list,
                 read: FrozenSet[str] = frozenset(), seen: Optional[Seen] = None) -> None:
        self.version, self.source, self.findings = version, source, findings
        self.read, self.seen = read, seen or {}


class _Pending:
    """An analysis under way: the version of the document it analyses, the open
    documents' versions it sees, and its answer."""

    def __init__(self, version: Optional[int], source: str, answer: asyncio.Future,
                 seen: Seen) -> None:
        self.version, self.source, self.answer, self.seen = version, source, answer, seen


class _Settings:
    """The config for a file, cached per pyproject.toml (and its mtime)."""

    def __init__(self) -> None:
        self._configs: Dict[Tuple[str, float], Any] = {}

    def config(self, path: str):
        """(config, None) or (None, the config error's message)."""
        from shardcheck.check import config as cfgmod
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


def _on_loop(future: Future) -> asyncio.Future:
    """``future`` (settled in the workers' thread) as a future of the running loop,
    settled in the loop's thread; left alone once the loop is closed (the server is
    exiting and nobody waits)."""
    loop = asyncio.get_running_loop()
    mirror = loop.create_future()

    def copy(done: Future) -> None:
        if mirror.done():
            return
        if done.cancelled():
            mirror.cancel()
        elif done.exception() is not None:
            mirror.set_exception(done.exception())  # type: ignore[arg-type]
        else:
            mirror.set_result(done.result())

    def settle(done: Future) -> None:
        try:
            loop.call_soon_threadsafe(copy, done)
        except RuntimeError:
            pass
    future.add_done_callback(settle)
    return mirror


class _Handlers:
    """The server's state (the last analysis of each document, the analyses under way)
    and its answers. Everything here runs in the event loop's thread."""

    def __init__(self, ls, t) -> None:
        from pygls.uris import from_fs_path, to_fs_path

        from shardcheck.check.supervisor import SourceWorkers, threaded_start_method
        self.ls, self.t = ls, t
        self.from_fs_path, self.to_fs_path = from_fs_path, to_fs_path
        self.docs: Dict[str, _Document] = {}
        self.checks: Dict[str, _Pending] = {}  # uri -> its latest analysis under way
        # uri -> (its source and the open documents' versions, its HoverIndex)
        self.hovers: Dict[str, Tuple[Any, asyncio.Future]] = {}
        self.settings = _Settings()
        # not forked from here: pygls runs threads, and a child would inherit their locks
        self.workers = SourceWorkers(WORKERS, method=threaded_start_method())
        self.shut_down = False
        self.exit_status = 0  # the input ended with no `exit`: nothing went wrong
        self._said_in_process = False

    def opened(self, uri: str):
        """The document the client opened at ``uri``, or None (never opened, or closed):
        pygls would read one it does not hold from disk."""
        from urllib.parse import unquote
        return self.ls.workspace.text_documents.get(unquote(uri))

    def rng(self, lines: List[str], row: int, col: int, end_row: int, end_col: int):
        """1-based rows, 1-based code-point columns -> an LSP range in the client's units."""
        t = self.t
        r = t.Range(start=t.Position(line=max(row - 1, 0), character=max(col - 1, 0)),
                    end=t.Position(line=max(end_row - 1, 0), character=max(end_col - 1, 0)))
        return self.ls.workspace.position_codec.range_to_client_units(lines, r)

    def _lines_of(self, path: str) -> List[str]:
        """The lines of the file a note points into, for its range in the client's units:
        its open document's, else the file's on disk ([] when it cannot be read)."""
        from shardcheck.analyzer.sources import SourceError, Unreadable, decode_source, read_source
        uri = self.from_fs_path(os.path.abspath(path))
        doc = self.opened(uri) if uri else None
        if doc is not None:
            return doc.lines
        try:
            return decode_source(read_source(path)).splitlines(keepends=True)
        except (Unreadable, SourceError):
            return []

    def diagnostic(self, f, index: int, lines: List[str]):
        from shardcheck.analyzer.ftypes import ERROR
        t = self.t
        related = []
        files: Dict[str, List[str]] = {os.path.abspath(f.filename): lines}
        for r in f.related:  # a note in another file: the call that proves the finding
            where = os.path.abspath(r.filename)
            other = files[where] if where in files else files.setdefault(where, self._lines_of(where))
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

    def _publish(self, uri: str, doc, findings: list, diagnostics: Optional[list] = None,
                 read: FrozenSet[str] = frozenset(), seen: Optional[Seen] = None) -> None:
        self.docs[uri] = _Document(doc.version, doc.source, findings, read, seen)
        if diagnostics is None:
            diagnostics = [self.diagnostic(f, i, doc.lines) for i, f in enumerate(findings)]
        self.ls.text_document_publish_diagnostics(self.t.PublishDiagnosticsParams(
            uri=uri, version=doc.version, diagnostics=diagnostics))

    def _python(self, uri: str, doc) -> Optional[str]:
        """The path of the document at ``uri`` if it is a Python file, else None."""
        path = self.to_fs_path(uri)
        if path is None or not (path.endswith((".py", ".pyi")) or doc.language_id == "python"):
            return None
        return path

    def _sharding_config(self, uri: str, doc) -> Optional[str]:
        """The path of the document at ``uri`` if it is a YAML/JSON file holding a
        sharding config's keys (``config_checks.KEYS``), else None."""
        from shardcheck.analyzer.config_checks import looks_like_sharding_config
        path = self.to_fs_path(uri)
        if path is None or not (path.endswith(_CONFIG_SUFFIXES) or
                                doc.language_id in ("yaml", "json")):
            return None
        return path if looks_like_sharding_config(doc.source) else None

    def _publish_config(self, uri: str, doc, path: str) -> None:
        """A config document's findings (``config-mesh-axes``), as ``shardcheck check
        CONFIG`` gives them for its buffer; read in this process (YAML only: no JAX, no
        libcst), against the logical names the project's files on disk use."""
        from shardcheck.check.discovery import project_files
        from shardcheck.check.project_checks import config_findings
        cfg, problem = self.settings.config(path)
        if cfg is None:
            self._publish(uri, doc, [], self._config_error(problem or ""))
            return
        if cfg.is_excluded(os.path.abspath(path)):
            self._publish(uri, doc, [])
            return
        files = project_files(cfg, [path]) or []
        found = config_findings([path], cfg, files, texts={path: doc.source})
        here = os.path.abspath(path)
        self._publish(uri, doc, self._baselined(
            cfg, [f for f in found if os.path.abspath(f.filename) == here]))

    def _buffers(self) -> Tuple[Tuple[Tuple[str, str], ...], Seen]:
        """(the (path, text) of each open Python document, the version of each)."""
        buffers, seen = [], {}
        for uri, doc in list(self.ls.workspace.text_documents.items()):
            path = self._python(uri, doc)
            if path is not None:
                buffers.append((path, doc.source))
                seen[uri] = doc.version
        return tuple(buffers), seen

    def _task(self, uri: str, doc, kind: str):
        """(the document's analysis as a worker's task, None) or (None, why it has
        none: "other" for a file that is not Python, else its config error). The task
        reads the open documents' buffers for their files."""
        from shardcheck.check.supervisor import HOVER, SourceTask
        path = self._python(uri, doc) if kind != HOVER else self.to_fs_path(uri)
        if path is None:
            return None, "other"
        cfg, problem = self.settings.config(path)
        if cfg is None:
            return None, problem or ""
        files = (path,) if os.path.isfile(path) else ()  # its siblings import as from the file
        overlay = tuple((p, text) for p, text in self._buffers()[0] if p != path)
        return SourceTask(path, doc.source, cfg, files, kind, overlay), None

    def analyse(self, uri: str) -> None:
        """Analyse the document as it is now (the project's answer for it); its
        diagnostics are published when the analysis ends, unless the document (or an
        open document the analysis read) changed meanwhile."""
        from shardcheck.check.supervisor import PROJECT
        doc = self.opened(uri)
        if doc is None or self.shut_down:
            return
        self.checks.pop(uri, None)
        config_path = self._sharding_config(uri, doc)
        if config_path is not None:
            self._publish_config(uri, doc, config_path)
            return
        task, problem = self._task(uri, doc, PROJECT)
        if task is None:
            if problem != "other":
                self._publish(uri, doc, [], self._config_error(problem or ""))
            return
        if task.config.is_excluded(os.path.abspath(task.path)):
            self._publish(uri, doc, [])
            return
        pending = _Pending(doc.version, doc.source, _on_loop(self.workers.submit(task, key=uri)),
                           self._buffers()[1])
        self.checks[uri] = pending
        pending.answer.add_done_callback(lambda _: self._checked(uri, pending, task))

    def _checked(self, uri: str, pending: _Pending, task) -> None:
        from shardcheck.check.supervisor import Superseded
        answer = pending.answer
        if answer.cancelled() or isinstance(answer.exception(), Superseded):
            return  # a newer analysis replaced it
        if answer.exception() is not None:  # a bug of shardcheck's (in-process only)
            self.ls.window_log_message(self.t.LogMessageParams(
                type=self.t.MessageType.Error, message=f"shardcheck: internal error analysing "
                f"{task.path}: {type(answer.exception()).__name__}: {answer.exception()}"))
            return
        if self.checks.get(uri) is not pending:
            return  # the document changed (or closed) since: a newer analysis is under way
        del self.checks[uri]
        doc = self.opened(uri)
        if doc is None or (doc.version, doc.source) != (pending.version, pending.source):
            return
        self._say_if_in_process()
        here = os.path.abspath(task.path)
        result = answer.result()
        # a finding placed in a module this one imports belongs to that file
        findings = [f for f in result.findings if os.path.abspath(f.filename) == here]
        known = self.docs.get(uri)
        # none is known when a budget stopped it: the last answer's stands
        read = frozenset(result.read) or (known.read if known is not None else frozenset())
        self._publish(uri, doc, self._baselined(task.config, findings), read=read,
                      seen=pending.seen)
        self.refresh_related(uri)

    def refresh_related(self, uri: str, read: Optional[FrozenSet[str]] = None) -> None:
        """Analyse again each open document whose answer depends on ``uri`` as it is
        now: its last answer read ``uri``'s file, or ``uri``'s answer (``read``, else the
        last) read its file (``uri`` calls it: train.py's call proves model.py's
        findings), and its latest analysis saw another version of ``uri`` (or saw it
        open, and it is closed now)."""
        path = os.path.abspath(self.to_fs_path(uri) or uri)
        if read is None:
            known = self.docs.get(uri)
            read = known.read if known is not None else frozenset()
        now = self.opened(uri)
        version = now.version if now is not None else None
        for other, known in list(self.docs.items()):
            if other == uri or not (path in known.read or
                                    os.path.abspath(self.to_fs_path(other) or other) in read):
                continue
            latest = self.checks.get(other) or known
            if latest.seen.get(uri) != version:
                self.analyse(other)

    def _say_if_in_process(self) -> None:
        failure = self.workers.failure
        if failure is not None and not self._said_in_process:
            self._said_in_process = True
            self.ls.window_log_message(self.t.LogMessageParams(
                type=self.t.MessageType.Warning,
                message=f"shardcheck: no worker process can start here ({failure}); files are "
                        "analysed in the server's process, without the per-file budgets"))

    def _baselined(self, cfg, findings: list) -> list:
        """The findings the config's baseline file does not hide (all, if it is bad)."""
        if not cfg.baseline:
            return findings
        from shardcheck.check.baseline import BaselineError, load
        try:
            return load(cfg.baseline).split(findings)[0]
        except BaselineError as e:
            self.ls.window_log_message(self.t.LogMessageParams(
                type=self.t.MessageType.Warning, message=f"shardcheck: baseline error: {e}"))
            return findings

    async def current(self, uri: str) -> Optional[_Document]:
        """The analysis of the document as it is now, once it has ended (None: the
        document is not open, or not a Python file, or its analysis failed)."""
        from shardcheck.check.supervisor import Superseded
        while not self.shut_down:
            doc = self.opened(uri)
            if doc is None:
                return None
            known = self.docs.get(uri)
            if known is not None and (known.version, known.source) == (doc.version, doc.source):
                return known
            pending = self.checks.get(uri)
            if pending is None or (pending.version, pending.source) != (doc.version, doc.source):
                self.analyse(uri)
                pending = self.checks.get(uri)
                if pending is None:  # decided at once (a config error, excluded), or not Python
                    known = self.docs.get(uri)
                    return known if known is not None and known.source == doc.source else None
            try:
                await asyncio.shield(pending.answer)
            except asyncio.CancelledError:
                if not pending.answer.cancelled():
                    raise  # this request was cancelled
            except Superseded:
                pass  # replaced by a newer analysis, which the next turn waits for
            except Exception:
                return None  # it failed: _checked said why
        return None

    def close(self, uri: str) -> None:
        """The document closed: its diagnostics cleared, and the open documents whose
        answer read its buffer analysed again, with its file on disk."""
        from shardcheck.check.supervisor import HOVER
        known = self.docs.pop(uri, None)
        self.hovers.pop(uri, None)
        self.checks.pop(uri, None)
        self.workers.cancel(uri)
        self.workers.cancel((uri, HOVER))
        self.ls.text_document_publish_diagnostics(
            self.t.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
        self.refresh_related(uri, known.read if known is not None else frozenset())

    async def code_action(self, params):
        t = self.t
        uri = params.text_document.uri
        known = await self.current(uri)
        if known is None:
            return None
        lines = self.opened(uri).lines
        only = params.context.only
        actions = []
        if not only or any(str(k).startswith("quickfix") for k in only):
            actions += _quick_fixes(t, params, known, lines, self.rng, uri)
        if not only or any(FIX_ALL.startswith(str(k)) for k in only):
            fix_all = _fix_all(t, known, lines, uri, self.to_fs_path(uri) or uri)
            if fix_all is not None:
                actions.append(fix_all)
        return actions or None

    async def hover(self, params):
        from shardcheck.check.supervisor import HOVER
        t = self.t
        uri = params.text_document.uri
        doc = self.opened(uri)
        if doc is None or self.shut_down:
            return None
        task, _ = self._task(uri, doc, HOVER)
        if task is None:
            return None
        lines = doc.lines  # the version the position is in
        # the index is of this text, with the other open documents' buffers as they are
        state = (doc.source, sorted(self._buffers()[1].items()))
        cached = self.hovers.get(uri)
        if cached is None or cached[0] != state or cached[1].done() and (
                cached[1].cancelled() or cached[1].exception() is not None):
            # a key of its own: a hover need not wait for its document's project analysis
            cached = self.hovers[uri] = (state, _on_loop(self.workers.submit(task,
                                                                            key=(uri, HOVER))))
        try:
            found_index = await asyncio.shield(cached[1])
        except asyncio.CancelledError:
            if not cached[1].cancelled():
                raise  # this request was cancelled
            return None  # replaced: the document changed
        except Exception:
            return None
        if found_index is None:  # not analysed: past a budget, or too large
            return None
        pos = self.ls.workspace.position_codec.position_from_client_units(lines, params.position)
        found = found_index.at(pos.line + 1, pos.character + 1)
        if found is None:
            return None
        return t.Hover(contents=t.MarkupContent(kind=t.MarkupKind.Markdown, value=found.markdown()),
                       range=self.rng(lines, found.row, found.column, found.end_row,
                                      found.end_column))

    def end(self, exiting: bool) -> None:
        """``shutdown`` (the workers stop) or ``exit`` (its status, as LSP fixes it: 0
        after a shutdown, else 1)."""
        if exiting:
            self.exit_status = 0 if self.shut_down else 1
        self.shut_down = True
        self.workers.close()


def _answering(handler):
    """A request's handler whose failure (a bug of shardcheck's) is answered as an
    internal error that names it: pygls would put its traceback in the response."""
    from pygls.exceptions import JsonRpcException, JsonRpcInternalError

    @functools.wraps(handler)
    async def answer(params):
        try:
            return await handler(params)
        except (asyncio.CancelledError, JsonRpcException):
            raise
        except Exception as e:
            raise JsonRpcInternalError(f"shardcheck: internal error ({type(e).__name__}: {e}); "
                                       "please report it".splitlines()[0]) from None
    return answer


def build():
    """(the server, its features registered; its handlers) (ImportError when pygls is
    not installed)."""
    from lsprotocol import types as t
    from pygls.lsp.server import LanguageServer

    ls = LanguageServer("shardcheck", __version__, protocol_cls=_protocol_class())
    h = _Handlers(ls, t)

    @ls.feature(t.TEXT_DOCUMENT_DID_OPEN)
    def did_open(params: t.DidOpenTextDocumentParams) -> None:
        h.analyse(params.text_document.uri)
        h.refresh_related(params.text_document.uri)

    @ls.feature(t.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(params: t.DidChangeTextDocumentParams) -> None:
        h.analyse(params.text_document.uri)
        h.refresh_related(params.text_document.uri)  # by what its last answer read

    @ls.feature(t.TEXT_DOCUMENT_DID_SAVE)
    def did_save(params: t.DidSaveTextDocumentParams) -> None:
        h.analyse(params.text_document.uri)  # a save may change what sibling files import

    @ls.feature(t.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(params: t.DidCloseTextDocumentParams) -> None:
        h.close(params.text_document.uri)

    @ls.feature(t.TEXT_DOCUMENT_CODE_ACTION, t.CodeActionOptions(
        code_action_kinds=[t.CodeActionKind.QuickFix, FIX_ALL], resolve_provider=False))
    @_answering
    async def code_action(params: t.CodeActionParams):
        return await h.code_action(params)

    @ls.feature(t.TEXT_DOCUMENT_HOVER)
    @_answering
    async def hover(params: t.HoverParams):
        return await h.hover(params)

    # pygls ends the process itself on `exit` (with the status LSP asks for, which its
    # own start_io then swallows): these only record it, and stop the workers
    @ls.feature(t.SHUTDOWN)
    def shutdown(*_: Any) -> None:
        h.end(exiting=False)

    @ls.feature(t.EXIT)
    def exit_(*_: Any) -> None:
        h.end(exiting=True)

    return ls, h


class _Malformed:
    """A request whose params do not have its method's types: answered InvalidParams."""

    def __init__(self, msg_id: Any, why: str) -> None:
        self.id, self.why = msg_id, why


def _protocol_class():
    """pygls's protocol, answering the requests it leaves unanswered (LSP: every request
    gets a response). Hooked where pygls decides, and nowhere else."""
    from lsprotocol import types as t
    from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcInvalidRequest
    from pygls.protocol import LanguageServerProtocol
    from pygls.protocol.json_rpc import RPCRequest

    class Protocol(LanguageServerProtocol):
        def structure_message(self, data: Dict[str, Any]):
            # pygls raises InvalidParams from json.loads's object hook, where the message's
            # id is lost: its reader logs the error and the request is never answered
            try:
                return super().structure_message(data)
            except JsonRpcException as e:
                if "id" in data and "method" in data and "error" not in data:
                    return _Malformed(data["id"], _why_malformed(e))
                raise

        def handle_message(self, message):
            if isinstance(message, _Malformed):
                self._send_response(message.id, error=JsonRpcInvalidParams(
                    f"Invalid Params: {message.why}").to_response_error())
                return
            # pygls drops requests after shutdown unanswered; LSP: InvalidRequest
            if self._shutdown and isinstance(message, RPCRequest) and message.method != t.EXIT:
                self._send_response(message.id, error=JsonRpcInvalidRequest(
                    f"Invalid Request: the server is shut down; it answers {message.method!r} "
                    "no more").to_response_error())
                return
            super().handle_message(message)

    return Protocol


def _why_malformed(e: BaseException) -> str:
    """What was wrong with a request's params, in one line: cattrs says where, as a path
    in the message ($.params.position.line)."""
    cause = e.__cause__
    try:
        from cattrs import transform_error
        if cause is not None:
            return "; ".join(transform_error(cause))
    except Exception:  # not a cattrs error, or an older cattrs: its own words
        pass
    said = str(cause or e).splitlines()
    return said[0] if said else "they do not match the method's types"


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
    from shardcheck.check.fixes import apply_to_text, fixable
    chosen = [f for f in known.findings if fixable(f, unsafe=False)]
    if not chosen:
        return None
    new, applied = apply_to_text(known.source, chosen)
    if not applied or new == known.source:
        return None
    try:
        compile(new, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    end = t.Position(line=len(lines), character=0)
    edit = t.TextEdit(range=t.Range(start=t.Position(line=0, character=0), end=end), new_text=new)
    return t.CodeAction(title=f"shardcheck: apply {len(applied)} safe fix(es)", kind=FIX_ALL,
                        edit=t.WorkspaceEdit(changes={uri: [edit]}))


def run() -> int:
    """Serve LSP on stdin/stdout until the client exits; the exit status LSP asks for."""
    try:
        server, handlers = build()
    except ImportError as e:
        print(f"shardcheck: the language server needs pygls 2 and lsprotocol, which "
              f"shardcheck depends on; reinstall it (pip install 'pygls>=2,<3'): {e}",
              file=sys.stderr)
        return 2
    _one_line_logs()
    handlers.workers.start()
    try:
        server.start_io()
    finally:
        handlers.workers.close()
    return handlers.exit_status


def _one_line_logs() -> None:
    """Each log record on stderr (which editors show the user) in one line. pygls logs
    a bad message with the traceback in its text, and a handler's error with exc_info;
    asyncio and concurrent.futures log tracebacks too."""
    import logging

    class OneLine(logging.Formatter):
        def format(self, record: logging.LogRecord) -> str:
            lines = record.getMessage().splitlines()
            line = lines[0] if lines else ""
            error = record.exc_info[1] if record.exc_info else None
            if error is not None:
                said = str(error).splitlines()
                line += f" ({type(error).__name__}{': ' + said[0] if said else ''})"
            return f"shardcheck server: {record.levelname.lower()}: {line}"

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(OneLine())
    logging.getLogger().addHandler(handler)
