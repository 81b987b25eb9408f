"""Classes read from the code: the def a class body gives a method name, the class a base named at the top
of a module stands for (a `class` statement of the file, or one a `from ... import` brings from a
neighbouring module), a class's ancestors found that way, nearest first, and the method `self.m()` runs:
the class's own, else the nearest ancestor's."""
from __future__ import annotations

import ast
from typing import Optional

from . import project
from .facts import Bind, FileFacts

MAX_BASES = 8  # classes followed up a hierarchy
DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
PROPERTIES = frozenset({"property", "setter", "cached_property"})


def method(cls: ast.ClassDef, name: str) -> Optional[ast.AST]:
    """The last plain def `name` in the class body (not a property: that is not called)."""
    for node in reversed(cls.body):
        if isinstance(node, DEFS) and node.name == name:
            decorators = {getattr(d, "id", getattr(d, "attr", None)) for d in node.decorator_list}
            return None if decorators & PROPERTIES else node
    return None


def resolved(cls: ast.ClassDef, name: str, facts: FileFacts) -> Optional[ast.AST]:
    """The def `self.name(...)` runs in a method of `cls` (whose module's facts are `facts`): the class's own
    method `name`, else that of the nearest base class the code shows that defines `name`. None when the
    first class that has the name gives it something other than a plain def (a property, an attribute). The
    bases followed are those at hand (project.at_hand: the file's, and the text under analysis): parsing a
    library's base modules for every `self.m()` of its subclasses added 45 % to the engine's CPU on the bench."""
    queue, seen = [(cls, facts)], 0
    while queue and seen <= MAX_BASES:
        here, home = queue.pop(0)
        seen += 1
        if any(isinstance(n, DEFS + (ast.ClassDef,)) and n.name == name or _binds(n, name) for n in here.body):
            return method(here, name)
        for base in here.bases:
            above = base_class(base, home) if project.at_hand(home, base) else None
            if above is not None and above[0] is not cls:
                queue.append(above)
    return None


def _binds(stmt: ast.stmt, name: str) -> bool:
    """A class-body assignment binds `name` (`forward = run`, `loss: float = 0.0`)."""
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(stmt, ast.AnnAssign) else []
    return any(isinstance(t, ast.Name) and t.id == name for t in targets)


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
