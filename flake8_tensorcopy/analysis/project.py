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
import contextlib
import functools
import io
import os
import re
import stat
import tokenize
from typing import Optional

from .facts import Bind, Binding, FileFacts

LIMIT = 1 << 20  # a module larger than this (generated code, vendored data) is not read
MAX_MODULES = 500  # a package with more modules is not searched for callers
MAX_HOPS = 3  # re-exports followed: `from .ops import f` in a package's __init__.py
DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
STDIN_NAMES = ("-", "stdin", "<stdin>")  # source with no place on disk: nothing beside it to read
_parsed: dict[tuple, Optional[FileFacts]] = {}  # (path, size, mtime) -> its facts
_listed: dict[str, tuple] = {}  # package root -> ((folder, mtime) ..., its modules)
_read: dict[tuple, Optional[bytes]] = {}  # (path, size, mtime) -> the module's bytes
_homes: dict[int, FileFacts] = {}  # id of a def found in a neighbour -> that neighbour's facts
_open: dict[str, FileFacts] = {}  # absolute path -> the facts of the text under analysis, which is that module


@contextlib.contextmanager
def analysing(facts: FileFacts):
    """While `facts` is analysed, its text is the module at its path for every neighbour that imports it: an
    editor's unsaved buffer (sent over stdin) is one source of truth with itself, never matched against the
    saved file of the same name, whose lines differ."""
    path = None if facts.path in (None, *STDIN_NAMES) else os.path.abspath(facts.path)
    if path is not None:
        _open[path] = facts
    try:
        yield
    finally:
        if path is not None and _open.get(path) is facts:
            del _open[path]


def imported_def(facts: FileFacts, node: ast.ImportFrom, name: str) -> Optional[ast.AST]:
    """The plain def that `name`, bound by `from ... import` `node` in the file of `facts`, stands for."""
    found = imported_binding(facts, node, name, None)
    return found[1].node if found and found[1].kind == Bind.OTHER and isinstance(found[1].node, DEFS) else None


def imported_value(facts: FileFacts, node: ast.ImportFrom, name: str) -> Optional[tuple[FileFacts, Binding]]:
    """The module-level `NAME = value` that `name`, bound by `from ... import` `node`, stands for, with the facts
    of its home module: NAME is bound there once, by that plain assignment, and no def declares it global."""
    found = imported_binding(facts, node, name, None)
    if found is None:
        return None
    home, b = found
    plain = (isinstance(b.node, ast.Assign) and len(b.node.targets) == 1 and isinstance(b.node.targets[0], ast.Name)
             or isinstance(b.node, ast.AnnAssign) and b.node.value is not None)
    return found if plain and b.name not in _globals(home) else None


def imported_class(facts: FileFacts, node: ast.ImportFrom, name: str) -> Optional[tuple[ast.ClassDef, FileFacts]]:
    """The class that `name`, bound by `from ... import` `node`, stands for, with the facts of its module."""
    found = imported_binding(facts, node, name, None)
    if found is None or found[1].kind != Bind.OTHER or not isinstance(found[1].node, ast.ClassDef):
        return None
    return found[1].node, found[0]


def module_def(facts: FileFacts, node: ast.AST, name: str, attr: str) -> Optional[ast.AST]:
    """The plain def `attr` of the module that `name`, bound by `node`, stands for: `utils.split(...)`
    after `import utils`, `import pkg.utils as utils` or `from . import utils`."""
    return _def_in(_imported_module(facts, node, name), attr)


def imported_binding(facts: FileFacts, node: ast.AST, name: str, attr: Optional[str]):
    """(home facts, binding) of what an import stands for: with `attr` None, the module-level binding that
    `name` of `from m import name` is in m; else the binding of `attr` in the module `name` stands for
    (`import m`, `from pkg import m`). None when it is not bound once there."""
    if attr is None:
        alias = _alias(node, name) if isinstance(node, ast.ImportFrom) else None
        return _bound_in(_module_facts(facts, node.module, node.level), alias.name) if alias else None
    return _bound_in(_imported_module(facts, node, name), attr)


