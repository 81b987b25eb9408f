"""Where a tensor lives: the device the code puts it on, when it shows that.

`placed(expr, ctx, pos)` is a key for the device: the text of the device a move or a factory names
(`device`, `args.device`, `"cuda:0"`), "cuda" for `.cuda()` and torch.cuda's legacy constructors, "cpu" for
`.cpu()`; None when the code does not show it. A value is where the code put it: a move (`x.to(device)`), a
factory given `device=`; through names (every binding that may reach the read agrees), the methods of a
tensor that keep it where it is (`x.unsqueeze(2)`, `x.float()`), `torch.cat` / `torch.stack` of inputs one of
which is known to be there (torch refuses inputs on two devices), and a conditional expression whose test
the read sits under (`k = cuda_made if cuda else cpu_made` read in `if cuda:`). Keys are compared as text:
`device` and `"cuda"` are not known to be the same device. An attribute `self.x` is where the one
assignment of it in the function, before the read and in a block that holds it, put its value.
"""
from __future__ import annotations

import ast
from typing import Optional

from . import api, evidence, summaries
from .bindings import Bind
from .facts import PARAMETER_CLASSES, dotted, end_of, pos_of
from .position import Position

MAX_DEPTH = 20
JOINS = frozenset({"torch.cat", "torch.concat", "torch.concatenate", "torch.stack", "torch.hstack", "torch.vstack"})
REGISTERS = frozenset({"register_buffer", "register_parameter"})  # what a module's .to() moves with it
MOVES = frozenset({"to", "cuda", "cpu", "type", "numpy", "tolist", "item"})  # leave the device, or the tensor


def move_key(call: ast.Call) -> Optional[str]:
    """The device `x.to(D)`, `x.cuda()` or `x.cpu()` moves to, as a key; None for another call or argument."""
    if not isinstance(call.func, ast.Attribute):
        return None
    attr, args, kw = call.func.attr, call.args, {k.arg: k.value for k in call.keywords}
    if attr in ("cuda", "cpu") and not args and set(kw) <= {"non_blocking"}:
        return attr
    if attr == "to" and set(kw) <= {"non_blocking", "device"} and len(args) + ("device" in kw) == 1:
        return _key(args[0] if args else kw["device"])
    return None


def already_there(call: ast.AST, ctx: Position) -> bool:
    """`call` is one move (`t.to(device)`, `t.cuda()`) of a value to where the code put it already."""
    to = move_key(call) if isinstance(call, ast.Call) else None
    return to is not None and placed(call.func.value, ctx) == to


def moved_with_its_module(expr: ast.AST, ctx: Position) -> bool:
    """`self.w` is a parameter of the enclosing torch module: the module's own `.to()` moves it (a discarded
    `self.w.to(dev)` changes nothing, and a plain tensor may not take a parameter's place)."""
    cls = ctx.frame.cls
    if not (isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self"
            and cls is not None and evidence.is_module_class(cls, ctx)):
        return False
    registered = any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in REGISTERS
                     and n.args and isinstance(n.args[0], ast.Constant) and n.args[0].value == expr.attr
                     for n in ast.walk(cls))
    values = [v for v in summaries.self_assignments(cls, ctx).get(expr.attr, ())
              if not (isinstance(v, ast.Constant) and v.value is None)]
    return registered or bool(values) and all(
        isinstance(v, ast.Call) and ctx.facts.qualname(v.func) in PARAMETER_CLASSES for v in values)


def _key(device: ast.AST) -> Optional[str]:
    if isinstance(device, ast.Constant) and isinstance(device.value, str):
        return "cuda" if device.value == "cuda" else device.value
    text = dotted(device)
    return None if text is None or text.startswith("torch.") else text  # torch.float16 is a dtype


