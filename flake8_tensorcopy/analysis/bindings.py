"""Where a name gets its value: bindings, and the positions (line, column) the analysis speaks in."""
from __future__ import annotations

import ast
import enum
from dataclasses import dataclass
from typing import Optional

Pos = tuple[int, int]


def pos_of(node: ast.AST) -> Pos:
    return (node.lineno, node.col_offset)


def end_of(node: ast.AST) -> Pos:
    return (node.end_lineno or node.lineno, node.end_col_offset or 0)


class Bind(enum.Enum):
    """How a binding gives a name its value."""

    ASSIGN = "assign"  # name = value
    ANNASSIGN = "annassign"  # name: T = value
    AUG = "aug"  # name += value (the same object, for tensors)
    UNPACK = "unpack"  # a, b = value: element `index` of value
    FOR = "for"  # for name in value
    WITH = "with"  # with value as name
    ARG = "arg"  # a parameter
    IMPORT = "import"
    DEL = "del"
    OTHER = "other"  # def, class, except ... as name, targets the walk does not follow


@dataclass
class Binding:
    name: str
    pos: Pos  # start of the binding statement
    end: Pos  # end of the binding statement
    kind: Bind
    value: Optional[ast.expr] = None  # the bound expression, for simple `name = value`
    annotation: Optional[ast.expr] = None
    node: Optional[ast.AST] = None  # the binding statement (or arg / loop)
    grad_off: bool = False  # bound under no_grad / inference_mode
    block: Optional[tuple[Pos, Pos]] = None  # the conditional body the binding sits in, if any
    index: Optional[int] = None  # Bind.UNPACK: the element of `value` this name takes (`a, b = f()`)
