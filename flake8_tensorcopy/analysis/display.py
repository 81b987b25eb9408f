"""Code that only displays a value: `print(t)`, or a notebook cell's last expression (its displayed output).

A lesson that writes through an alias and then only shows both sides demonstrates the sharing on purpose;
a copy added by a fix would change only what it shows (TEN101, TEN103 offer no fix there).
"""
from __future__ import annotations

import ast
import bisect
from typing import Optional

from .facts import end_of


def displayed(node: ast.stmt, ctx) -> bool:
    """`node` is the last statement of a notebook cell (FileFacts.cell_ends), an expression not ended by
    `;`: its value is the cell's displayed output (`y_preds.cpu()` shows the predictions)."""
    if not isinstance(node, ast.Expr) or not ctx.facts.cell_ends:
        return False
    ids, _, lines, ends = ctx.facts.index(_cells, ctx.facts.tree)
    i = bisect.bisect_left(ends, node.end_lineno)
    if i == len(ends) or id(node) not in ids:
        return False
    j = bisect.bisect_right(lines, node.end_lineno)  # the next module statement, on a later line
    rest = ctx.facts.lines[node.end_lineno - 1][node.end_col_offset:].lstrip()
    return (j == len(lines) or lines[j] > ends[i]) and not rest.startswith(";")


def _cells(facts, tree) -> tuple:
    """The module's statements (their ids, where each starts and its first line, in order) and the sorted
    cell ends."""
    return ({id(s) for s in tree.body}, [(s.lineno, s.col_offset) for s in tree.body],
            [s.lineno for s in tree.body], sorted(facts.cell_ends))


def _module_statement(pos, ctx) -> Optional[ast.stmt]:
    """The statement of the module's body that holds `pos`."""
    starts = ctx.facts.index(_cells, ctx.facts.tree)[1]
    k = bisect.bisect_right(starts, pos) - 1
    stmt = ctx.facts.tree.body[k] if k >= 0 else None
    return stmt if stmt is not None and pos <= end_of(stmt) else None


def only_shown(source: ast.AST, write: ast.AST, ctx, alias: str = "") -> bool:
    """The code shows the sharing on purpose, as a lesson does: every read of the named `source`'s object
    after `write` is printed or a cell's displayed output (`t.add_(1); print(t); print(n)`), or the first
    one shows the `alias` beside it (`b += 1; print(a, b)`). Reads a later rebinding reaches are of
    another object."""
    if not isinstance(source, ast.Name):
        return False
    scope = ctx.frame.scope
    origin = scope.origin(source.id, ctx.pos)
    reached = (p for p in scope.loads_after(source.id, end_of(write))
               if origin is None or any(b is origin for b in scope.reaching(source.id, p)))
    first_read = next(reached, None)
    first = _shown_in(first_read, ctx) if first_read is not None else None
    if first is None:  # no read after the write, or the first one uses the value
        return False
    if alias and any(isinstance(n, ast.Name) and n.id == alias for n in ast.walk(first)):
        return True
    return all(_shown_in(pos, ctx) is not None for pos in reached)


def _shown_in(pos, ctx) -> Optional[ast.AST]:
    """The `print(...)` call or the cell's displayed output that holds the read at `pos`, else None."""
    root = ctx.frame.func if ctx.frame.func is not None else ctx.facts.tree
    printed = next((n for n in ctx.facts.enclosing(root, pos) if _printed(n)), None)
    if printed is not None:
        return printed
    stmt = _module_statement(pos, ctx) if ctx.facts.cell_ends else None
    return stmt if stmt is not None and displayed(stmt, ctx) else None


def _printed(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print"
