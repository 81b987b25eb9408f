"""The explicit registry of rules. A rule is one module, which declares itself as `RULE = Rule(...)`."""
from __future__ import annotations

from importlib import import_module

from .model import Rule

# The rules, in code order: one module each.
MODULES = ("ten101", "ten102", "ten103", "ten104", "ten201", "ten202", "ten203", "ten204", "ten301", "ten401",
           "ten901", "ten902", "ten903")
RULES: tuple[Rule, ...] = tuple(import_module(f"{__name__}.{m}").RULE for m in MODULES)
BY_CODE = {r.code: r for r in RULES}
