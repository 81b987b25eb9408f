"""A fixed notebook keeps every byte of its JSON but the changed cells' `source` values (issue 15): escapes
such as `\\/`, number spellings, duplicate keys, compact or indented arrays, key order, the final newline
(or its absence), CRLF. Only when a value cannot be located is the whole file written again."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, strategies as st

from tests.support.notebook_tools import code_notebook, fix_notebook
from flake8_tensorcopy.sources.notebook import read_notebook
from flake8_tensorcopy.sources.notebook_json import replace_sources, source_spans

HAND_WRITTEN = (
    '{"nbformat_minor": 5, "metadata": {"lr": 1.0e-3, "url": "http:\\/\\/x", "lr": 2E-3, "tags": ["a","b"]},\n'
    ' "cells": [\n'
    '  {"cell_type": "code", "outputs": [{"data": [1,2, 3]}], "metadata": {}, "execution_count": null,\n'
    '   "source": [\n'
    '     "import torch\\n",\n'
    '     "path = \\"a\\/b\\"\\n",\n'
    '     "h = torch.ones(3)\\n",\n'
    '     "b = torch.tensor(h)\\n",\n'
    '     "print(b)"\n'
    '   ]},\n'
    '  {"cell_type": "markdown", "metadata": {}, "source": "caf\\u00e9 \\/ notes"},\n'
    '  {"cell_type": "code", "outputs": [], "metadata": {}, "execution_count": 3, "source": "c = torch.tensor(h)"}\n'
    ' ],\n'
    ' "nbformat": 4}'
)
FIXED = HAND_WRITTEN.replace('"b = torch.tensor(h)\\n"', '"b = h.detach().clone()\\n"').replace(
    '"c = torch.tensor(h)"', '"c = h.detach().clone()"')


@pytest.mark.parametrize("newline, end", [("\n", ""), ("\n", "\n"), ("\r\n", "\r\n"), ("\r\n", "")])
def test_fix_changes_only_the_fixed_sources(tmp_path, capsys, newline, end):
    text = HAND_WRITTEN.replace("\n", newline) + end
    code, after, _ = fix_notebook(tmp_path, capsys, text)
    assert code == 0
    assert after == FIXED.replace("\n", newline) + end


def test_source_spans_follow_json_loads_on_duplicate_keys():
    text = '{"cells": [], "cells": [{"source": "a", "source": ["b"]}, {"cell_type": "raw"}, 7]}'
    spans = source_spans(text)
    assert [text[a:b] for a, b in spans[:1]] == ['["b"]'] and spans[1:] == [None, None]
    assert source_spans('{"cell": []}') is None and source_spans("[1]") is None
    assert replace_sources(text, {1: "x"}) is None  # no `source` to replace


def test_an_empty_source_list_gets_the_files_indentation():
    text = code_notebook([], "x = 1\n")
    out = read_notebook(text).with_program("import copy\n" + read_notebook(text).program)
    data = json.loads(text)
    data["cells"][0]["source"] = ["import copy"]
    assert out == json.dumps(data, indent=1) + "\n"


def test_without_a_source_to_replace_the_whole_file_is_written_again():
    data = json.loads(code_notebook("x = 1\n", "y = 2\n"))
    del data["cells"][0]["source"]
    text = json.dumps(data, indent=2)  # no final newline: kept
    nb = read_notebook(text)
    out = nb.with_program("import copy\n" + nb.program)
    data["cells"][0]["source"] = ["import copy"]
    assert out == json.dumps(data, indent=2)


LINES = st.lists(st.text(st.characters(blacklist_categories=("Cs",)), max_size=12).map(lambda s: s + "\n"), max_size=4)
LAYOUT = st.fixed_dictionaries({"indent": st.sampled_from([None, 1, 2, "\t"]), "ensure_ascii": st.booleans(),
                                "separators": st.sampled_from([(",", ": "), (", ", ": "), (",", ":")])})


@given(st.lists(st.one_of(LINES, LINES.map("".join)), min_size=1, max_size=4), LAYOUT, st.booleans(),
       st.data())
def test_spliced_sources_read_back_and_nothing_else_moves(sources, layout, crlf, data):
    nb = {"cells": [{"cell_type": "code", "metadata": {"x": "a/b"}, "source": s} for s in sources],
          "metadata": {}, "nbformat": 4}
    text = json.dumps(nb, **layout)
    text = text.replace("\n", "\r\n") if crlf else text
    index = data.draw(st.integers(0, len(sources) - 1))
    new = data.draw(LINES)
    new = "".join(new) if isinstance(sources[index], str) else new
    out = replace_sources(text, {index: new})
    nb["cells"][index]["source"] = new
    assert json.loads(out) == nb
    start, end = source_spans(text)[index]
    assert out.startswith(text[:start]) and out.endswith(text[end:])
    assert ("\n" in out.replace("\r\n", "")) == ("\n" in text.replace("\r\n", ""))  # line ends kept
