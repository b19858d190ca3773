"""``shardcheck server`` driven by a real LSP client (pygls's ``LanguageClient``) over
stdio, as an editor drives it: diagnostics on open and change, quick fixes and the
fix-all action, hover types (checked against ``jax.typeof``), config errors, excluded
files and UTF-16 positions."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
from typing import Optional

import pytest
from lsprotocol import types as t
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcInvalidRequest
from pygls.lsp.client import LanguageClient
from pygls.uris import from_fs_path

from jax_snippets import run_snippets

MODEL = textwrap.dedent("""\
    import jax
    import jax.numpy as jnp
    from jax.sharding import PartitionSpec as P

    mesh = jax.make_mesh((2, 4), ("data", "model"))


    def step(w, x):
        h = x @ w
        return jnp.tanh(h)


    with jax.set_mesh(mesh):
        x = jax.device_put(jnp.ones((16, 32)), P("data", None))
        w = jax.device_put(jnp.ones((32, 8)), P(None, "model"))
        y = step(w, x)
        z = jax.lax.with_sharding_constraint(y, P("dta", "model"))
""")
FIXED = MODEL.replace('P("dta", "model")', 'P("data", "model")')  # runs under JAX
TYPO_ROW = 16  # 0-based: the with_sharding_constraint line

LEGACY = textwrap.dedent("""\
    import jax
    import jax.numpy as jnp
    from jax import P

    mesh = jax.make_mesh((8,), ("data",))
    with jax.set_mesh(mesh):
        x = jax.device_put(jnp.ones((8,)), P("data"))
        y = jax.shard_map(lambda b: b * 2, in_specs=P("data"), out_specs=P("data"), check_rep=False)(x)
