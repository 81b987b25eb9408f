"""Contexts for testing analysis queries directly: the Context a rule would get at a marked statement."""
from __future__ import annotations

import ast
import textwrap

from flake8_tensorcopy.analysis.facts import FileFacts
from flake8_tensorcopy.rules.context import Context

MARK = "# <-"


def context_at(source: str, node_type: type = ast.stmt, path: str = "t.py"):
    """(node, Context) for the outermost `node_type` node on the one line of `source` marked `# <-`."""
    source = textwrap.dedent(source)
    line = 1 + next(i for i, text in enumerate(source.splitlines()) if text.rstrip().endswith(MARK))
    tree = ast.parse(source)
    facts = FileFacts(tree, source, (node_type,) if node_type is not ast.stmt else STATEMENTS)
    facts.path = path
    for node, frame in facts.nodes:
        if node.lineno == line:
            return node, Context(facts, frame, node, None)
    raise AssertionError(f"no {node_type.__name__} on line {line}")


STATEMENTS = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Return)
