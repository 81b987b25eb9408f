"""The explicit registry of rules. A rule is one module; `spec_from_module` reads its spec."""
from __future__ import annotations

from importlib import import_module
from types import ModuleType

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


# The rules, in code order: one module each.
MODULES = ("ten101", "ten102", "ten103", "ten104", "ten105", "ten201", "ten202", "ten203", "ten204", "ten301", "ten401",
           "ten901", "ten902", "ten903")
RULES: tuple[RuleSpec, ...] = tuple(spec_from_module(import_module(f"{__name__}.{m}")) for m in MODULES)
BY_CODE = {r.code: r for r in RULES}
