"""The file's neighbours: a function imported from another module of the same package (or, for a script,
from a module beside it) is summarised from that module's source, read from disk when a rule first asks.

`train_x, calib_x = split(X, Y)` with `from .utils import split`: what `split` returns is known from
`utils.py` as if it were written in this file. Only plain defs are followed (not classes, not names
re-bound at run time); a module that cannot be read or parsed answers nothing. Each module is parsed
once per process (keyed by path, size and modification time).
"""
from __future__ import annotations

import ast
import io
import os
import stat
import tokenize
from typing import Optional

from .facts import Bind, FileFacts

LIMIT = 1 << 20  # a module larger than this (generated code, vendored data) is not read
MAX_HOPS = 3  # re-exports followed: `from .ops import f` in a package's __init__.py
DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
STDIN_NAMES = ("-", "stdin", "<stdin>")  # source with no place on disk: nothing beside it to read
_parsed: dict[tuple, Optional[FileFacts]] = {}


def imported_def(facts: FileFacts, node: ast.ImportFrom, name: str, hops: int = 0) -> Optional[ast.AST]:
    """The plain def that `name`, bound by `node` in the file of `facts`, names in its own module."""
    if facts.path in (None, *STDIN_NAMES) or hops > MAX_HOPS:
        return None
    alias = next((a for a in node.names if (a.asname or a.name) == name), None)
    if alias is None or alias.name == "*":
        return None
    home = _module_facts(facts.path, node.module, node.level)
    if home is None:
        return None
    found = home.module_scope.bindings.get(alias.name, ())
    if len(found) != 1:  # bound twice (a fallback import, a redefinition): which one runs is unknown
        return None
    b = found[0]
    if b.kind == Bind.OTHER and isinstance(b.node, DEFS):
        return b.node
    if b.kind == Bind.IMPORT and isinstance(b.node, ast.ImportFrom):
        return imported_def(home, b.node, alias.name, hops + 1)
    return None


def module_def(facts: FileFacts, node: ast.AST, name: str, attr: str) -> Optional[ast.AST]:
    """The plain def `attr` of the module that `name`, bound by `node`, stands for: `utils.split(...)`
    after `import utils`, `import pkg.utils as utils` or `from . import utils`."""
    if facts.path in (None, *STDIN_NAMES):
        return None
    if isinstance(node, ast.Import):
        alias = next((a for a in node.names if a.asname == name or (a.asname is None and a.name == name)), None)
        module, level = (alias.name if alias else None), 0
    else:
        alias = next((a for a in node.names if (a.asname or a.name) == name), None)
        module, level = (".".join(filter(None, [node.module, alias.name])) if alias else None), node.level
    home = _module_facts(facts.path, module, level) if module else None
    if home is None:
        return None
    found = home.module_scope.bindings.get(attr, ())
    if len(found) == 1 and found[0].kind == Bind.OTHER and isinstance(found[0].node, DEFS):
        return found[0].node
    return None


def home(fn: ast.AST) -> Optional[FileFacts]:
    """The facts of the other module `fn` was found in; None for a def of the file itself."""
    return _homes.get(id(fn))


_homes: dict[int, FileFacts] = {}


def _module_facts(path: str, module: Optional[str], level: int) -> Optional[FileFacts]:
    """The facts of the module that `from <level dots><module> import ...` in the file at `path` reads."""
    here = os.path.dirname(os.path.abspath(path))
    parts = module.split(".") if module else []
    if level:
        base = here
        for _ in range(level - 1):
            base = os.path.dirname(base)
        candidates = [base]
    else:
        top = _package_top(here)
        candidates = [os.path.dirname(top)] if top and os.path.basename(top) == parts[0] else []
        if not os.path.exists(os.path.join(here, "__init__.py")):
            candidates.append(here)  # a script imports the modules beside it
    for base in candidates:
        target = os.path.join(base, *parts)
        for file in (target + ".py", os.path.join(target, "__init__.py")):
            if parts or file.endswith("__init__.py"):
                facts = _facts_of(file)
                if facts is not None:
                    return facts
    return None


def _package_top(folder: str) -> Optional[str]:
    """The outermost package folder holding `folder` (each folder on the way has an __init__.py)."""
    top = None
    while os.path.exists(os.path.join(folder, "__init__.py")):
        top, parent = folder, os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return top


def _facts_of(file: str) -> Optional[FileFacts]:
    try:
        info = os.stat(file)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode) or info.st_size > LIMIT:
        return None
    key = (file, info.st_size, info.st_mtime_ns)
    if key not in _parsed:
        _parsed[key] = _parse(file)
    return _parsed[key]


def _parse(file: str) -> Optional[FileFacts]:
    try:
        with open(file, "rb") as fh:
            data = fh.read(LIMIT + 1)
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        source = data.decode(encoding)
        tree = ast.parse(source, file)
        facts = FileFacts(tree, source, (), hot_lines=[])  # defs are walked when a summary asks
    except (OSError, SyntaxError, ValueError, UnicodeError, LookupError, RecursionError, MemoryError):
        return None
    facts.path = file
    for b in (b for bs in facts.module_scope.bindings.values() for b in bs):
        if b.kind == Bind.OTHER and isinstance(b.node, DEFS):
            _homes[id(b.node)] = facts
    return facts
