"""Is the code at a position written for values of several kinds: does a test of the value's type hold it?"""
from __future__ import annotations

import ast

from .bodies import early_exits, name_assignments
from .facts import dotted, end_of, walk, within

TYPE_TESTS = ("isinstance", "type", "hasattr", "is_tensor", "is_list_like")


def type_tested(key: str, where) -> bool:
    """An enclosing `if` (or conditional expression) tests the type of `key` (isinstance / type / hasattr /
    is_tensor), or an earlier `if` that exits does, directly or through a name bound to such a test
    (`is_result = isinstance(out, Result)`). `where` is a position (facts, frame, pos)."""
    facts, pos = where.facts, where.pos
    root = where.frame.func if where.frame.func is not None else facts.tree
    tests = [n.test for n in facts.enclosing(root, pos) if isinstance(n, (ast.If, ast.IfExp))
             and any(b and within(b, pos) for b in _branches(n))]
    tests += [n.test for n in early_exits(facts, root) if end_of(n) < pos]
    flags = {t.id for test in tests for t in walk(test) if isinstance(t, ast.Name)}
    assigned = name_assignments(facts, root)
    tests += [value for flag in flags for value in assigned.get(flag, ())]
    return any(isinstance(n, ast.Call) and isinstance(n.func, (ast.Name, ast.Attribute)) and n.args
               and (n.func.id if isinstance(n.func, ast.Name) else n.func.attr) in TYPE_TESTS
               and dotted(n.args[0]) == key
               for test in tests for n in walk(test))


def _branches(node) -> list[list]:
    """The statement lists of an `if`, or the one-expression branches of a conditional expression."""
    return [node.body, node.orelse] if isinstance(node, ast.If) else [[node.body], [node.orelse]]
