"""Where a question about code is asked: a file's facts, the frame there (scope, function, class, grad
mode, guards) and the point. The analysis answers questions at a position; it knows nothing of who asks."""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Optional

from .facts import FileFacts, Frame, Pos


@dataclass(frozen=True)
class Position:
    facts: FileFacts
    frame: Frame
    pos: Pos


def at(where, frame: Frame, node: ast.AST, facts: Optional[FileFacts] = None) -> Position:
    """`where` moved to `node` in `frame` (of another module's file `facts`, when given)."""
    return Position(facts or where.facts, frame, (node.lineno, node.col_offset))
