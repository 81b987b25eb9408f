"""The file's neighbours: a function imported from another module of the same package (or, for a script,
from a module beside it) is summarised from that module's source, read from disk when a rule first asks.

`train_x, calib_x = split(X, Y)` with `from .utils import split`: what `split` returns is known from
`utils.py` as if it were written in this file; so is the value of a module-level name imported from it
(`from .maths import ROOTS`, bound once there by `ROOTS = torch.tensor(...)`), and a class's base class
(`from ..base import BaseModel`). Only plain defs, classes and plain assignments are followed (not names
bound twice or re-bound at run time); a module that cannot be read or parsed answers nothing. Each module
is parsed once per process (keyed by path, size and modification time).
"""
from __future__ import annotations

import ast
import functools
import io
import os
import stat
import tokenize
from typing import Optional

from .facts import Bind, Binding, FileFacts

LIMIT = 1 << 20  # a module larger than this (generated code, vendored data) is not read
MAX_HOPS = 3  # re-exports followed: `from .ops import f` in a package's __init__.py
DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
STDIN_NAMES = ("-", "stdin", "<stdin>")  # source with no place on disk: nothing beside it to read
_parsed: dict[tuple, Optional[FileFacts]] = {}  # (path, size, mtime) -> its facts
_homes: dict[int, FileFacts] = {}  # id of a def found in a neighbour -> that neighbour's facts


def imported_def(facts: FileFacts, node: ast.ImportFrom, name: str) -> Optional[ast.AST]:
    """The plain def that `name`, bound by `from ... import` `node` in the file of `facts`, stands for."""
    alias = _alias(node, name)
    return _def_in(_module_facts(facts, node.module, node.level), alias.name) if alias else None


def imported_value(facts: FileFacts, node: ast.ImportFrom, name: str) -> Optional[tuple[FileFacts, Binding]]:
    """The module-level `NAME = value` that `name`, bound by `from ... import` `node`, stands for, with the facts
    of its home module: NAME is bound there once, by that plain assignment, and no def declares it global."""
    alias = _alias(node, name)
    found = _bound_in(_module_facts(facts, node.module, node.level), alias.name) if alias else None
    if found is None:
        return None
    home, b = found
    plain = (isinstance(b.node, ast.Assign) and len(b.node.targets) == 1 and isinstance(b.node.targets[0], ast.Name)
             or isinstance(b.node, ast.AnnAssign) and b.node.value is not None)
    return found if plain and b.name not in _globals(home) else None


def imported_class(facts: FileFacts, node: ast.ImportFrom, name: str) -> Optional[tuple[ast.ClassDef, FileFacts]]:
    """The class that `name`, bound by `from ... import` `node`, stands for, with the facts of its module."""
    alias = _alias(node, name)
    found = _bound_in(_module_facts(facts, node.module, node.level), alias.name) if alias else None
    if found is None or found[1].kind != Bind.OTHER or not isinstance(found[1].node, ast.ClassDef):
        return None
    return found[1].node, found[0]


def module_def(facts: FileFacts, node: ast.AST, name: str, attr: str) -> Optional[ast.AST]:
    """The plain def `attr` of the module that `name`, bound by `node`, stands for: `utils.split(...)`
    after `import utils`, `import pkg.utils as utils` or `from . import utils`."""
    if isinstance(node, ast.Import):
        alias = next((a for a in node.names if (a.asname or a.name) == name), None)
        module, level = (alias.name if alias else None), 0
    else:
        alias = _alias(node, name)
        module, level = (".".join(filter(None, [node.module, alias.name])) if alias else None), node.level
    return _def_in(_module_facts(facts, module, level), attr) if module else None


def home(fn: ast.AST) -> Optional[FileFacts]:
    """The facts of the other module `fn` was found in; None for a def of the file itself."""
    return _homes.get(id(fn))


def _alias(node: ast.ImportFrom, name: str) -> Optional[ast.alias]:
    alias = next((a for a in node.names if (a.asname or a.name) == name), None)
    return None if alias is None or alias.name == "*" else alias


def _def_in(home: Optional[FileFacts], name: str) -> Optional[ast.AST]:
    """The def `name` is bound to, once, at the top of `home`'s module."""
    found = _bound_in(home, name)
    return found[1].node if found and found[1].kind == Bind.OTHER and isinstance(found[1].node, DEFS) else None


def _bound_in(home: Optional[FileFacts], name: str, hops: int = 0) -> Optional[tuple[FileFacts, Binding]]:
    """The one binding of `name` at the top of `home`'s module, with the facts of the module that holds it;
    a re-export (`from .ops import f` in a package's __init__.py) is followed."""
    found = home.module_scope.bindings.get(name, ()) if home is not None and hops <= MAX_HOPS else ()
    if len(found) != 1:  # bound twice (a fallback import, a redefinition): which one runs is unknown
        return None
    b = found[0]
    if b.kind == Bind.IMPORT and isinstance(b.node, ast.ImportFrom) and _alias(b.node, name):
        return _bound_in(_module_facts(home, b.node.module, b.node.level), _alias(b.node, name).name, hops + 1)
    return home, b


def _globals(home: FileFacts) -> frozenset:
    """The names some def of the module declares `global` (and may rebind)."""
    key = ("globals",)
    if key not in home.memo:
        home.memo[key] = frozenset(n for node in ast.walk(home.tree) if isinstance(node, ast.Global)
                                   for n in node.names)
    return home.memo[key]


def _module_facts(facts: FileFacts, module: Optional[str], level: int) -> Optional[FileFacts]:
    """The facts of the module that `from <level dots><module> import ...` in the file of `facts` reads."""
    if facts.path in (None, *STDIN_NAMES):
        return None
    file = _module_file(os.path.dirname(os.path.abspath(facts.path)), module, level)
    return _facts_of(file) if file else None


@functools.lru_cache(maxsize=4096)
def _module_file(here: str, module: Optional[str], level: int) -> Optional[str]:
    """Where that module's source is, for a file in the folder `here` (asked once per folder and module:
    `torch.zeros(...)` asks about `torch` at every call)."""
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
        for file in ([target + ".py"] if parts else []) + [os.path.join(target, "__init__.py")]:
            if os.path.isfile(file):
                return file
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
        elif b.kind == Bind.OTHER and isinstance(b.node, ast.ClassDef):  # its methods (`__call__` of an instance)
            _homes.update((id(d), facts) for d in b.node.body if isinstance(d, DEFS))
    return facts