""")

# a module whose call makes a finding inside the helper it imports (reported at the
# helper's file by `check`): the user's document must not show it at the helper's line
HELPERS = ("import jax\nfrom jax.sharding import NamedSharding, PartitionSpec as P\n"
           "MESH = jax.make_mesh((8,), ('data',))\n\n\ndef place(x, *names):\n"
           "    return jax.device_put(x, NamedSharding(MESH, P(*names)))\n")
USER = "import numpy as np\nfrom helpers import place\ny = place(np.zeros((8,)), 'dta')\n"

# an emoji (two UTF-16 code units) before the error on its line
WIDE = 'import jax\nfrom jax import P\nmesh = jax.make_mesh((8,), ("data",))\n' \
       's = jax.NamedSharding(mesh, P("data")) if "\U0001F600" else jax.NamedSharding(mesh, P("modl"))\n'


class _Editor(LanguageClient):
    """pygls's client driving ``shardcheck server`` as an editor does: documents opened
    and changed by their path under ``root``, each document's published diagnostics
    kept in order, and the server's exit status and stderr once it has exited."""

    def __init__(self, root: str) -> None:
        super().__init__("shardcheck-tests", "0")
        self.root = root
        self.published: dict = {}  # uri -> its PublishDiagnosticsParams, in order
        self._taken: dict = {}  # uri -> how many of them next_for has returned
        self._arrived = asyncio.Event()
        self.status: Optional[int] = None
        self.stderr = ""

        @self.feature(t.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def _diagnostics(params):
            self.published.setdefault(params.uri, []).append(params)
            self._arrived.set()

    async def server_exit(self, server) -> None:
        self.status = server.returncode
        self.stderr = (await server.stderr.read()).decode(errors="replace")

    async def begin(self) -> t.InitializeResult:
        await self.start_io(sys.executable, "-m", "shardcheck", "server")
        init = await self.initialize_async(t.InitializeParams(
            capabilities=t.ClientCapabilities(), root_uri=from_fs_path(self.root)))
        self.initialized(t.InitializedParams())
        return init

    async def until(self, uri: str, wanted):
        """The next diagnostics published for ``uri`` for which ``wanted(diagnostics)``
        holds (those before it are taken too)."""
        while True:
            published = await self.next_for(uri)
            if wanted(published.diagnostics):
                return published

    async def next_for(self, uri: str):
        """The next diagnostics published for ``uri`` that this has not returned yet."""
        seen = self._taken.get(uri, 0)
        while len(self.published.get(uri, [])) <= seen:
            self._arrived.clear()
            await asyncio.wait_for(self._arrived.wait(), 120)
        self._taken[uri] = seen + 1
        return self.published[uri][seen]

    def uri(self, name: str) -> str:
        return from_fs_path(os.path.join(self.root, name))

    def open(self, name: str, text: str, version: int = 1, language: str = "python") -> str:
        uri = self.uri(name)
        self.text_document_did_open(t.DidOpenTextDocumentParams(text_document=t.TextDocumentItem(
            uri=uri, language_id=language, version=version, text=text)))
        return uri

    def change(self, uri: str, text: str, version: int) -> None:
        self.text_document_did_change(t.DidChangeTextDocumentParams(
            text_document=t.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[t.TextDocumentContentChangeWholeDocument(text=text)]))

    def close(self, uri: str) -> None:
        self.text_document_did_close(t.DidCloseTextDocumentParams(
            text_document=t.TextDocumentIdentifier(uri=uri)))

    async def hover(self, uri: str, line: int, char: int):
        return await asyncio.wait_for(self.text_document_hover_async(_at(uri, line, char)), 120)

    async def end(self, shut_down: bool = True) -> None:
        if shut_down:
            await self.shutdown_async(None)
        self.exit(None)
        await self.stop()


def _at(uri: str, line: int, char: int) -> t.HoverParams:
    return t.HoverParams(text_document=t.TextDocumentIdentifier(uri=uri),
                         position=t.Position(line=line, character=char))


def _nothing_selected(uri: str, diagnostics=(), only=None) -> t.CodeActionParams:
    start = t.Position(line=0, character=0)
    return t.CodeActionParams(text_document=t.TextDocumentIdentifier(uri=uri),
                              range=t.Range(start=start, end=start),
                              context=t.CodeActionContext(diagnostics=list(diagnostics), only=only))


async def _session(root: str) -> dict:
    out: dict = {}
    editor = _Editor(root)
    try:
        out["capabilities"] = (await editor.begin()).capabilities
        uri = editor.open("model.py", MODEL)
        out["open"] = await editor.next_for(uri)
        out["hover_x"] = await editor.hover(uri, 13, 4)
        out["hover_h"] = await editor.hover(uri, 9, 20)
        out["hover_call"] = await editor.hover(uri, 15, 10)
        out["hover_none"] = await editor.hover(uri, 4, 1)
        diags = out["open"].diagnostics
        out["actions"] = await editor.text_document_code_action_async(t.CodeActionParams(
            text_document=t.TextDocumentIdentifier(uri=uri), range=diags[0].range if diags else
            t.Range(start=t.Position(line=0, character=0), end=t.Position(line=0, character=0)),
            context=t.CodeActionContext(diagnostics=diags)))
        editor.change(uri, FIXED, 2)
        out["change"] = await editor.next_for(uri)
        out["hover_z"] = await editor.hover(uri, 16, 4)  # the new text's

        legacy = editor.open("legacy.py", LEGACY)
        out["legacy"] = await editor.next_for(legacy)
        out["fix_all"] = await editor.text_document_code_action_async(
            _nothing_selected(legacy, only=["source.fixAll"]))

        out["wide"] = await editor.next_for(editor.open("wide.py", WIDE))
        out["excluded"] = await editor.next_for(editor.open("generated/model.py", MODEL))
        out["bad_config"] = await editor.next_for(editor.open("badcfg/model.py", MODEL))
        out["baselined"] = await editor.next_for(editor.open("adopted/model.py", MODEL))
        out["user"] = await editor.next_for(editor.open("user.py", USER))
        config = editor.open("configs/base.yml", CONFIG, language="yaml")
        out["config"] = await editor.next_for(config)
        editor.change(config, CONFIG.replace("'fsdpp'", "'fsdp'"), 2)
        out["config_fixed"] = await editor.next_for(config)
        editor.close(uri)
        out["close"] = await editor.next_for(uri)
    finally:
        await editor.end()
    return out


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    root = tmp_path_factory.mktemp("lsp")
    (root / "pyproject.toml").write_text('[tool.shardcheck]\nexclude = ["generated/"]\n')
    (root / "generated").mkdir()
    (root / "helpers.py").write_text(HELPERS)
    (root / "user.py").write_text(USER)  # on disk, as an opened file is: its imports resolve
    (root / "badcfg").mkdir()
    (root / "badcfg" / "pyproject.toml").write_text('[tool.shardcheck]\nselect = ["SC9999"]\n')
    adopted = root / "adopted"  # a project whose baseline records the typo
    adopted.mkdir()
    (adopted / "pyproject.toml").write_text('[tool.shardcheck]\nbaseline = "base.json"\n')
    (adopted / "model.py").write_text(MODEL)
    subprocess.run([sys.executable, "-m", "shardcheck", "check", "--no-cache", "model.py",
                    "--write-baseline", "base.json"], cwd=adopted, check=True, capture_output=True)
    return asyncio.run(_session(str(root)))


CONFIG = """\
mesh_axes: ['data', 'fsdp', 'tensor']
logical_axis_rules: [
  ['batch', ['data', 'fsdp']],
  ['embed', 'fsdpp'],
]
"""


def test_an_open_yaml_config_gets_the_diagnostics_check_gives_it(session):
    """SC113 on the buffer, at the rule's axis; gone once the edit fixes it."""
    (d,) = session["config"].diagnostics
    assert (d.code, d.severity) == ("SC113", t.DiagnosticSeverity.Warning)
    assert (d.range.start.line, d.range.start.character) == (3, 12)
    assert "'embed' -> 'fsdpp'" in d.message
    assert list(session["config_fixed"].diagnostics) == []


def test_capabilities(session):
    caps = session["capabilities"]
    assert caps.hover_provider
    assert set(caps.code_action_provider.code_action_kinds) == {"quickfix", "source.fixAll.shardcheck"}


def test_diagnostics_on_open_at_the_span(session):
    (d,) = session["open"].diagnostics
    assert (d.code, d.source, d.severity) == ("SC101", "shardcheck", t.DiagnosticSeverity.Error)
    line = MODEL.splitlines()[TYPO_ROW]
    assert d.range.start.line == TYPO_ROW == d.range.end.line
    assert line[d.range.start.character:d.range.end.character] == 'P("dta", "model")'
    assert "'dta'" in d.message and "did you mean 'data'" in d.message


def test_diagnostics_follow_changes_and_close(session):
    assert session["change"].version == 2 and list(session["change"].diagnostics) == []
    assert list(session["close"].diagnostics) == []


def test_quick_fix_is_the_check_fix(session):
    (action,) = session["actions"]
    assert action.kind == t.CodeActionKind.QuickFix and not action.is_preferred  # an unsafe fix
    assert "unsafe" in action.title and "'data'" in action.title
    ((uri, (edit,)),) = action.edit.changes.items()
    assert uri.endswith("/model.py")
    line = MODEL.splitlines()[edit.range.start.line]
    fixed = line[:edit.range.start.character] + edit.new_text + line[edit.range.end.character:]
    assert fixed == FIXED.splitlines()[edit.range.start.line]


def test_fix_all_applies_the_safe_fixes(session, tmp_path):
    (d,) = session["legacy"].diagnostics
    assert d.code == "SC401" and "check_rep" in d.message
    (action,) = session["fix_all"]
    assert action.kind == "source.fixAll.shardcheck"
    ((_, (edit,)),) = action.edit.changes.items()
    assert (edit.range.start.line, edit.range.start.character) == (0, 0)
    # the same text `shardcheck check --fix` writes
    target = tmp_path / "legacy.py"
    target.write_text(LEGACY)
    subprocess.run([sys.executable, "-m", "shardcheck", "check", "--fix", "--no-cache", str(target)],
                   capture_output=True, check=False)
    assert edit.new_text == target.read_text()
    assert "check_vma=False" in edit.new_text and "check_rep" not in edit.new_text


def test_ranges_are_in_utf16_units(session):
    (d,) = session["wide"].diagnostics
    line = WIDE.splitlines()[3]
    # the branch Python does not run: the spec's axis is still one no mesh of the
    # project has (SC114, at the axis name)
    start = line.index('"modl"')
    assert d.code == "SC114"
    assert d.range.start.character == start + 1  # the emoji counts two UTF-16 units
    assert d.range.end.character == start + len('"modl"') + 1


def test_excluded_files_get_no_diagnostics(session):
    assert list(session["excluded"].diagnostics) == []


def test_a_bad_config_is_one_diagnostic_not_a_crash(session):
    (d,) = session["bad_config"].diagnostics
    assert d.message.startswith("shardcheck: config error:") and "SC9999" in d.message
    assert d.range.start == t.Position(line=0, character=0)


def test_findings_placed_in_other_files_are_not_shown_in_this_one(session):
    # `check` places this one at helpers.py's line 7; user.py has 3 lines
    rows = len(USER.splitlines())
    assert all(d.range.start.line < rows for d in session["user"].diagnostics)


def test_the_config_baseline_hides_recorded_findings(session):
    assert list(session["baselined"].diagnostics) == []


def _hover_text(h) -> str:
    assert h is not None and h.contents.kind == t.MarkupKind.Markdown
    return h.contents.value


def test_hover_shows_what_jax_infers(session):
    probe = FIXED + "    RESULT = [str(jax.typeof(v)) for v in (x, x @ w, step(w, x), z)]\n"
    (res,) = run_snippets([probe])
    assert res["status"] == "ok", res
    x_type, h_type, call_type, z_type = res["result"]
    assert f"z: {z_type}" in _hover_text(session["hover_z"])  # hover follows the edit
    assert f"x: {x_type}" in _hover_text(session["hover_x"])
    assert session["hover_x"].range.start == t.Position(line=13, character=4)
    assert f"h: {h_type}" in _hover_text(session["hover_h"])
    assert f"step(w, x): {call_type}" in _hover_text(session["hover_call"])
    assert session["hover_none"] is None  # `mesh` is not an array


def test_server_without_pygls_says_how_to_install():
    code = ("import sys; sys.modules['pygls'] = None; sys.modules['lsprotocol'] = None\n"
            "from shardcheck.cli import main; sys.exit(main(['server']))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert "pip install 'pygls>=2,<3'" in r.stderr and "Traceback" not in r.stderr


def test_hover_in_a_function_analysed_per_call():
    """A helper called with two shardings shows both types; each is what JAX gives."""
    from shardcheck.analyzer.hover import type_at
    src = textwrap.dedent("""\
        import jax
        import jax.numpy as jnp
        from jax import P

        def double(a):
            return a * 2

        mesh = jax.make_mesh((2, 4), ("data", "model"))
        with jax.set_mesh(mesh):
            u = double(jax.device_put(jnp.ones((8, 8)), P("data", None)))
            v = double(jax.device_put(jnp.ones((8, 8)), P(None, "model")))
            RESULT = [str(jax.typeof(u)), str(jax.typeof(v))]
    """)
    (res,) = run_snippets([src])
    assert res["status"] == "ok", res
    found = type_at(src, "double.py", 6, 14)  # the `*` of `a * 2`
    assert found is not None and found.code == "a * 2"
    assert set(found.types) == set(res["result"]) and len(found.types) == 2
    assert "2 analyses" in found.markdown()
    assert type_at("def f(:\n", "bad.py", 1, 1) is None  # no parse, no hover, no traceback


# -- budgets: every analysis in a worker process, under check's per-file budgets ----------
# Sums of 1,500 terms reading PartitionSpec (a file that reads no sharding API is never
# analysed): about 0.6 s each on 2 cores, so 30 of them run far past the budgets below
# (one sum of 3,000 terms is deeper than CPython 3.12 compiles: a syntax error there, not
# a budget). Its third line holds an array, whose type a hover shows once it is analysed.
SLOW = "import jax.numpy as jnp\nfrom jax.sharding import PartitionSpec\nz = jnp.zeros((8,))\n" + "".join(
    f"y{i} = PartitionSpec + " + " + ".join(["a"] * 1500) + "\n" for i in range(30))
BIG = "from jax.sharding import PartitionSpec\n" + "".join(f"x{i} = {i}\n" for i in range(150_000))
GENERATED = "# Generated by the protocol buffer compiler.  DO NOT EDIT!\n" + MODEL + "X = 1\n" * 300
# where each runs: name -> (its text, its directory's [tool.shardcheck])
TIGHT = "timeout-per-file = 0.5\ngenerated-size-limit = '1KiB'\n"
BUDGETED = {"tight/slow.py": (SLOW, TIGHT),
            "mem/big.py": (BIG, 'timeout-per-file = 0\nmemory-per-file = "150MiB"\n'),
            "tight/big_pb2.py": (GENERATED, TIGHT)}
ROOMY = "timeout-per-file = 60\n"


async def _budget_session(root: str) -> dict:
    out: dict = {}
    editor = _Editor(root)
    try:
        await editor.begin()
        b = editor.open("roomy/b.py", MODEL)
        await editor.next_for(b)
        # while other documents' analyses run (unbudgeted each takes about 18 s), even as
        # many as the workers, another's hover is answered: it needs a fresh analysis of
        # its new version, in the worker kept for hovers
        slow = editor.open("roomy/slow.py", SLOW)
        more = [editor.open(f"roomy/slow{i}.py", SLOW) for i in (2, 3)]
        editor.change(b, FIXED, 2)
        out["hover_b"] = await editor.hover(b, 16, 4)
        out["slow_published_by_then"] = [p for uri in [slow] + more
                                         for p in editor.published.get(uri, [])]
        for uri in more:  # their analyses are stopped
            editor.close(uri)
        # its next version supersedes that analysis, which is never published
        editor.change(slow, MODEL, 2)
        skipped = {name: editor.open(name, text) for name, (text, _) in BUDGETED.items()}
        out["superseded"] = await editor.next_for(slow)
        for name, uri in skipped.items():
            out[name] = await editor.next_for(uri)
        # the hover index is budgeted too: unbudgeted, it shows z's type after about 18 s
        out["hover_slow"] = await editor.hover(skipped["tight/slow.py"], 2, 0)
    finally:
        await editor.end()
    return out


@pytest.fixture(scope="module")
def budgets(tmp_path_factory):
    root = tmp_path_factory.mktemp("budgets")
    (root / "roomy").mkdir()
    (root / "roomy" / "pyproject.toml").write_text("[tool.shardcheck]\n" + ROOMY)
    checks = {}
    for name, (text, table) in BUDGETED.items():  # on disk too, for `check FILE`
        (root / name).parent.mkdir(exist_ok=True)
        (root / name).parent.joinpath("pyproject.toml").write_text("[tool.shardcheck]\n" + table)
        (root / name).write_text(text)
        checks[name] = subprocess.Popen(
            [sys.executable, "-m", "shardcheck", "check", "--no-cache", "--format", "json", name],
            cwd=root, stdout=subprocess.PIPE, text=True)
    out = asyncio.run(_budget_session(str(root)))
    out["check"] = {name: json.loads(p.communicate(timeout=120)[0]) for name, p in checks.items()}
    return out


@pytest.mark.slow  # end to end, child processes and their budgets: CI's `-m slow` leg
def test_a_document_past_a_budget_gets_checks_skipped_file_diagnostic(budgets):
    for name in BUDGETED:
        (d,) = budgets[name].diagnostics
        (f,) = budgets["check"][name]
        assert (d.code, d.message) == (f["code"], f["message"]) and f["code"] == "SC003", name
        assert (d.range.start.line, d.range.start.character) == (0, 0)
    assert "timeout-per-file (0.5 s)" in budgets["tight/slow.py"].diagnostics[0].message
    assert "memory-per-file" in budgets["mem/big.py"].diagnostics[0].message
    assert "generated-size-limit" in budgets["tight/big_pb2.py"].diagnostics[0].message


def test_the_server_answers_while_another_documents_analysis_runs(budgets, session):
    assert budgets["slow_published_by_then"] == []  # the slow analysis still ran ...
    assert _hover_text(budgets["hover_b"]) == _hover_text(session["hover_z"])  # ... B answered


def test_a_newer_version_supersedes_the_analysis_of_the_older(budgets):
    assert budgets["superseded"].version == 2  # the first published: version 1's was dropped
    assert [d.code for d in budgets["superseded"].diagnostics] == ["SC101"]


def test_the_hover_index_is_under_the_budget_too(budgets):
    assert budgets["hover_slow"] is None


# -- the protocol, as LSP 3.17 says: every request is answered ------------------------------
async def _outcome(request) -> tuple:
    """("answer", its result), ("error", the JSON-RPC error) or ("none", None) when no
    answer came in 10 s."""
    try:
        return "answer", await asyncio.wait_for(request, 10)
    except JsonRpcException as e:
        return "error", e
    except asyncio.TimeoutError:
        return "none", None


async def _protocol_session(root: str) -> dict:
    out: dict = {}
    editor = _Editor(root)
    try:
        await editor.begin()
        wrong = _at(editor.uri("model.py"), 0, 0)
        object.__setattr__(wrong.position, "line", "zero")  # past lsprotocol's validator
        out["wrong_params"] = await _outcome(editor.text_document_hover_async(wrong))
        # on disk, but never opened: no answer is read from the file (`x` is an array)
        out["hover_unopened"] = await _outcome(editor.text_document_hover_async(
            _at(editor.uri("model.py"), 13, 4)))
        out["actions_unopened"] = await _outcome(editor.text_document_code_action_async(
            _nothing_selected(editor.uri("legacy.py"))))  # it has a safe fix
        out["hover_missing"] = await _outcome(editor.text_document_hover_async(
            _at(editor.uri("missing.py"), 0, 0)))
        await editor.shutdown_async(None)
        out["after_shutdown"] = await _outcome(editor.text_document_hover_async(
            _at(editor.uri("model.py"), 0, 0)))
    finally:
        await editor.end(shut_down=False)
    out["status"], out["stderr"] = editor.status, editor.stderr
    unannounced = _Editor(root)  # `exit` with no `shutdown` first
    await unannounced.begin()
    await unannounced.end(shut_down=False)
    out["status_unannounced"] = unannounced.status
    return out


@pytest.fixture(scope="module")
def protocol(tmp_path_factory):
    root = tmp_path_factory.mktemp("protocol")
    (root / "model.py").write_text(MODEL)
    (root / "legacy.py").write_text(LEGACY)
    return asyncio.run(_protocol_session(str(root)))


def test_wrongly_typed_params_are_answered_invalid_params(protocol):
    how, e = protocol["wrong_params"]
    assert how == "error" and e.code == JsonRpcInvalidParams.CODE
    assert "$.params.position.line" in e.message and "Traceback" not in str(e.data)


def test_a_document_never_opened_gets_null_not_an_error(protocol):
    for case in ("hover_unopened", "actions_unopened", "hover_missing"):
        assert protocol[case] == ("answer", None), case


def test_requests_after_shutdown_are_invalid_and_exit_says_whether_it_came(protocol):
    how, e = protocol["after_shutdown"]
    assert how == "error" and e.code == JsonRpcInvalidRequest.CODE
    assert protocol["status"] == 0 and protocol["status_unannounced"] == 1


def test_no_traceback_on_stderr(protocol):
    assert protocol["stderr"] and "Traceback" not in protocol["stderr"]


# -- the project is the unit (issue 37): a document's diagnostics are the project's answer --
def _sc104(diagnostics) -> list:
    return [d for d in diagnostics if d.code == "SC104"]


# tests/tinylm_project.py: model.py's two SC104s are proved by train.py's call at line 17
CALL_ROW, SC104_ROWS = 17, [10, 11]


def _dividing(train: str) -> str:
    """train.py with a mesh whose `model` axis (2) divides D_FF = 250."""
    return train.replace("make_mesh()", "make_mesh(model=2)")


async def _project_session(root: str) -> dict:
    import time

    import tinylm_project
    out: dict = {}
    editor = _Editor(root)
    try:
        await editor.begin()
        model = editor.open("src/tinylm/model.py", tinylm_project.MODEL.format(d_ff=250))
        train = editor.open("src/tinylm/train.py", tinylm_project.TRAIN)
        out["model"] = await editor.until(model, _sc104)
        out["train"] = await editor.until(train, lambda d: True)
        out["uris"] = {"model": model, "train": train}
        # train.py's buffer only (the file on disk still gives the SC104s)
        start = time.monotonic()
        editor.change(train, _dividing(tinylm_project.TRAIN), 2)
        out["dividing"] = await editor.until(model, lambda d: not _sc104(d))
        out["republished_in"] = time.monotonic() - start
        editor.change(train, tinylm_project.TRAIN, 3)  # and back
        out["back"] = await editor.until(model, _sc104)
        out["hover"] = await editor.hover(train, CALL_ROW + 1, 8)  # y = step(params, x)
        # closed unsaved: model.py's answer reads train.py's file again
        editor.change(train, _dividing(tinylm_project.TRAIN), 4)
        await editor.until(model, lambda d: not _sc104(d))
        editor.close(train)
        out["closed"] = await editor.until(model, _sc104)
    finally:
        await editor.end()
    return out


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    import tinylm_project
    root = tmp_path_factory.mktemp("tinylm")
    tinylm_project.write(root)
    return asyncio.run(_project_session(str(root)))


def test_a_documents_diagnostics_include_what_its_importers_calls_prove(project):
    found = _sc104(project["model"].diagnostics)
    assert [d.range.start.line for d in found] == [row - 1 for row in SC104_ROWS]
    for d in found:
        assert "250" in d.message
        (note,) = d.related_information
        assert note.location.uri == project["uris"]["train"]
        assert note.location.range.start.line == CALL_ROW - 1
        assert note.location.range.start.character == 17
        assert "`init_params` is called here" in note.message
    assert not _sc104(project["train"].diagnostics)  # placed in model.py, shown there only


def test_an_edit_of_the_importer_re_publishes_the_document(project):
    assert list(project["dividing"].diagnostics) == []
    print(f"model.py re-published {project['republished_in']:.2f} s after train.py's edit")
    back = _sc104(project["back"].diagnostics)
    assert len(back) == 2 and all("splits 4 ways" in d.message for d in back)
    assert "float32[16@data,64]" in _hover_text(project["hover"])
    assert _sc104(project["closed"].diagnostics) == back  # train.py closed unsaved: its file


# -- the analysis a document's diagnostics come from (a worker's task, here in-process) ----
def _answer(root, name, text, **buffers):
    """The project's answer for ``name`` holding ``text``, the other open documents'
    buffers by file name (train="..." stands for src/tinylm/train.py)."""
    from shardcheck.check import config as cfgmod
    from shardcheck.check.supervisor import PROJECT, SourceTask, answer_here
    path = str(root / "src" / "tinylm" / name)
    overlay = tuple((str(root / "src" / "tinylm" / f"{n}.py"), t) for n, t in buffers.items())
    return answer_here(SourceTask(path, text, cfgmod.load(None, start=path), kind=PROJECT,
                                  overlay=overlay))


def test_a_project_answer_reads_the_open_buffers_and_keeps_what_an_edit_leaves(tmp_path):
    import tinylm_project
    tinylm_project.write(tmp_path)
    package = tmp_path / "src" / "tinylm"
    model, train = tinylm_project.MODEL.format(d_ff=250), tinylm_project.TRAIN
    first = _answer(tmp_path, "model.py", model)
    assert [f.code for f in first.findings] == ["SC104", "SC104"] and first.analysed == 2
    assert {str(package / f) for f in ("model.py", "train.py", "mesh.py")} <= set(first.read)
    # train.py's buffer, not its file: model.py's own result is kept, train.py's is new
    dividing = _answer(tmp_path, "model.py", model, train=_dividing(train))
    assert dividing.findings == [] and dividing.analysed == 1
    # an import taken out of a buffer counts: train.py is no importer then
    unused = _answer(tmp_path, "model.py", model, train="import jax\n")
    assert unused.findings == [] and unused.analysed == 0
    assert str(package / "train.py") not in unused.read
    # and back to train.py's file: model.py's own result is still kept
    again = _answer(tmp_path, "model.py", model)
    assert again.findings == first.findings and again.analysed == 1
    # the document's own text changed: it and its importer are analysed again
    padded = _answer(tmp_path, "model.py", tinylm_project.MODEL.format(d_ff=256))
    assert padded.findings == [] and padded.analysed == 2
    # a function added to it changes nothing train.py read of it (``analyzer.slices``):
    # the document alone is analysed again, and the answer is a fresh worker's
    added = tinylm_project.MODEL.format(d_ff=256) + "\n\ndef unused():\n    return 1\n"
    grown = _answer(tmp_path, "model.py", added)
    assert grown.findings == [] and grown.analysed == 1
    from shardcheck.check import project_answer
    project_answer._RESULTS.clear()
    assert _answer(tmp_path, "model.py", added).findings == grown.findings


class _IdleWorker:
    """A ready worker of a pool, recording the tasks it is given."""

    def __init__(self, last_key=None) -> None:
        self.ready, self.last_key, self.given = True, last_key, []

    def give_source(self, task) -> None:
        self.given.append(task)

    def stop(self, kill: bool = False) -> None:
        pass


def test_a_documents_analysis_goes_to_the_worker_that_ran_its_last_and_one_is_kept_for_hovers():
    """What a worker keeps warm (the results of the project files its last analyses
    read) is of the documents it analysed; two analyses leave a pool of three one
    worker for hovers."""
    from shardcheck.check.supervisor import HOVER, PROJECT, SourceTask, SourceWorkers
    from shardcheck.analyzer.config import Config
    pool = SourceWorkers(3)
    model, train, fresh = _IdleWorker("model"), _IdleWorker("train"), _IdleWorker()
    pool._workers = {id(w): w for w in (model, train, fresh)}
    task = lambda name, kind=PROJECT: SourceTask(name, "", Config(), kind=kind)  # noqa: E731
    for name in ("train", "model", "other"):
        pool.submit(task(name), key=name)
    pool._assign()
    assert model.given == [task("model")] and train.given == [task("train")]
    assert fresh.given == []  # "other" waits: the third worker is kept for hovers
    pool.submit(task("model", HOVER), key=("model", HOVER))
    pool._assign()
    assert fresh.given == [task("model", HOVER)]
    pool.close()
