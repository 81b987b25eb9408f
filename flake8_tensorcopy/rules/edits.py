"""Small text helpers shared by the rules' fixes."""
from __future__ import annotations

import ast

from .model import Edit

ATOMS = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.List, ast.Tuple, ast.Dict)


def as_receiver(text: str, node: ast.AST) -> str:
    """`text` ready to take a method call: `a + b` becomes `(a + b)`."""
    return text if isinstance(node, ATOMS) else f"({text})"


def before_method(ctx, attribute: ast.Attribute, text: str) -> Edit:
    """Insert `text` just before the method name of `recv.method`: with text 'detach().',
    `(a + b).clone()` becomes `(a + b).detach().clone()`, whatever the receiver's parentheses."""
    line, col = ctx.char_pos(attribute.end_lineno, attribute.end_col_offset)
    at = (line, col - len(attribute.attr))
    return Edit(at, at, text)


def detached_clone(text: str, node: ast.AST) -> str:
    """`text.detach().clone()` to replace a copy of `node`; `t.detach()` needs only `.clone()`."""
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "detach"
            and not node.args and not node.keywords):
        return f"{text}.clone()"
    return f"{as_receiver(text, node)}.detach().clone()"
