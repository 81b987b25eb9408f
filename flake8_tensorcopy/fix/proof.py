"""Did a fix have the proof it needs? The fix harness asks this of every fix it applies.

A fix that adds a tensor method call (`.detach()`, `.clone()`, `.item()`, ...) or rebinds a name to a tensor
method's result (`x = x.to(device)`) must name the values it does that to (Fix.tensors), and the analysis
must prove each one a tensor where it stands, asked again here on the text the fix was made for
(rules/edits.proven_tensor), not checked by what pyflakes or a compiler says.
"""
from __future__ import annotations

import ast
import re
from collections import Counter
from typing import Optional

from ..analysis import api, project
from ..analysis.facts import FileFacts
from ..engine.core import parse
from ..rules.context import Context
from ..rules.edits import proven_tensor
from ..rules.model import Finding
from .fixer import ast_lines

METHOD_CALL = re.compile(r"\.\s*([A-Za-z_]\w*)\s*\(")
REBIND = re.compile(r"^\s*[\w.]+\s*=[^=]")


def unproven(text: str, filename: str, finding: Finding) -> Optional[str]:
    """Why `finding`'s fix, made for `text`, lacks proof (None when it has what it needs)."""
    fix = finding.fix
    needs = _needs_proof(text, finding)
    if needs and not fix.tensors:
        return f"{finding.code} fix at line {finding.line} {needs} with no value proven a tensor"
    tree = parse(text, filename)
    for span in fix.tensors:
        node = _node_at(tree, span)
        if node is None or not _proven(tree, text, filename, node):
            shown = ast.unparse(node) if node is not None else f"line {span[0]}"
            return f"{finding.code} fix at line {finding.line}: '{shown}' is not proven a tensor"
    return None


def _needs_proof(text: str, finding: Finding) -> str:
    """What the fix does that needs a tensor: '' when it only moves or wraps calls (`.clone().detach()`
    reordered, `copy.deepcopy(...)` added)."""
    lines = ast_lines(text)
    olds, news = Counter(), Counter()  # over all edits: a fix may move a call from one edit to another
    for edit in finding.fix.edits:
        (l1, c1), (l2, c2) = edit.start, edit.end
        old = "\n".join(lines[l1 - 1:l2])
        old = old[c1:len(old) - (len(lines[l2 - 1]) - c2)] if l1 <= l2 <= len(lines) else ""
        olds, news = olds + _tensor_calls(old), news + _tensor_calls(edit.text)
        if REBIND.match(edit.text) and not REBIND.match(old):
            return "rebinds a name"
    added = news - olds
    return f"adds .{sorted(added)[0]}()" if added else ""


def _tensor_calls(text: str) -> Counter:
    return Counter(m for m in METHOD_CALL.findall(text) if api.method(m) is not None)


def _node_at(tree: ast.Module, span) -> Optional[ast.AST]:
    for node in ast.walk(tree):
        if isinstance(node, ast.expr) and (node.lineno, node.col_offset, node.end_lineno, node.end_col_offset) == span:
            return node
    return None


def _proven(tree: ast.Module, text: str, filename: str, node: ast.AST) -> bool:
    facts = FileFacts(tree, text, (type(node),), sorted({node.lineno, node.end_lineno}))
    facts.path = filename
    with project.analysing(facts):  # as the engine asks: the file's package sees this text
        for seen, frame in facts.nodes:
            if seen is node:
                return proven_tensor(node, Context(facts, frame, node, None))
    return False
