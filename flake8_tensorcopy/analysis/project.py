"""The file's neighbours: a function imported from another module of the same package (or, for a script,
from a module beside it) is summarised from that module's source, read from disk when a rule first asks.

`train_x, calib_x = split(X, Y)` with `from .utils import split`: what `split` returns is known from
`utils.py` as if it were written in this file; so is the value of a module-level name imported from it
(`from .maths import ROOTS`, bound once there by `ROOTS = torch.tensor(...)`), and a class's base class
(`from ..base import BaseModel`). Only plain defs, classes and plain assignments are followed (not names
bound twice or re-bound at run time); a module that cannot be read or parsed answers nothing. Each module
is parsed once per version of it (path, size and modification time) while the bounded cache of
analysis/package_index.py keeps it; the modules that may call a def are looked up in its word index.

Each module's facts record what was read on its behalf (READS: the modules parsed and the paths probed
for an import or a package's __init__.py; MENTIONS: the word lookups): a neighbour's answers are memoised
on its facts and shared by later files, so what a file's findings depend on is the closure of those
records from its own facts, which `recording()` collects (the cache of `check` keys on it).
"""
from __future__ import annotations

import ast
import contextlib
import functools
import io
import os
import tokenize
from typing import Iterator, Optional

from . import package_index as index
from .facts import Bind, Binding, FileFacts
from .reads import MENTIONS, READS, recorders

MAX_HOPS = 3  # re-exports followed: `from .ops import f` in a package's __init__.py
INSTALLED = ("site-packages", "dist-packages")  # where installed libraries live, beside each other
NAMESPACE_UP = 3  # folders above a module of a folder without __init__.py where its imports may be rooted
DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
STDIN_NAMES = ("-", "stdin", "<stdin>")  # source with no place on disk: nothing beside it to read
HOME = "_tensorcopy_home"  # the attribute of a def found in a neighbour that holds that neighbour's facts
NEIGHBOURS = "neighbours"  # the memo entry of a file's facts that keeps the neighbours it read alive
_open: dict[str, FileFacts] = {}  # absolute path -> the facts of the text under analysis, which is that module


def _record(facts: FileFacts, path: str, found: Optional[FileFacts] = None) -> None:
    facts.memo.setdefault(READS, {})[path] = found


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
        for reads in recorders:
            reads.add(facts)


def imported_def(facts: FileFacts, node: ast.ImportFrom, name: str) -> Optional[ast.AST]:
    """The plain def or class that `name`, bound by `from ... import` `node` in the file of `facts`, stands for."""
    found = imported_binding(facts, node, name, None)
    plain = found and found[1].kind == Bind.OTHER and isinstance(found[1].node, DEFS + (ast.ClassDef,))
    return found[1].node if plain else None


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


def at_hand(facts: FileFacts, base: ast.AST) -> bool:
    """Whether the class a base names (`class Fit(Estimator)`) is read without parsing another module: a
    name the file does not bind by `from ... import`, or one imported from the text under analysis."""
    found = facts.module_scope.bindings.get(base.id, ()) if isinstance(base, ast.Name) else ()
    node = found[0].node if len(found) == 1 and found[0].kind == Bind.IMPORT else None
    if not isinstance(node, ast.ImportFrom) or facts.path in (None, *STDIN_NAMES):
        return True
    file = _module_file(os.path.dirname(os.path.abspath(facts.path)), node.module, node.level, facts)
    return file is not None and os.path.abspath(file) in _open


def imports_neighbours(facts: FileFacts) -> bool:
    """The module's code imports a name from a module of its package (or, for a script, from a module
    beside it): `from .meters import Meter`, `from pkg.meters import Meter`."""
    key = "imports-neighbours"
    if key not in facts.memo:
        facts.memo[key] = False
        if facts.path not in (None, *STDIN_NAMES):
            here = os.path.dirname(os.path.abspath(facts.path))
            facts.memo[key] = any(
                isinstance(b.node, ast.ImportFrom) and _module_file(here, b.node.module, b.node.level, facts)
                for bs in facts.module_scope.bindings.values() for b in bs if b.kind == Bind.IMPORT)
    return facts.memo[key]


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


