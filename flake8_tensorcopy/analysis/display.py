"""Code that only displays a value: `print(t)`, or a notebook cell's last expression (its displayed output).

A lesson that writes through an alias and then only shows both sides demonstrates the sharing on purpose;
a copy added by a fix would change only what it shows (TEN101, TEN103 offer no fix there).
"""
from __future__ import annotations

import ast
from typing import Optional

from .facts import end_of


def displayed(node: ast.stmt, ctx) -> bool:
    """`node` is the last statement of a notebook cell (FileFacts.cell_ends), an expression not ended by
    `;`: its value is the cell's displayed output (`y_preds.cpu()` shows the predictions)."""
    if not isinstance(node, ast.Expr):
        return False
    ends = [e for e in ctx.facts.cell_ends if e >= node.end_lineno]
    if not ends or not any(s is node for s in ctx.facts.tree.body):
        return False
    later = [s.lineno for s in ctx.facts.tree.body if s.lineno > node.end_lineno]
    rest = ctx.facts.lines[node.end_lineno - 1][node.end_col_offset:].lstrip()
    return (not later or min(later) > min(ends)) and not rest.startswith(";")


def only_shown(source: ast.AST, write: ast.AST, ctx, alias: str = "") -> bool:
    """The code shows the sharing on purpose, as a lesson does: every read of the named `source`'s object
    after `write` is printed or a cell's displayed output (`t.add_(1); print(t); print(n)`), or the first
    one shows the `alias` beside it (`b += 1; print(a, b)`). Reads a later rebinding reaches are of
    another object."""
    if not isinstance(source, ast.Name):
        return False
    scope = ctx.frame.scope
    origin = scope.origin(source.id, ctx.pos)
    reads = scope.loads_after(source.id, end_of(write))
    if origin is not None:
        reads = [p for p in reads if any(b is origin for b in scope.reaching(source.id, p))]
    if not reads:
        return False
    shows = [_shown_in(pos, ctx) for pos in reads]
    first = shows[reads.index(min(reads))]
    return all(shows) or (bool(alias) and first is not None and any(
        isinstance(n, ast.Name) and n.id == alias for n in ast.walk(first)))


def _shown_in(pos, ctx) -> Optional[ast.AST]:
    """The `print(...)` call or the cell's displayed output that holds the read at `pos`, else None."""
    root = ctx.frame.func if ctx.frame.func is not None else ctx.facts.tree
    printed = next((n for n in ctx.facts.enclosing(root, pos) if _printed(n)), None)
    if printed is not None:
        return printed
    return next((s for s in ctx.facts.tree.body if (s.lineno, s.col_offset) <= pos <= end_of(s)
                 and displayed(s, ctx)), None)


def _printed(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print"
