"""The explicit registry of rules. A rule is one module, which declares itself as `RULE = Rule(...)`.

A run imports a rule's module (and the analysis it needs) only when the rule is about to look at a file:
RULES is built from catalog.json, the rules' declarations written out by scripts/gen_docs.py, and each
`check` is loaded on its first call. tests/rules/test_registry.py checks the catalog against the modules."""
from __future__ import annotations

import ast
import json
import os
from importlib import import_module
from typing import Optional

from .model import FixAvailability, FixForm, FixSafety, Rule, Trigger


class LazyCheck:
    """A rule module's `check`, the module imported on the first call."""

    def __init__(self, module: str):
        self.module = module
        self.fn: Optional[callable] = None

    def __call__(self, node, ctx):
        if self.fn is None:
            self.fn = import_module(self.module).check
        return self.fn(node, ctx)


def rule_from_catalog(entry: dict) -> Rule:
    """A rule as catalog.json records it (see `catalog_entry`)."""
    def trigger(patterns, line_start, groups) -> Trigger:
        return Trigger(*patterns, line_start=line_start, groups=tuple(groups))

    fields = dict(entry, nodes=tuple(getattr(ast, n) for n in entry["nodes"]), trigger=trigger(*entry["trigger"]),
                  hot=trigger(*entry["hot"]), fix=FixAvailability(entry["fix"]),
                  fix_forms=tuple(FixForm(what, FixSafety(safety), changes, withheld)
                                  for what, safety, changes, withheld in entry["fix_forms"]))
    return Rule(check=LazyCheck(f"{__name__}.{entry['code'].lower()}"), **fields)


def catalog_entry(rule: Rule) -> dict:
    """What catalog.json records of a rule: every field of its declaration but `check`, as plain literals."""
    def trigger(t: Trigger) -> tuple:
        return tuple(p.pattern for p in t.patterns), t.line_start.pattern if t.line_start else None, t.groups

    return {"code": rule.code, "name": rule.name, "message": rule.message, "nodes": [n.__name__ for n in rule.nodes],
            "trigger": trigger(rule.trigger), "hot": trigger(rule.hot), "claim": rule.claim, "doc": rule.doc,
            "fix": rule.fix.value,
            "fix_forms": [(f.what, f.safety.value, f.changes, f.withheld) for f in rule.fix_forms],
            "default_on": rule.default_on, "whole_file": rule.whole_file}


def module_rules() -> tuple[Rule, ...]:
    """The rules as their modules declare them (importing them all)."""
    return tuple(import_module(f"{__name__}.{m}").RULE for m in MODULES)


# The rules, in code order: one module each.
MODULES = ("ten101", "ten102", "ten103", "ten104", "ten201", "ten202", "ten203", "ten204", "ten301", "ten401",
           "ten901", "ten902", "ten903", "ten904", "ten905")
CATALOG = os.path.join(os.path.dirname(__file__), "catalog.json")
with open(CATALOG, encoding="utf-8") as _file:
    RULES: tuple[Rule, ...] = tuple(map(rule_from_catalog, json.load(_file)))
BY_CODE = {r.code: r for r in RULES}
