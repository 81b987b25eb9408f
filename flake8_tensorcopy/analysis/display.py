"""Code that only displays a value: `print(t)`, or a notebook cell's last expression (its displayed output).

A lesson that writes through an alias and then only shows both sides demonstrates the sharing on purpose;
a copy added by a fix would change only what it shows (TEN101, TEN103 offer no fix there).
"""
from __future__ import annotations

import ast
import bisect
from typing import Optional

from .facts import end_of, pos_of


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
    one is, showing the `alias` beside it (`b += 1; print(a, b)`) or the source itself (`print(n)`, to show
    it changed, whatever the code does with it next); the reads after a first shown one may
    also be copies, a lesson's contrast (cells `arr`, then `c = torch.tensor(arr)`). Reads a later
    rebinding reaches are of another object."""
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
    if _whole(first, first_read):
        return True  # `arr[:, 0] = 20`, then `print(t)`: the first look at the source is at itself, to show it changed
    return all(_shown_in(pos, ctx) is not None or _copied_at(pos, ctx) for pos in reached)


def _whole(shown: ast.AST, pos) -> bool:
    """The display shows the object itself: `print(t)`, a cell's output `t` or `t, arr`, not `print(t.mean())`."""
    parts = shown.args if isinstance(shown, ast.Call) else [shown.value] if isinstance(shown, ast.Expr) else []
    parts = [e for p in parts for e in (p.elts if isinstance(p, ast.Tuple) else [p])]
    return any(isinstance(e, ast.Name) and pos_of(e) == pos for e in parts)


def _shown_in(pos, ctx) -> Optional[ast.AST]:
    """The `print(...)` call or the cell's displayed output that holds the read at `pos`, else None."""
    root = ctx.frame.func if ctx.frame.func is not None else ctx.facts.tree
    printed = next((n for n in ctx.facts.enclosing(root, pos) if _printed(n)), None)
    if printed is not None:
        return printed
    stmt = _module_statement(pos, ctx) if ctx.facts.cell_ends else None
    return stmt if stmt is not None and displayed(stmt, ctx) else None


COPIES = frozenset({"torch.tensor", "numpy.array", "numpy.copy", "copy.copy", "copy.deepcopy"})


def _copied_at(pos, ctx) -> bool:
    """The read at `pos` is what a copy is made of: `torch.tensor(arr)`, `np.copy(arr)`, `arr.copy()`."""
    root = ctx.frame.func if ctx.frame.func is not None else ctx.facts.tree
    for n in ctx.facts.enclosing(root, pos):
        if isinstance(n, ast.Call):
            if isinstance(n.func, ast.Attribute) and n.func.attr in ("copy", "clone") and not n.args and \
                    isinstance(n.func.value, ast.Name) and pos_of(n.func.value) == pos:
                return True
            return (ctx.facts.qualname(n.func) or "") in COPIES and bool(n.args) and pos_of(n.args[0]) == pos
    return False


def _printed(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print"