def mentioning(facts: FileFacts, word: str, also: tuple = ()) -> Iterator[FileFacts]:
    """The facts of the other modules of the file's package (for a script, the scripts beside it) whose
    source holds the word `word` (and, with `also`, one of those words too): where callers of a def or class
    of the file may be. Looked up in the package's word index; each module is parsed only when the caller
    goes on to it."""
    if facts.path in (None, *STDIN_NAMES) or not word.isidentifier():
        return
    path = os.path.abspath(facts.path)
    here = os.path.dirname(path)
    root = _package_top(here, facts) or here
    above = os.path.dirname(root)
    _record(facts, os.path.join(above, "__init__.py"))
    roots = [root] + ([above] if above != root and not os.path.exists(os.path.join(above, "__init__.py")) else [])
    names = None
    for top in roots:  # the package (or the folder of scripts), and the scripts in the folder above it
        package = index.package(top)
        found = list(package.mentioning(word))
        if top == root:  # the names are read in the package (its __init__.py files)
            names = _import_names(path, set(found), root, package, facts)
        files = tuple(f for f in found if (names is None or any(package.mentions(f, n) for n in names))
                      and (not also or any(package.mentions(f, w) for w in also)))
        facts.memo.setdefault(MENTIONS, {})[(top, word)] = (package.stamp, files)
        for file in files:
            other = _facts_of(file, facts) if file != path else None
            if other is not None:
                yield other


def _import_names(path: str, mention: set, root: str, package, facts: FileFacts) -> Optional[set]:
    """The words a module must hold to import a name from the module at `path`: the module's own name
    (`from .meters import Meter`, `import pkg.meters`), and the name of each package above it whose
    __init__.py re-exports it (is among the modules that `mention` the name, and holds the name of the
    module below); None when the module's name is no identifier (every module may then import it)."""
    init = path.endswith(os.sep + "__init__.py")
    name = os.path.basename(os.path.dirname(path) if init else path[:-3])
    folder = os.path.dirname(os.path.dirname(path) if init else path)
    if not name.isidentifier() or not path.endswith(".py"):
        return None
    names = {name}
    while folder.startswith(root) and folder != os.path.dirname(folder):
        above = os.path.join(folder, "__init__.py")
        _record(facts, above)
        if above not in mention or not package.mentions(above, name):
            break
        name = os.path.basename(folder)
        names.add(name)
        folder = os.path.dirname(folder)
    return names


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
        if any(_module_file(here, m, level, other) == path for m, level in modules if m or level):
            return True
    return False


def home(fn: ast.AST) -> Optional[FileFacts]:
    """The facts of the other module `fn` was found in; None for a def of the file itself."""
    return getattr(fn, HOME, None)


def analysed_home(node: ast.AST) -> Optional[FileFacts]:
    """The facts of the text under analysis that holds `node` (a def or class at its top, or a method of
    such a class), reached from a neighbour that imports it; None otherwise."""
    for facts in _open.values():
        if id(node) in _top_ids(facts):
            return facts
    return None


def _top_ids(facts: FileFacts) -> frozenset:
    key = "top-ids"
    if key not in facts.memo:
        facts.memo[key] = frozenset(id(node) for node in _top_nodes(facts))
    return facts.memo[key]


def _top_nodes(facts: FileFacts) -> Iterator[ast.AST]:
    """The defs and classes bound once or more at the module's top, and the methods of those classes."""
    for b in (b for bs in facts.module_scope.bindings.values() for b in bs if b.kind == Bind.OTHER):
        if isinstance(b.node, DEFS + (ast.ClassDef,)):
            yield b.node
        if isinstance(b.node, ast.ClassDef):
            yield from (d for d in b.node.body if isinstance(d, DEFS))


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
    file = _module_file(os.path.dirname(os.path.abspath(facts.path)), module, level, facts)
    return _facts_of(file, facts) if file else None


def _module_file(here: str, module: Optional[str], level: int, asking: FileFacts) -> Optional[str]:
    """Where that module's source is, for a file in the folder `here`; the paths probed are recorded."""
    found, probed = _find_module(here, module, level)
    for path in probed:
        _record(asking, path)
    return found


