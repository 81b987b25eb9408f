"""`flake8-tensorcopy server` driven by a real LSP client over stdio (pytest-lsp): diagnostics on open,
change and save, code actions applied to the text, a notebook with a magic, bad input the server survives,
and an outdated version whose diagnostics are never published. Waits have a deadline (never a timed
assertion): they poll what the client has received."""
from __future__ import annotations

import asyncio
import os
import re
import sys
import threading
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

from flake8_tensorcopy.adapters.editor import Change, Source, analyse, fix_changes, noqa_change, text_changes
from flake8_tensorcopy.adapters.schedule import Scheduler
from flake8_tensorcopy.cli.main import main
from flake8_tensorcopy.rules.docs import DOCS_URL

ROOT = Path(__file__).resolve().parents[2]
DEADLINE = 60  # seconds any one wait may take on a loaded machine; a silent server fails, never hangs
BAD = ("import torch\n\n\ndef make():\n    w = torch.nn.Parameter(torch.ones(3))\n    hidden = w * 2\n"
       "    return torch.tensor(hidden)\n")
CLEAN = "import torch\n\n\ndef make():\n    return torch.ones(3)\n"


def recording_client() -> LanguageClient:
    """pytest-lsp's client, also keeping every publishDiagnostics it receives, in order."""
    client = LanguageClient(converter_factory=default_converter)
    client.published = []

    def publish(client: LanguageClient, params: lsp.PublishDiagnosticsParams):
        client.diagnostics[params.uri] = params.diagnostics
        client.published.append(params)

    register_lsp_features(client, {**DEFAULT_CLIENT_FEATURES, lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: publish})
    return client


CONFIG = ClientServerConfig(server_command=[sys.executable, "-m", "flake8_tensorcopy", "server"],
                            client_factory=recording_client,
                            server_env={**os.environ, "PYTHONPATH": str(ROOT)})


async def start(client: LanguageClient, debounce: float):
    await client.initialize_session(lsp.InitializeParams(
        capabilities=pytest_lsp.client_capabilities("visual-studio-code"), root_uri=ROOT.as_uri(),
        initialization_options={"debounce": debounce}))


@pytest_lsp.fixture(config=CONFIG, scope="module")  # one server for the tests below that take `client`
async def client(lsp_client: LanguageClient):
    await start(lsp_client, 0.05)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=CONFIG)
async def slow_client(lsp_client: LanguageClient):
    await start(lsp_client, 1.0)  # so a change sent right after the open always comes within the debounce
    yield
    await lsp_client.shutdown_session()


async def until(condition, what: str):
    for _ in range(DEADLINE * 20):
        value = condition()
        if value:
            return value
        await asyncio.sleep(0.05)
    raise AssertionError(f"no {what} within {DEADLINE} s")


async def diagnostics(client, uri: str, version: int):
    """The diagnostics published for `uri` at `version` (waiting for them)."""
    params = await until(lambda: next((p for p in reversed(client.published) if p.uri == uri and p.version == version),
                                      None), f"diagnostics of {uri} v{version}")
    return list(params.diagnostics)