def _imported_module(facts: FileFacts, node: ast.AST, name: str) -> Optional[FileFacts]:
    """The facts of the module that `name`, bound by import `node`, stands for."""
    if isinstance(node, ast.Import):
        alias = next((a for a in node.names if (a.asname or a.name) == name), None)
        module, level = (alias.name if alias else None), 0
    else:
        alias = _alias(node, name)
        module, level = (".".join(filter(None, [node.module, alias.name])) if alias else None), node.level
    return _module_facts(facts, module, level) if module else None


def mentioning(facts: FileFacts, word: str) -> list[FileFacts]:
    """The facts of the other modules of the file's package (for a script, the scripts beside it) whose
    source holds the word `word`: where callers of a def or class of the file may be. Nothing for a
    package of more than MAX_MODULES modules (the search would cost more than it finds)."""
    if facts.path in (None, *STDIN_NAMES) or not word.isidentifier():
        return []
    path = os.path.abspath(facts.path)
    here = os.path.dirname(path)
    literal = re.escape(word.encode())  # first, so the regex engine jumps between its occurrences
    pattern = re.compile(literal + rb"(?<!\w" + literal + rb")(?!\w)")
    found = []
    for file in _modules_of(_package_top(here) or here):
        data = _bytes_of(file) if file != path else None
        if data is not None and pattern.search(data):
            other = _facts_of(file)
            if other is not None:
                found.append(other)
    return found


def imports(other: FileFacts, path: str) -> bool:
    """Whether the module of `other` imports the module at `path` (`from pkg.callbacks import X`,
    `from pkg import callbacks`, `import pkg.callbacks`), at its top or in a def."""
    here = os.path.dirname(other.path)
    for node in ast.walk(other.tree):
        if isinstance(node, ast.ImportFrom):
            modules = [(node.module, node.level)] + [
                (".".join(filter(None, [node.module, a.name])), node.level) for a in node.names]
        elif isinstance(node, ast.Import):
            modules = [(a.name, 0) for a in node.names]
        else:
            continue
        if any(_module_file(here, m, level) == path for m, level in modules if m or level):
            return True
    return False


def _modules_of(root: str) -> tuple[str, ...]:
    """The modules of the package at `root` (its subpackages too), or the scripts in the folder `root`
    when it is no package; () past MAX_MODULES. Listed again when a folder of it changed."""
    known = _listed.get(root)
    if known is not None and all(_mtime(d) == m for d, m in known[0]):
        return known[1]
    package = os.path.exists(os.path.join(root, "__init__.py"))
    folders, files = [], []
    for folder, dirs, names in os.walk(root):
        folders.append((folder, _mtime(folder)))
        dirs[:] = sorted(d for d in dirs if package and os.path.exists(os.path.join(folder, d, "__init__.py")))
        files += [os.path.join(folder, n) for n in sorted(names) if n.endswith(".py")]
        if len(files) > MAX_MODULES:
            files = []
            break
    _listed[root] = (tuple(folders), tuple(files))
    return _listed[root][1]


def _mtime(folder: str) -> Optional[int]:
    try:
        return os.stat(folder).st_mtime_ns
    except OSError:
        return None


def _bytes_of(file: str) -> Optional[bytes]:
    """The bytes of a module, read once per version of it (the search for callers and the parse share
    them); None when it cannot be read or is too large."""
    key = _version(file)
    if key is None:
        return None
    if key not in _read:
        try:
            with open(file, "rb") as fh:
                data = fh.read(LIMIT + 1)
        except OSError:
            data = None
        _read[key] = data if data is not None and len(data) <= LIMIT else None
    return _read[key]


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


def _version(file: str) -> Optional[tuple]:
    """(path, size, mtime) of a regular file of at most LIMIT bytes: the key its contents are cached by."""
    try:
        info = os.stat(file)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode) or info.st_size > LIMIT:
        return None
    return file, info.st_size, info.st_mtime_ns


def _facts_of(file: str) -> Optional[FileFacts]:
    if file in _open:
        return _open[file]
    key = _version(file)
    if key is None:
        return None
    if key not in _parsed:
        _parsed[key] = _parse(file)
    return _parsed[key]


def _parse(file: str) -> Optional[FileFacts]:
    data = _bytes_of(file)
    if data is None:
        return None
    try:
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