@functools.lru_cache(maxsize=4096)
def _find_module(here: str, module: Optional[str], level: int) -> tuple[Optional[str], tuple[str, ...]]:
    """(where that module's source is, every path looked at to find it), asked once per folder and module
    (`torch.zeros(...)` asks about `torch` at every call)."""
    probed = []
    parts = module.split(".") if module else []
    if level:
        base = here
        for _ in range(level - 1):
            base = os.path.dirname(base)
        candidates = [base]
    else:
        top, probed = _top(here)
        probed = list(probed)
        candidates = [os.path.dirname(top)] if top and os.path.basename(top) == parts[0] else []
        if not os.path.exists(os.path.join(here, "__init__.py")):
            candidates.append(here)  # a script imports the modules beside it
            candidates += _namespace_bases(here, parts[0])  # `tools.meters` from tools/, a folder run from above
        candidates += _root_bases(top or here, parts[0], probed)  # `common.meter` from jobs/, both at the root
    for base in candidates:
        target = os.path.join(base, *parts)
        for file in ([target + ".py"] if parts else []) + [os.path.join(target, "__init__.py")]:
            probed.append(file)
            if os.path.isfile(file):
                return file, tuple(probed)
    return None, tuple(probed)


def _namespace_bases(here: str, first: str) -> list[str]:
    """The folders above which `first` names a folder holding `here`, that folder no package: where a module
    of a folder without __init__.py, run from the repository's root, imports `first.x` from (NAMESPACE_UP
    folders up at most)."""
    found, folder = [], here
    for _ in range(NAMESPACE_UP):
        if os.path.basename(folder) == first:
            found.append(os.path.dirname(folder))
        if os.path.dirname(folder) == folder:
            break
        folder = os.path.dirname(folder)
    return found


def _root_bases(folder: str, first: str, probed: list) -> list[str]:
    """The folders above `folder` (the outermost package holding the importing module, or a script's own
    folder), NAMESPACE_UP at most, that hold a package or module `first`: a repository run from its root
    imports `from common.meter import Meter` in jobs/run.py, or `from models.net import Net` in
    scripts/train.py, from there. Not from an environment's site-packages, whose packages are installed
    libraries, not the code's own. The paths looked at are added to `probed`."""
    found, base = [], os.path.dirname(folder)
    for _ in range(NAMESPACE_UP):
        if os.path.basename(base) in INSTALLED:
            break
        probed += [os.path.join(base, first), os.path.join(base, first + ".py")]
        if os.path.isdir(probed[-2]) or os.path.isfile(probed[-1]):
            found.append(base)
            break
        if os.path.dirname(base) == base:
            break
        base = os.path.dirname(base)
    return found


def _package_top(folder: str, asking: FileFacts) -> Optional[str]:
    """The outermost package folder holding `folder` (each folder on the way has an __init__.py)."""
    top, probed = _top(folder)
    for path in probed:
        _record(asking, path)
    return top


def _top(folder: str) -> tuple[Optional[str], tuple[str, ...]]:
    """(the outermost package folder holding `folder`, the __init__.py paths looked at to find it)."""
    top, probed = None, []
    while True:
        probed.append(os.path.join(folder, "__init__.py"))
        if not os.path.exists(probed[-1]):
            break
        top, parent = folder, os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return top, tuple(probed)


def _facts_of(file: str, asking: FileFacts) -> Optional[FileFacts]:
    """The facts of the module at `file`, parsed once per version of it (the text under analysis when it is
    that module); `asking` keeps them alive while it lives (its answers are memoised by the ids of their nodes)."""
    if _open:
        found = _open.get(os.path.abspath(file))
        if found is not None:
            _record(asking, file, found)
            return found
    key = index.version(file)
    found = index.parsed.get(key, lambda: _parse(file)) if key is not None else None
    _record(asking, file, found if found is not asking else None)
    if found is not None and found is not asking:
        asking.memo.setdefault(NEIGHBOURS, {})[id(found)] = found
    return found


def _parse(file: str) -> Optional[FileFacts]:
    data = index.read(file)
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
    for node in _top_nodes(facts):  # defs, classes and their methods (`meter.update`) know their module
        setattr(node, HOME, facts)
    return facts
