"""The explicit registry of rules. A rule is one module; `spec_from_module` reads its spec.

A run imports a rule's module (and the analysis it needs) only when the rule is about to look at a file:
RULES is built from catalog.json, the rules' specs written out by scripts/gen_docs.py, and each `check` is
loaded on its first call. tests/test_registry.py checks the catalog against the modules."""
from __future__ import annotations

import ast
import json
import os
from importlib import import_module
from types import ModuleType
from typing import Optional

from .model import FixSafety, RuleSpec, Trigger


def spec_from_module(module: ModuleType) -> RuleSpec:
    doc = (module.__doc__ or "").strip()
    summary = doc.splitlines()[0] if doc else ""
    return RuleSpec(
        code=module.CODE,
        name=module.NAME,
        message=module.MESSAGE,
        nodes=tuple(module.NODES),
        check=module.check,
        trigger=Trigger.of(module.TRIGGER),
        claim=module.CLAIM,
        doc=doc,
        hot=Trigger.of(getattr(module, "HOT", module.TRIGGER)),
        whole_file=getattr(module, "WHOLE_FILE", False),
        fix_safety=getattr(module, "FIX", FixSafety.NONE),
        default_on=getattr(module, "DEFAULT_ON", True),
        summary=summary,
    )


class LazyCheck:
    """A rule module's `check`, the module imported on the first call."""

    def __init__(self, module: str):
        self.module = module
        self.fn: Optional[callable] = None

    def __call__(self, node, ctx):
        if self.fn is None:
            self.fn = import_module(self.module).check
        return self.fn(node, ctx)


def spec_from_catalog(entry: dict) -> RuleSpec:
    """A rule's spec as catalog.json records it (see `catalog_entry`)."""
    def trigger(patterns, line_start, groups) -> Trigger:
        return Trigger(*patterns, line_start=line_start, groups=tuple(groups))

    fields = dict(entry, nodes=tuple(getattr(ast, n) for n in entry["nodes"]), trigger=trigger(*entry["trigger"]),
                  hot=trigger(*entry["hot"]), fix_safety=FixSafety(entry["fix_safety"]))
    return RuleSpec(check=LazyCheck(f"{__name__}.{entry['code'].lower()}"), **fields)


def catalog_entry(spec: RuleSpec) -> dict:
    """What catalog.json records of a rule: every field of its spec but `check`, as plain literals."""
    def trigger(t: Trigger) -> tuple:
        return tuple(p.pattern for p in t.patterns), t.line_start.pattern if t.line_start else None, t.groups

    return {"code": spec.code, "name": spec.name, "message": spec.message, "nodes": [n.__name__ for n in spec.nodes],
            "trigger": trigger(spec.trigger), "hot": trigger(spec.hot), "claim": spec.claim, "doc": spec.doc,
            "whole_file": spec.whole_file, "fix_safety": spec.fix_safety.value, "default_on": spec.default_on,
            "summary": spec.summary}


def module_specs() -> tuple[RuleSpec, ...]:
    """The specs read from the rule modules themselves (importing them all)."""
    return tuple(spec_from_module(import_module(f"{__name__}.{m}")) for m in MODULES)


# The rules, in code order: one module each.
MODULES = ("ten101", "ten102", "ten103", "ten104", "ten201", "ten202", "ten203", "ten204", "ten301", "ten401",
           "ten901", "ten902", "ten903")
CATALOG = os.path.join(os.path.dirname(__file__), "catalog.json")
with open(CATALOG, encoding="utf-8") as _file:
    RULES: tuple[RuleSpec, ...] = tuple(map(spec_from_catalog, json.load(_file)))
BY_CODE = {r.code: r for r in RULES}
