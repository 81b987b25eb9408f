"""What Lightning's trainer does with a LightningModule, read from the class's code.

A class is a LightningModule when a base is `pl.LightningModule` (`pytorch_lightning`, `lightning`,
`lightning.pytorch`), or a class of the file or of a neighbouring module (analysis/project.py) that is one.
The trainer calls its `training_step` once per batch of the epoch and, under automatic optimization (the
default), backpropagates what it returns: the loss, or the "loss" entry of a returned dict.
"""
from __future__ import annotations

import ast
from typing import Optional

from . import hierarchy, losses, summaries
from .facts import FileFacts, assigned, pos_of, self_attribute, walk

ROOTS = frozenset({"pytorch_lightning", "lightning"})
TRAINING_STEP = "training_step"
Lineage = tuple[tuple[ast.ClassDef, FileFacts], ...]


def training_step(ctx) -> Optional[ast.FunctionDef]:
    """The `training_step` method the node under check is in (not a def nested in it), or None."""
    fn, cls = ctx.frame.func, ctx.frame.cls
    if isinstance(fn, ast.FunctionDef) and fn.name == TRAINING_STEP and cls is not None and fn in cls.body:
        return fn
    return None


def lineage(cls: ast.ClassDef, facts: FileFacts) -> Lineage:
    """`cls` and its base classes found in the file or its neighbours, up to the one whose base is a
    LightningModule; () when the code does not show `cls` to be one."""
    key = ("lightning-lineage", id(cls))
    if key not in facts.memo:
        facts.memo[key] = ()  # a cycle of bases answers no
        facts.memo[key] = _lineage(cls, facts, 0)
    return facts.memo[key]


def _lineage(cls: ast.ClassDef, facts: FileFacts, depth: int) -> Lineage:
    if depth > hierarchy.MAX_BASES:
        return ()
    for base in cls.bases:
        q = facts.qualname(base) or ""
        if q.split(".")[0] in ROOTS and q.endswith(".LightningModule"):
            return ((cls, facts),)
        found = hierarchy.base_class(base, facts)
        above = _lineage(*found, depth + 1) if found is not None else ()
        if above:
            return ((cls, facts),) + above
    return ()


def automatic(classes: Lineage) -> bool:
    """No class of the lineage mentions `automatic_optimization` (setting it False makes the step's return
    value the user's: the trainer no longer backpropagates it)."""
    return not any(_name_of(n) == "automatic_optimization" for cls, _ in classes for n in walk(cls))


def list_attribute(classes: Lineage, attr: str) -> bool:
    """`self.attr` is a list: the classes of the lineage set it, and only to lists (`[]`, `list()`, a list
    comprehension) or None."""
    values = [value for cls, _ in classes for n in walk(cls) if isinstance(n, (ast.Assign, ast.AnnAssign))
              and n.value is not None for target, value in assigned(n) if self_attribute(target) == attr]
    lists = [v for v in values if isinstance(v, (ast.List, ast.ListComp)) or (
        isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "list")]
    return bool(lists) and all(v in lists or isinstance(v, ast.Constant) and v.value is None for v in values)


def backpropagated(classes: Lineage) -> frozenset:
    """Names and attribute paths that reach a backward pass in some method of the lineage."""
    return frozenset().union(*(losses.backpropagated_in(facts, cls) for cls, facts in classes))


def _name_of(node) -> Optional[str]:
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return node.name if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None


def returned_loss(value, step, ctx) -> bool:
    """`value` is a name the step returns with the binding it has here: `return value` (the loss, or a dict
    holding it), `return value["loss"]` (a dict holding it) or `return {"loss": value, ...}`."""
    if not isinstance(value, ast.Name):
        return False
    scope = ctx.frame.scope
    here = [id(b) for b in scope.reaching(value.id, ctx.pos)]
    for r in summaries.returns(step):
        got = r.value
        if isinstance(got, ast.Dict):
            got = next((v for k, v in zip(got.keys, got.values) if _is_loss_key(k)), None)
        elif isinstance(got, ast.Subscript) and _is_loss_key(got.slice):
            got = got.value
        if (isinstance(got, ast.Name) and got.id == value.id and here
                and [id(b) for b in scope.reaching(value.id, pos_of(r))] == here):
            return True
    return False


def _is_loss_key(key) -> bool:
    return isinstance(key, ast.Constant) and key.value == "loss"
