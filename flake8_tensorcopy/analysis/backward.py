"""Where a backward pass runs after a point: later in the same function body, or, once the function has
returned, in a caller. A caller is a call of
the def in the file followed by a backward in the caller's body (or in a loop holding the call); the
`forward` of a class deriving from a `torch.nn` module is called by whoever trains the module, so it
counts when the file backpropagates anywhere.
"""
from __future__ import annotations

import ast

from . import summaries
from .bindings import end_of, pos_of
from .facts import GRAD_CALLS, children, walk

SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def positions(facts, root) -> list:
    """The sorted positions of the backward calls in `root`'s own body (`x.backward()`, `accelerator.backward(x)`,
    `torch.autograd.grad(...)`), nested defs and classes left out."""
    return facts.index(_positions, root)


def _positions(facts, root) -> list:
    found, stack = [], list(children(root))
    while stack:
        n = stack.pop()
        if isinstance(n, SCOPES):
            continue
        if isinstance(n, ast.Call) and (isinstance(n.func, ast.Attribute) and n.func.attr == "backward"
                                        or facts.qualname(n.func) in GRAD_CALLS):
            found.append(pos_of(n))
        stack.extend(children(n))
    return sorted(found)


def after_in_function(ctx, after) -> bool:
    """A backward later in the body of the function (or module code) the point is in."""
    return any(p > after for p in positions(ctx.facts, ctx.frame.scope.node))


def after_return(ctx) -> bool:
    """The function the point is in returns into a backward: a caller in the file backpropagates after the
    call, or it is the `forward` of a `torch.nn` module class in a file that backpropagates."""
    return _asked_of_callers(ctx, "backward-after-return", lambda fn, call, where: after_in_function(
        where, end_of(call)), also=_forward_of_trained_module)


def result_backpropagated(ctx) -> bool:
    """A caller in the file backpropagates what the function the point is in returns: `f(x).backward()`,
    `(f(x) + reg).backward()`, or `loss = f(x)` then `loss.backward()` (an assembled loss handed back)."""
    return _asked_of_callers(ctx, "result-backpropagated", lambda fn, call, where: _backpropagated_at(call, where))


def _asked_of_callers(ctx, question: str, at_site, also=None) -> bool:
    """`also(fn, ctx)`, or `at_site(fn, call, position)` for some call of the function the point is in; once per
    def and question (False while the question is open: a recursive def answers no)."""
    fn = ctx.frame.func
    if not isinstance(fn, summaries.DEFS):
        return False
    key = (question, id(fn))
    memo = ctx.facts.memo
    if key not in memo:
        memo[key] = False
        memo[key] = bool(also is not None and also(fn, ctx)) or any(
            at_site(fn, call, where) for call, where in summaries.sites(fn, ctx))
    return memo[key]


def _backpropagated_at(call: ast.Call, where) -> bool:
    scope = where.frame.scope
    for n in walk(scope.node):
        if not (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "backward"):
            continue
        root = n.func.value
        if any(part is call for part in walk(root)):
            return True
        if isinstance(root, ast.Name) and any(
                b.value is not None and any(part is call for part in walk(b.value))
                for b in scope.reaching(root.id, pos_of(n))):
            return True
    return False


def _forward_of_trained_module(fn, ctx) -> bool:
    cls = ctx.frame.cls
    if fn.name != "forward" or cls is None or fn not in cls.body:
        return False
    torch_base = any((ctx.facts.qualname(b) or "").startswith("torch.nn.") for b in cls.bases)
    return torch_base and _backpropagates(ctx.facts)


def _backpropagates(facts) -> bool:
    """Some code of the file calls a backward (any def or class, the module's own code)."""
    key = "file-backpropagates"
    if key not in facts.memo:
        facts.memo[key] = any(isinstance(n, ast.Call) and (
            isinstance(n.func, ast.Attribute) and n.func.attr == "backward" or facts.qualname(n.func) in GRAD_CALLS)
            for n in ast.walk(facts.tree)) if "backward" in facts.source or "grad" in facts.source else False
    return facts.memo[key]


def unrelated_after(ctx, after, name: str) -> bool:
    """Every backward later in the function provably runs through a graph that does not hold `name`: each
    is `root.backward()` where all that `root` is computed from is known (torch calls, tensor methods,
    arithmetic, constants and names bound to such) and `name` is not among it (`z = (x * 2).sum();
    z.backward()` after a lesson's write through an alias of `a`)."""
    scope = ctx.frame.scope
    later = [p for p in positions(ctx.facts, scope.node) if p > after]
    roots: dict = {p: set(names) for p, names in ctx.facts.index(_grad_roots, scope.node).items()}
    for root, places in scope.backward_at.items():
        for p in places:
            roots.setdefault(p, set()).add(root)
    for p in later:
        if not roots.get(p):
            return False  # `torch.autograd.grad(...)`, `(a + b).backward()` of no name: unknown
        for root in roots[p]:
            found = _depends_on(root, ctx, p, 0)
            if found is None or name in found:
                return False
    return bool(later)


def _grad_roots(facts, root) -> dict:
    """Position -> the names `torch.autograd.grad(outputs, ...)` differentiates, where its outputs are a name
    or a list or tuple of names (`torch.autograd.grad(z, y)`, `grad([a, b], x)`)."""
    found = {}
    for n in walk(root):
        if isinstance(n, ast.Call) and facts.qualname(n.func) in GRAD_CALLS:
            given = [k.value for k in n.keywords if k.arg in ("outputs", "tensors")] or n.args[:1]
            outputs = given[0].elts if given and isinstance(given[0], (ast.List, ast.Tuple)) else given
            if outputs and all(isinstance(o, ast.Name) for o in outputs):
                found[pos_of(n)] = [o.id for o in outputs]
    return found


def _depends_on(name: str, ctx, pos, depth: int):
    """The names the value `name` holds at `pos` is computed from (itself included), or None when some of it is
    unknown (a parameter, a call of something else than torch, a value from another scope)."""
    if depth > 12:
        return None
    found = {name}
    bindings = ctx.frame.scope.reaching(name, pos)
    if not bindings:
        return None
    for b in bindings:
        if b.kind.name not in ("ASSIGN", "ANNASSIGN") or b.value is None:
            return None
        more = _expr_depends(b.value, ctx, b.pos, depth + 1)
        if more is None:
            return None
        found |= more
    return found


def _expr_depends(expr, ctx, pos, depth: int):
    if isinstance(expr, ast.Constant):
        return set()
    if isinstance(expr, ast.Name):
        return _depends_on(expr.id, ctx, pos, depth)
    if isinstance(expr, ast.Call):
        if isinstance(expr.func, ast.Attribute) and not (ctx.facts.qualname(expr.func) or "").startswith("torch."):
            parts = [expr.func.value]  # a tensor method: what its receiver is computed from
        elif (ctx.facts.qualname(expr.func) or "").startswith("torch."):
            parts = []
        else:
            return None
        parts += list(expr.args) + [k.value for k in expr.keywords]
    elif isinstance(expr, ast.BinOp):
        parts = [expr.left, expr.right]
    elif isinstance(expr, ast.UnaryOp):
        parts = [expr.operand]
    elif isinstance(expr, (ast.Tuple, ast.List)):
        parts = list(expr.elts)
    elif isinstance(expr, ast.Subscript):
        parts = [expr.value, expr.slice]
    elif isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and \
            (ctx.facts.qualname(expr) or "").startswith("torch."):
        return set()  # torch.float32
    else:
        return None
    found = set()
    for part in parts:
        more = _expr_depends(part, ctx, pos, depth + 1)
        if more is None:
            return None
        found |= more
    return found
