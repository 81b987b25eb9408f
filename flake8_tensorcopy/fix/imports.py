"""Adding the imports a fix needs (`import copy`), once, with LibCST, touching nothing else; and removing
an import of the `copy` module that a fix left unused (pyflakes would report it).

The new `import m` goes into the file's top import block: at its sorted place among the standard-library
`import ...` lines when those are sorted, else after the block's last import. A standard-library module
in a block without standard-library imports opens a section of its own at the block's start (PEP 8
order), set off by a blank line; so does the import of a file with no import block, after the module
docstring and `from __future__` imports.
"""
from __future__ import annotations

import sys
from typing import Iterable, Optional, Sequence

import libcst as cst

STDLIB = frozenset(getattr(sys, "stdlib_module_names", ()))


def add_imports(source: str, modules: Iterable[str]) -> str:
    """`source` with `import m` added for each module `m` not already imported at module level."""
    wanted = sorted(set(modules))
    if not wanted:
        return source
    module = cst.parse_module(source)
    present = _imported_modules(module.body)
    missing = [m for m in wanted if m not in present]
    if not missing:
        return source
    body = list(module.body)
    for name in missing:
        _insert(body, name)
    return module.with_changes(body=body).code


def remove_copy_imports(source: str, unused: Iterable[str]) -> str:
    """`source` without the module-level imports from the `copy` module that `unused` names, spelled as
    pyflakes reports an unused import ('copy', 'copy as c', 'copy.deepcopy', 'copy.deepcopy as dc').
    A statement left empty goes, and hands its leading lines (blank lines, comments) to the next one."""
    unused = set(unused)
    module = cst.parse_module(source)
    body, leading = [], []
    for stmt in module.body:
        small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
        if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
            kept = [a for a in small.names if _spelling(small, a) not in unused]
            if not kept:
                leading += stmt.leading_lines
                continue
            if len(kept) < len(small.names):
                kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
                stmt = stmt.with_changes(body=[small.with_changes(names=kept)])
        if not body and stmt is not module.body[0]:  # the file's first statement went: no blank line opens it
            leading, lines = [], list(stmt.leading_lines)
            while lines and lines[0].comment is None:
                lines.pop(0)
            stmt = stmt.with_changes(leading_lines=lines)
        if leading:
            stmt = stmt.with_changes(leading_lines=[*leading, *stmt.leading_lines])
            leading = []
        body.append(stmt)
    return module.with_changes(body=body).code


def _spelling(stmt, alias: cst.ImportAlias) -> Optional[str]:
    """pyflakes' name for an import of the `copy` module, or None for any other import."""
    name = cst.helpers.get_full_name_for_node(alias.name) or ""
    if isinstance(stmt, cst.ImportFrom):
        if stmt.relative or stmt.module is None or cst.helpers.get_full_name_for_node(stmt.module) != "copy":
            return None
        name = f"copy.{name}"
    elif name != "copy":
        return None
    asname = cst.helpers.get_full_name_for_node(alias.asname.name) if alias.asname else None
    return f"{name} as {asname}" if asname and asname != name.rsplit(".", 1)[-1] else name


def _imported_modules(body: Sequence[cst.CSTNode]) -> set[str]:
    """Modules bound under their own name by `import m` at module level (also inside if / try)."""
    found: set[str] = set()
    for stmt in body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Import):
                    for alias in small.names:
                        if alias.asname is None:
                            dotted = cst.helpers.get_full_name_for_node(alias.name) or ""
                            found.update(_prefixes(dotted))
        elif isinstance(stmt, cst.If) and _type_checking(stmt.test):
            continue  # `if TYPE_CHECKING: import copy` binds nothing at run time
        elif isinstance(stmt, (cst.If, cst.Try, cst.With)) or type(stmt).__name__ == "TryStar":
            for block in _blocks(stmt):
                found |= _imported_modules(block)
    return found


def _type_checking(test) -> bool:
    name = cst.helpers.get_full_name_for_node(test) or ""
    return name.rsplit(".", 1)[-1] == "TYPE_CHECKING"


def _prefixes(dotted: str) -> list[str]:
    parts = dotted.split(".")
    return [".".join(parts[: i + 1]) for i in range(len(parts))]


