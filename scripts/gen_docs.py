"""Write docs/rules/TENxxx.md and the README's rule and unsafe-fix tables from the rules. `--check` only compares."""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's rules, not an installed copy's

from flake8_tensorcopy.rules.docs import (  # noqa: E402
    TABLE_BEGIN, TABLE_END, UNSAFE_BEGIN, UNSAFE_END, catalog_text, rule_page, rule_table, unsafe_fix_table)
from flake8_tensorcopy.rules import catalog_entry, module_rules  # noqa: E402


def wanted() -> dict[Path, str]:
    rules = module_rules()  # the modules, not the catalog this writes
    files = {ROOT / "flake8_tensorcopy" / "rules" / "catalog.json": catalog_text(map(catalog_entry, rules))}
    files |= {ROOT / "docs" / "rules" / f"{r.code}.md": rule_page(r) for r in rules}
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    readme = between(readme, TABLE_BEGIN, TABLE_END, rule_table(rules))
    files[ROOT / "README.md"] = between(readme, UNSAFE_BEGIN, UNSAFE_END, unsafe_fix_table(rules))
    return files


def between(text: str, begin: str, end: str, table: str) -> str:
    head, _, rest = text.partition(begin)
    _, _, tail = rest.partition(end)
    return f"{head}{begin}\n{table}\n{end}{tail}"


def main(argv) -> int:
    stale = [p for p, text in wanted().items() if not p.exists() or p.read_text(encoding="utf-8") != text]
    if "--check" in argv:
        for p in stale:
            print(f"stale: {p.relative_to(ROOT)} (run python scripts/gen_docs.py)")
        return 1 if stale else 0
    for p in stale:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(wanted()[p], encoding="utf-8")
        print(f"wrote {p.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
