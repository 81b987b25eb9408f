"""A fixed notebook keeps every byte of its JSON but the changed cells' `source` values (issue 15): escapes
such as `\\/`, number spellings, duplicate keys, compact or indented arrays, key order, the final newline
(or its absence), CRLF. Only when a value cannot be located is the whole file written again."""
from __future__ import annotations

import json

import pytest

from notebook_tools import code_notebook, fix_notebook
from flake8_tensorcopy.notebook import read_notebook
from flake8_tensorcopy.notebook_json import replace_sources, source_spans

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
