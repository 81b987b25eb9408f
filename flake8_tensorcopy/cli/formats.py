"""Output formats of `check`: text, json (docs/json-format.md), sarif (SARIF 2.1.0), github (annotations)."""
from __future__ import annotations

import json
import os
import re
from typing import Sequence

from .. import __version__
from ..pipeline.lint import Item
from ..rules import BY_CODE, RULES
from ..text import shown


FORMATS = ("text", "json", "sarif", "github")
JSON_VERSION = 1
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def render(fmt: str, items: Sequence[Item], errors: Sequence[tuple[str, str]], files: int,
           show_source: bool = False) -> str:
    if fmt == "json":
        return json.dumps(to_json(items, errors, files), indent=2) + "\n"
    if fmt == "sarif":
        return json.dumps(to_sarif(items, errors), indent=2) + "\n"
    if fmt == "github":
        return "".join(github_line(i) + "\n" for i in items) + "".join(
            f"::error file={_prop(path)}::{_data(message)}\n" for path, message in errors)
    return "".join(text_line(i, show_source) for i in items)


def location(item: Item) -> str:
    """`path:line:col`, or `path:cell N:line:col` in a notebook."""
    cell = f"cell {item.cell}:" if item.cell is not None else ""
    return f"{shown(item.path)}:{cell}{item.line}:{item.column}"


def text_line(item: Item, show_source: bool = False) -> str:
    """`path:line:col: CODE message`; `[*]` before the message marks a finding `fix` repairs by default
    (`fix` says instead, in brackets after the message, what became of the fix: `item.note`)."""
    mark = "[*] " if item.fix == "safe" and not item.note else ""
    note = f" [{item.note}]" if item.note else ""
    line = f"{location(item)}: {item.code} {mark}{item.message}{note}\n"
    if show_source and item.source_line:
        prefix = "".join(c if c == "\t" else " " for c in item.source_line[: item.column - 1])
        line += f"    {item.source_line}\n    {prefix}^\n"
    return line


def to_json(items: Sequence[Item], errors: Sequence[tuple[str, str]], files: int) -> dict:
    from ..rules.docs import DOCS_URL  # the rules' documentation: read only for the formats that link it

    by_code: dict[str, int] = {}
    for i in items:
        by_code[i.code] = by_code.get(i.code, 0) + 1
    return {
        "version": JSON_VERSION,
        "tool": {"name": "flake8-tensorcopy", "version": __version__},
        "summary": {"files": files, "findings": len(items), "errors": len(errors),
                    "by_code": dict(sorted(by_code.items()))},
        "findings": [
            {"path": i.path, "cell": i.cell, "line": i.line, "column": i.column, "end_line": i.end_line,
             "end_column": i.end_column, "code": i.code, "name": BY_CODE[i.code].name, "message": i.message,
             "fix": i.fix, "url": DOCS_URL.format(code=i.code)}
            for i in items
        ],
        "errors": [{"path": path, "message": message} for path, message in errors],
    }


def to_sarif(items: Sequence[Item], errors: Sequence[tuple[str, str]]) -> dict:
    from ..rules.docs import DOCS_URL, fix_metadata

    index = {r.code: n for n, r in enumerate(RULES)}
    rules = [{
        "id": r.code,
        "name": r.name,
        "shortDescription": {"text": r.summary},
        "fullDescription": {"text": doc_section(r.doc, "What it does") or r.summary},
        "helpUri": DOCS_URL.format(code=r.code),
        "defaultConfiguration": {"enabled": r.default_on, "level": "warning"},
        "properties": fix_metadata(r),
    } for r in RULES]
    results = []
    for i in items:
        physical: dict = {"artifactLocation": {"uri": _uri(i.path)}}
        result = {"ruleId": i.code, "ruleIndex": index[i.code], "level": "warning",
                  "message": {"text": i.message}, "locations": [{"physicalLocation": physical}]}
        if i.cell is None:
            physical["region"] = {"startLine": i.line, "startColumn": i.column, "endLine": i.end_line,
                                  "endColumn": i.end_column}
        else:  # a notebook: lines count inside a cell, which SARIF cannot address
            result["message"]["text"] = f"cell {i.cell}, line {i.line}, column {i.column}: {i.message}"
            result["properties"] = {"cell": i.cell, "line": i.line, "column": i.column}
        results.append(result)
    notifications = [{"level": "error", "message": {"text": message},
                      "locations": [{"physicalLocation": {"artifactLocation": {"uri": _uri(path)}}}]}
                     for path, message in errors]
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "flake8-tensorcopy", "version": __version__,
                                "informationUri": DOCS_URL.split("/blob/")[0], "rules": rules}},
            "invocations": [{"executionSuccessful": not errors, "toolExecutionNotifications": notifications}],
            "results": results,
        }],
    }


def github_line(item: Item) -> str:
    """A GitHub Actions workflow command that annotates the line in the pull request."""
    if item.cell is not None:
        where = f"cell {item.cell}, line {item.line}, column {item.column}: "
        return f"::warning file={_prop(item.path)},title={_prop(item.code)}::{_data(where + item.message)}"
    props = (f"file={_prop(item.path)},line={item.line},col={item.column},endLine={item.end_line},"
             f"endColumn={item.end_column},title={_prop(item.code)}")
    return f"::warning {props}::{_data(item.code + ' ' + item.message)}"


def doc_section(doc: str, heading: str) -> str:
    match = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", doc, re.MULTILINE | re.DOTALL)
    return " ".join(match.group(1).split()) if match else ""


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def _uri(path: str) -> str:
    if path in ("stdin", "-"):
        return "stdin"
    from urllib.parse import quote  # SARIF's URIs only: the text format never needs it

    posix = os.fsencode(path.replace(os.sep, "/"))  # the name's own bytes, even when they are not UTF-8
    if os.path.isabs(path):
        return "file://" + quote(posix)
    return quote(posix)
