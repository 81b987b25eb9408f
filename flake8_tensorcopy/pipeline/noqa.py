"""`# noqa` comments, read as flake8 reads them."""
from __future__ import annotations

import re
from typing import Sequence

from ..rules.model import Finding

NOQA = re.compile(r"#\s*noqa(?::[\s]?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)


def suppressed(finding: Finding, lines: Sequence[str]) -> bool:
    """flake8's `# noqa` semantics on the reported line: bare noqa, or a code list matched by prefix."""
    if not 0 < finding.line <= len(lines):
        return False
    match = NOQA.search(lines[finding.line - 1])
    if not match:
        return False
    codes = match.group("codes")
    if not codes:
        return True
    return any(finding.code.startswith(c.strip().upper()) for c in re.split(r"[,\s]+", codes) if c.strip())
