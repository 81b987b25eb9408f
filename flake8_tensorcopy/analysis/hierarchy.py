"""Base classes read from the code: the class a base named at the top of a module stands for (a `class`
statement of the file, or one a `from ... import` brings from a neighbouring module), and a class's
ancestors found that way, nearest first."""
from __future__ import annotations

import ast
from typing import Optional

from . import project
from .facts import Bind, FileFacts

MAX_BASES = 8  # classes followed up a hierarchy


def base_class(base: ast.AST, facts: FileFacts) -> Optional[tuple[ast.ClassDef, FileFacts]]:
    """The class a base named at the top of the module stands for: bound there once, by a `class` statement
    or a `from ... import`."""
    found = facts.module_scope.bindings.get(base.id, ()) if isinstance(base, ast.Name) else ()
    if len(found) != 1:
        return None
    b = found[0]
    if b.kind == Bind.OTHER and isinstance(b.node, ast.ClassDef):
        return b.node, facts
    if b.kind == Bind.IMPORT and isinstance(b.node, ast.ImportFrom):
        return project.imported_class(facts, b.node, base.id)
    return None


def ancestors(cls: ast.ClassDef, facts: FileFacts) -> list[tuple[ast.ClassDef, FileFacts]]:
    """The base classes of `cls` the code shows, breadth first, each once, at most MAX_BASES."""
    key = ("ancestors", id(cls))
    if key not in facts.memo:
        found, queue = [], [(cls, facts)]
        while queue and len(found) < MAX_BASES:
            here, home = queue.pop(0)
            for base in here.bases:
                above = base_class(base, home)
                if above is not None and above[0] is not cls and all(above[0] is not c for c, _ in found):
                    found.append(above)
                    queue.append(above)
        facts.memo[key] = found[:MAX_BASES]
    return facts.memo[key]