def placed(expr: ast.AST, ctx: Position, pos=None, depth: int = 0, read=None) -> Optional[str]:
    """The device key of the tensor `expr` evaluates to at `pos` (module docstring), or None; `read` is where
    the value is used, whose enclosing `if`s choose the arm of a conditional expression."""
    if depth > MAX_DEPTH:
        return None
    pos = pos or ctx.pos
    read = read or pos
    if isinstance(expr, ast.Name):
        found = ctx.frame.scope.reaching(expr.id, pos)
        keys = {_binding(b, ctx, depth, read) for b in found}
        return keys.pop() if len(keys) == 1 and found else None
    if isinstance(expr, ast.IfExp):
        taken = _taken(expr, ctx, read)
        if taken is not None:
            return placed(taken, ctx, pos, depth + 1, read)
        body, orelse = placed(expr.body, ctx, pos, depth + 1, read), placed(expr.orelse, ctx, pos, depth + 1, read)
        return body if body == orelse else None
    if isinstance(expr, ast.Subscript):
        return placed(expr.value, ctx, pos, depth + 1, read)
    if isinstance(expr, ast.Attribute):
        value = _set_before(expr, ctx, pos)
        return placed(value, ctx, pos_of(value), depth + 1, read) if value is not None else None
    if not isinstance(expr, ast.Call):
        return None
    moved = move_key(expr)
    if moved is not None:
        return moved
    q = ctx.facts.qualname(expr.func)
    if q is not None:
        return _made(expr, q, ctx, pos, depth, read)
    if isinstance(expr.func, ast.Attribute) and expr.func.attr not in MOVES and api.method(expr.func.attr) is not None:
        return placed(expr.func.value, ctx, pos, depth + 1, read)  # x.unsqueeze(2), x.float(): where x is
    return None


def _made(call: ast.Call, q: str, ctx, pos, depth: int, read) -> Optional[str]:
    """A torch call's device: `device=` of a factory, torch.cuda's constructors, a join of its inputs."""
    if q.startswith("torch.cuda.") and q.endswith("Tensor"):
        return "cuda"
    given = next((k.value for k in call.keywords if k.arg == "device"), None)
    if given is not None:
        return _key(given)
    if q in JOINS and call.args and isinstance(call.args[0], (ast.List, ast.Tuple)):
        keys = {placed(e, ctx, pos, depth + 1, read) for e in call.args[0].elts} - {None}
        return keys.pop() if len(keys) == 1 else None
    if q in PARAMETER_CLASSES and call.args:
        return placed(call.args[0], ctx, pos, depth + 1, read)
    return None


def _set_before(attr: ast.Attribute, ctx, pos) -> Optional[ast.AST]:
    """The value of `self.x = value`, the one assignment of `self.x` in the function, made before `pos` in a
    block that holds the read (`self.w = nn.Parameter(k)` then `if cuda: self.w.cuda()`)."""
    func, key = ctx.frame.func, dotted(attr)
    if func is None or key is None or not key.startswith("self."):
        return None
    found = [n for n in ast.walk(func) if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign))
             and any(dotted(t) == key for t in (n.targets if isinstance(n, ast.Assign) else [n.target]))]
    if len(found) != 1 or not isinstance(found[0], ast.Assign) or len(found[0].targets) != 1 \
            or pos_of(found[0]) >= pos:
        return None
    holders = [func] + ctx.facts.enclosing(func, pos)
    blocks = [getattr(h, name, None) for h in holders for name in ("body", "orelse", "finalbody")]
    return found[0].value if any(isinstance(b, list) and found[0] in b for b in blocks) else None


def _binding(b, ctx, depth: int, read) -> Optional[str]:
    if b.kind not in (Bind.ASSIGN, Bind.ANNASSIGN) or b.value is None:
        return None
    return placed(b.value, ctx, b.pos, depth + 1, read)


def _taken(expr: ast.IfExp, ctx, pos) -> Optional[ast.AST]:
    """The arm of `a if flag else b` that runs, when the read at `pos` sits in the body (or the else) of an
    `if flag:` of the same function and `flag` is a name bound once, before both."""
    test = expr.test
    if not isinstance(test, ast.Name) or len(ctx.frame.scope.bindings.get(test.id, ())) != 1:
        return None
    root = ctx.frame.func if ctx.frame.func is not None else ctx.facts.tree
    for node in ctx.facts.enclosing(root, pos):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == test.id \
                and pos_of(node) <= pos <= end_of(node):
            return expr.orelse if node.orelse and pos >= pos_of(node.orelse[0]) else expr.body
    return None