def _blocks(stmt) -> list:
    """The statement lists nested in an if / try / with statement."""
    suites = [stmt.body] + [h.body for h in getattr(stmt, "handlers", ())]
    for attr in ("orelse", "finalbody"):
        extra = getattr(stmt, attr, None)
        if isinstance(extra, cst.If):
            suites.append(cst.IndentedBlock(body=[extra]))
        elif extra is not None:
            suites.append(extra.body)
    return [s.body for s in suites if isinstance(s, cst.IndentedBlock)]


def _insert(body: list, name: str) -> None:
    new = cst.SimpleStatementLine(body=[cst.Import(names=[cst.ImportAlias(name=_dotted(name))])])
    start = _after_preamble(body)
    end = start
    while end < len(body) and _is_import(body[end]):
        end += 1
    at, how = _place(body, start, end, name)
    if how == "section" and at < len(body):  # a section of its own, set off by a blank line
        lines = list(body[at].leading_lines)
        blanks = 0
        while blanks < len(lines) and lines[blanks].comment is None:
            blanks += 1
        new = new.with_changes(leading_lines=lines[:blanks])
        body[at] = body[at].with_changes(leading_lines=[cst.EmptyLine()] + lines[blanks:])
    elif how == "before":  # body[at] hands its leading lines (a section comment, say) to the new line
        new = new.with_changes(leading_lines=body[at].leading_lines)
        body[at] = body[at].with_changes(leading_lines=[])
    body.insert(at, new)


def _place(body: list, start: int, end: int, name: str) -> tuple[int, str]:
    """Where `import name` goes in the import block body[start:end], and how: 'section' (no import
    block, or a standard-library module where the block has none: PEP 8 puts that section first),
    'before' (its sorted place in a sorted run of standard-library `import m` lines) or 'after'."""
    stdlib = name.split(".")[0] in STDLIB
    if end == start or (stdlib and not any(_is_stdlib_import(body[i]) for i in range(start, end))):
        return start, "section"
    run = []
    for i in range(start, end):
        plain = _plain_import(body[i])
        if plain is not None and plain.split(".")[0] in STDLIB and (not run or not body[i].leading_lines):
            run.append((i, plain.lower()))
        elif run:
            break
    names = [n for _, n in run]
    if not stdlib or not run or names != sorted(names):
        return end, "after"
    for i, plain in run:
        if name.lower() < plain:
            return i, "before"
    return run[-1][0] + 1, "after"


def _is_stdlib_import(stmt) -> bool:
    for small in stmt.body:
        if isinstance(small, cst.Import):
            names = [cst.helpers.get_full_name_for_node(a.name) or "" for a in small.names]
        elif small.relative or small.module is None:
            continue
        else:
            names = [cst.helpers.get_full_name_for_node(small.module) or ""]
        if any(n.split(".")[0] in STDLIB for n in names):
            return True
    return False


def _plain_import(stmt) -> Optional[str]:
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Import):
        return cst.helpers.get_full_name_for_node(stmt.body[0].names[0].name)
    return None


def _after_preamble(body: list) -> int:
    """Index after the module docstring and any `from __future__ import ...` lines."""
    i = 0
    if i < len(body) and _is_docstring(body[i]):
        i += 1
    while i < len(body) and _is_future(body[i]):
        i += 1
    return i


def _is_docstring(stmt) -> bool:
    return (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
            and isinstance(stmt.body[0], cst.Expr)
            and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))


def _is_future(stmt) -> bool:
    return (isinstance(stmt, cst.SimpleStatementLine) and stmt.body
            and all(isinstance(s, cst.ImportFrom) and s.module is not None
                    and cst.helpers.get_full_name_for_node(s.module) == "__future__" for s in stmt.body))


def _is_import(stmt) -> bool:
    return (isinstance(stmt, cst.SimpleStatementLine)
            and all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body))


def _dotted(name: str):
    parts = name.split(".")
    node: cst.BaseExpression = cst.Name(parts[0])
    for part in parts[1:]:
        node = cst.Attribute(value=node, attr=cst.Name(part))
    return node