def apply(text: str, edits: list[lsp.TextEdit]) -> str:
    """A document's text after LSP edits (ASCII text: characters are UTF-16 units)."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(p: lsp.Position) -> int:
        return starts[min(p.line, len(lines))] + p.character

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[:offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end):]
    return text


def open_file(client, path: Path, text: str, version: int = 1) -> str:
    uri = path.as_uri()
    path.write_text(text)
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(uri, "python", version, text)))
    return uri


def change(client, uri: str, version: int, text: str) -> None:
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        lsp.VersionedTextDocumentIdentifier(version, uri), [lsp.TextDocumentContentChangeWholeDocument(text)]))


async def actions(client, uri: str, line: int, only=None) -> dict[str, lsp.CodeAction]:
    result = await client.text_document_code_action_async(lsp.CodeActionParams(
        lsp.TextDocumentIdentifier(uri), lsp.Range(lsp.Position(line, 0), lsp.Position(line, 0)),
        lsp.CodeActionContext([], only=only)))
    return {a.title: a for a in result or []}


@pytest.mark.asyncio(loop_scope="module")
async def test_python_file_diagnostics_and_code_actions(client, tmp_path):
    uri = open_file(client, tmp_path / "train.py", BAD)
    [diag] = await diagnostics(client, uri, 1)
    assert (diag.code, diag.source, diag.code_description.href) == ("TEN204", "flake8-tensorcopy",
                                                                    DOCS_URL.format(code="TEN204"))
    assert (diag.range.start.line, diag.range.start.character, diag.range.end.character) == (6, 11, 31)
    found = await actions(client, uri, 6)
    fix = next(a for title, a in found.items() if title.startswith("Fix TEN204"))
    noqa = found["Disable TEN204 for this line (# noqa)"]
    fix_all = next(a for a in found.values() if a.kind == "source.fixAll.flake8-tensorcopy")
    assert fix.is_preferred and "(unsafe)" not in fix.title
    fixed = apply(BAD, fix.edit.changes[uri])
    assert "return hidden.detach().clone()\n" in fixed
    assert apply(BAD, fix_all.edit.changes[uri]) == fixed
    silenced = apply(BAD, noqa.edit.changes[uri])
    assert "return torch.tensor(hidden)  # noqa: TEN204\n" in silenced
    assert list(await actions(client, uri, 2)) == list(await actions(client, uri, 6, ["source"])) == [fix_all.title]
    hover = await client.text_document_hover_async(lsp.HoverParams(lsp.TextDocumentIdentifier(uri),
                                                                   lsp.Position(6, 15)))
    assert DOCS_URL.format(code="TEN204") in hover.contents.value
    change(client, uri, 2, fixed)
    assert await diagnostics(client, uri, 2) == []
    change(client, uri, 3, silenced.replace("# noqa: TEN204", "# noqa: E501"))  # an existing noqa gains the code
    await diagnostics(client, uri, 3)
    merged = apply(silenced.replace("# noqa: TEN204", "# noqa: E501"), (await actions(client, uri, 6))[
        "Disable TEN204 for this line (# noqa)"].edit.changes[uri])
    assert "# noqa: E501,TEN204\n" in merged  # as check --add-noqa merges it
    change(client, uri, 4, merged)
    client.text_document_did_save(lsp.DidSaveTextDocumentParams(lsp.TextDocumentIdentifier(uri)))
    assert await diagnostics(client, uri, 4) == []


@pytest.mark.asyncio(loop_scope="module")
async def test_unsafe_fix_and_configuration(client, tmp_path):
    """An unsafe fix is labelled, never preferred, and left out of fix-all; the pyproject of the file's folder
    chooses the codes, as for `check`."""
    (tmp_path / "pyproject.toml").write_text('[tool.flake8-tensorcopy]\nextend-select = ["TEN903"]\n')
    text = "import torch\n\n\ndef f(w: torch.Tensor):\n    return w.data\n"
    uri = open_file(client, tmp_path / "opt.py", text)
    [diag] = await diagnostics(client, uri, 1)
    assert diag.code == "TEN903"
    found = await actions(client, uri, 4)
    fix = next(a for title, a in found.items() if title.startswith("Fix TEN903"))
    assert fix.title.endswith("(unsafe)") and not fix.is_preferred
    assert apply(text, fix.edit.changes[uri]).endswith("return w.detach()\n")
    assert not any(a.kind.startswith("source") for a in found.values())


@pytest.mark.asyncio(loop_scope="module")
async def test_positions_are_utf16_units(client, tmp_path):
    text = BAD.replace("    return torch.tensor(hidden)", '    e = "\U0001F600"; return torch.tensor(hidden)')
    uri = open_file(client, tmp_path / "emoji.py", text)
    [diag] = await diagnostics(client, uri, 1)
    assert (diag.range.start.character, diag.range.end.character) == (21, 41)  # the emoji is two units


@pytest.mark.asyncio(loop_scope="module")
async def test_notebook_with_magics(client, tmp_path):
    nb_uri = (tmp_path / "tutorial.ipynb").as_uri()
    texts = ["%matplotlib inline\nimport torch\n", "# Training", "w = torch.nn.Parameter(torch.ones(3))\n"
             "hidden = w * 2\nx = torch.tensor(hidden)\n!nvidia-smi\n"]
    uris = [f"{nb_uri}#cell{i}" for i in range(3)]
    kinds = [lsp.NotebookCellKind.Code, lsp.NotebookCellKind.Markup, lsp.NotebookCellKind.Code]
    client.notebook_document_did_open(lsp.DidOpenNotebookDocumentParams(
        lsp.NotebookDocument(nb_uri, "jupyter-notebook", 1, [lsp.NotebookCell(k, u) for k, u in zip(kinds, uris)]),
        [lsp.TextDocumentItem(u, "python" if k == lsp.NotebookCellKind.Code else "markdown", 1, t)
         for u, k, t in zip(uris, kinds, texts)]))
    [diag] = await diagnostics(client, uris[2], 1)
    assert diag.code == "TEN204" and diag.range.start.line == 2
    assert await diagnostics(client, uris[0], 1) == []  # the magic is not a syntax error
    found = await actions(client, uris[2], 2)
    fix = next(a for title, a in found.items() if title.startswith("Fix TEN204"))
    [(cell, edits)] = fix.edit.changes.items()
    fixed = apply(texts[2], edits)
    assert cell == uris[2] and fixed.endswith("x = hidden.detach().clone()\n!nvidia-smi\n")
    lines = texts[2].splitlines(keepends=True)
    whole = lsp.Range(lsp.Position(0, 0), lsp.Position(len(lines), 0))
    client.notebook_document_did_change(lsp.DidChangeNotebookDocumentParams(
        lsp.VersionedNotebookDocumentIdentifier(2, nb_uri), lsp.NotebookDocumentChangeEvent(
            cells=lsp.NotebookDocumentCellChanges(text_content=[lsp.NotebookDocumentCellContentChanges(
                lsp.VersionedTextDocumentIdentifier(2, uris[2]),
                [lsp.TextDocumentContentChangePartial(whole, fixed)])]))))
    assert await diagnostics(client, uris[2], 2) == []
    client.notebook_document_did_close(lsp.DidCloseNotebookDocumentParams(
        lsp.NotebookDocumentIdentifier(nb_uri), [lsp.TextDocumentIdentifier(u) for u in uris]))


@pytest.mark.asyncio(loop_scope="module")
async def test_bad_input_never_stops_the_server(client, tmp_path):
    """Text that does not parse, binary-ish text and deep nesting each get an answer, and a large document
    being analysed does not keep the server from answering about another one."""
    inputs = {
        "broken.py": "import torch\nx = torch.ones(2)\ny = x.detach()\ndef (:\n",
        "binary.py": "\x00\x01\xff\ufffd x.detach() \x00" * 50,
        "nested.py": "y = x.detach()\nz = " + "(" * 20000 + "\n",
    }
    for name, text in inputs.items():
        uri = open_file(client, tmp_path / name, text)
        await diagnostics(client, uri, 1)
        hover = await client.text_document_hover_async(lsp.HoverParams(lsp.TextDocumentIdentifier(uri),
                                                                       lsp.Position(0, 0)))
        assert hover is None or "TEN" in hover.contents.value
    broken = client.diagnostics[(tmp_path / "broken.py").as_uri()]
    assert [d.code for d in broken] == ["TEN000"] and "could not analyse" in broken[0].message
    small = open_file(client, tmp_path / "small.py", BAD)
    assert [d.code for d in await diagnostics(client, small, 1)] == ["TEN204"]
    large = open_file(client, tmp_path / "large.py", BAD + "x = y = 1\n" * 30000)
    await asyncio.sleep(0.2)  # past the debounce: the large document's analysis has started
    found = await actions(client, small, 6)  # answered while the large document is still being analysed
    assert any(title.startswith("Fix TEN204") for title in found)
    assert large not in client.diagnostics
    assert [d.code for d in await diagnostics(client, large, 1)] == ["TEN204"]


@pytest.mark.asyncio
async def test_outdated_version_is_not_published(slow_client, tmp_path):
    uri = open_file(slow_client, tmp_path / "edited.py", BAD)
    change(slow_client, uri, 2, CLEAN)
    assert await diagnostics(slow_client, uri, 2) == []
    assert [p.version for p in slow_client.published if p.uri == uri] == [2]


@pytest.mark.asyncio
async def test_a_running_analysis_of_an_old_version_is_dropped():
    """A change while the document's analysis runs: that result is never delivered; the newest text is
    analysed next (one analysis of a document at a time)."""
    texts, delivered, release = {"doc": "v1"}, [], threading.Event()

    def take(key):
        text = texts[key]
        return lambda: (release.wait(DEADLINE), text)[1]

    scheduler = Scheduler(take, lambda key, result: delivered.append(result), delay=0)
    scheduler.request("doc")
    await until(lambda: scheduler.started == 1, "first analysis")
    texts["doc"] = "v2"
    scheduler.request("doc")
    await asyncio.sleep(0.05)  # let the timer of the new request fire while the first job still runs
    assert scheduler.started == 1
    release.set()
    await until(lambda: delivered, "a delivered result")
    assert delivered == ["v2"] and scheduler.started == 2 and scheduler.dropped == 1


def test_without_pygls_the_command_says_how_to_install_it(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "pygls", None)  # what a missing package looks like to `import`
    monkeypatch.delitem(sys.modules, "flake8_tensorcopy.adapters.server", raising=False)
    assert main(["server"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install 'pygls>=2'" in err


@pytest.mark.parametrize("tail, noqa", [
    ('    return torch.tensor(hidden, dtype="""\nx""")\n', False),  # the line ends inside a string
    ("    return torch.tensor(hidden) + \\\n 1\n", False),  # ... in a backslash continuation
    ("    return torch.tensor(hidden)  # keep\n", True)])
def test_noqa_is_offered_only_where_a_comment_can_end_the_line(tail, noqa):
    analysis = analyse(Source("u", "/nowhere/t.py", 1, BAD.replace("    return torch.tensor(hidden)\n", tail)))
    [problem] = analysis.problems
    assert (noqa_change(analysis, problem) is not None) is noqa
    assert fix_changes(analysis, problem)


def test_text_changes_are_small_and_keep_line_ends():
    assert text_changes("u", "a\r\nb\r\n", "a\r\nc\r\n") == [Change("u", (1, 0), (1, 1), "c")]
    assert text_changes("u", "a\nb", "a\nbc\nd") == [Change("u", (1, 1), (1, 1), "c\nd")]
    assert text_changes("u", "same\n", "same\n") == []


def test_readme_helix_snippet_starts_this_server():
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        import tomli as tomllib

    section = (ROOT / "README.md").read_text().split("#### Language server", 1)[1].split("\n## ", 1)[0]
    [block] = re.findall(r"```toml\n(.*?)```", section, re.S)
    server = tomllib.loads(block)["language-server"]["tensorcopy"]
    assert [server["command"], *server["args"]] == ["flake8-tensorcopy", "server"]
