"""Which paths can run: a binding in a loop under an `if` that the first comparison certainly takes replaces
what was bound before the loop on every run that reaches the loop's end. A threshold that starts at an
extreme (`best = float("inf")` for `if loss < best`, `best = None` for `if best is None or ...`) is beaten by
the first value; one that starts at zero is, for `if score > best`, unless the code makes the value
non-positive (`score = -loss`).
"""
from __future__ import annotations

import ast

from .facts import Bind, pos_of

INFINITIES = frozenset({"math.inf", "numpy.inf", "numpy.Inf", "numpy.infty", "torch.inf", "sys.maxsize"})
HUGE = 1e6
LOOPS = (ast.For, ast.AsyncFor, ast.While)


def replaced_on_first_pass(b, ctx, after) -> bool:
    """Binding `b` sits in a loop that starts after `after`, in the body of `if`s (in no `else`) one of which
    tests a threshold the first value to reach it certainly passes: whatever was bound before the loop is
    replaced the first time the code compares (the loop is taken to run the other tests' branches on some
    pass: `if epoch % 10 == 9`)."""
    inside = ctx.facts.enclosing(ctx.frame.scope.node, b.pos)
    loop = next((n for n in inside if isinstance(n, LOOPS)), None)
    if loop is None or pos_of(loop) <= after:
        return False
    branches = [n for n in inside[:inside.index(loop)] if isinstance(n, ast.If)]
    return all(_in_body(n, b.pos) for n in branches) and any(_certain(n.test, loop, ctx) for n in branches)


def _in_body(node: ast.If, pos) -> bool:
    return not (node.orelse and pos_of(node.orelse[0]) <= pos)


def _certain(test, loop, ctx) -> bool:
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        return any(_certain(v, loop, ctx) for v in test.values)
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return False
    left, op, right = test.left, test.ops[0], test.comparators[0]
    if isinstance(op, (ast.Is, ast.Eq)) and isinstance(right, ast.Constant) and right.value is None:
        return _start(left, loop, ctx) == "none"
    if isinstance(op, (ast.Gt, ast.GtE)):  # value > threshold, or threshold > value
        return _beaten(left, right, "low", loop, ctx) or _beaten(right, left, "high", loop, ctx)
    if isinstance(op, (ast.Lt, ast.LtE)):
        return _beaten(left, right, "high", loop, ctx) or _beaten(right, left, "low", loop, ctx)
    return False


def _beaten(value, threshold, extreme: str, loop, ctx) -> bool:
    """The first `value` passes `threshold`, which starts at the `extreme` ("low": -inf, or zero for a value
    the code does not make non-positive; "high": +inf)."""
    start = _start(threshold, loop, ctx)
    return start == extreme or (start == "zero" and extreme == "low" and not _negated(value, ctx, pos_of(value)))


def _start(name, loop, ctx):
    """What the name holds when the loop starts: "high", "low", "zero", "none" or None (unknown)."""
    if not isinstance(name, ast.Name):
        return None
    found = [b for b in ctx.frame.scope.reaching(name.id, pos_of(loop)) if b.pos < pos_of(loop)]
    if len(found) != 1 or found[0].kind not in (Bind.ASSIGN, Bind.ANNASSIGN) or found[0].value is None:
        return None
    return _extreme(found[0].value, ctx)


def _extreme(value, ctx, sign: int = 1):
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub):
        return _extreme(value.operand, ctx, -sign)
    if isinstance(value, ast.Constant):
        number = value.value if isinstance(value.value, (int, float)) and not isinstance(value.value, bool) else None
        if value.value is None:
            return "none"
        if number == 0:
            return "zero"
        return None if number is None or abs(number) < HUGE else "high" if number * sign > 0 else "low"
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "float" \
            and len(value.args) == 1 and isinstance(value.args[0], ast.Constant):
        text = str(value.args[0].value).lower()
        if text.lstrip("+-") not in ("inf", "infinity"):
            return None
        sign = -sign if text.startswith("-") else sign
    elif ctx.facts.qualname(value) not in INFINITIES:
        return None
    return "high" if sign > 0 else "low"


def _negated(value, ctx, pos) -> bool:
    """The code makes `value` a negation at `pos` (`-loss`, `float(-loss)`, a name bound to one)."""
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub):
        return True
    if isinstance(value, ast.Call) and len(value.args) == 1 and isinstance(value.func, ast.Name) \
            and value.func.id in ("float", "int"):
        return _negated(value.args[0], ctx, pos)
    if isinstance(value, ast.Name):
        return any(b.kind == Bind.ASSIGN and isinstance(b.value, (ast.UnaryOp, ast.Call))
                   and _negated(b.value, ctx, b.pos) for b in ctx.frame.scope.reaching(value.id, pos))
    return False
