"""`[tool.flake8-tensorcopy]` in pyproject.toml: found by walking up, validated, shared by every adapter.

    [tool.flake8-tensorcopy]
    select = ["TEN"]                      # replaces the default rule set
    extend-select = ["TEN9"]              # adds to it (opt-in rules)
    ignore = ["TEN203"]                   # removes (longest matching prefix wins against select)
    per-file-ignores = { "tests/*" = ["TEN2"] }
    exclude = ["legacy/"]                 # replaces the default excludes (.git, venvs, __pycache__, ...)
    extend-exclude = ["notebooks/old/"]   # adds to them
    tensor-functions = ["load_batch", "mylib.ops.make_tensor"]   # extra tensor-returning functions
"""
from __future__ import annotations

import errno
import os
import re
import sys
from dataclasses import dataclass, field
from typing import Iterable, Optional

from ..text import shown
from ..rules import RULES
from ..sources.fileio import read_regular

SECTION = "flake8-tensorcopy"
CODE_PATTERN = re.compile(r"^TEN[0-9]{0,3}$")
LIST_KEYS = ("select", "ignore", "extend-select", "exclude", "extend-exclude", "tensor-functions")
CODE_KEYS = ("select", "ignore", "extend-select")
KEYS = LIST_KEYS + ("per-file-ignores",)
SIZE_LIMIT = 1 << 20  # bytes: a pyproject.toml larger than this is refused, not read without end


class ConfigError(Exception):
    """A configuration a user must correct; the message is one line and names the key."""


@dataclass(frozen=True)
class Config:
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (gitignore-style pattern, codes)
    exclude: Optional[tuple[str, ...]] = None  # None: the default excludes
    extend_exclude: tuple[str, ...] = ()
    tensor_functions: tuple[str, ...] = ()
    root: str = field(default_factory=os.getcwd)  # patterns are relative to this directory
    path: Optional[str] = None  # the pyproject.toml it came from


def find_pyproject(start_dir: str) -> Optional[str]:
    """The nearest pyproject.toml at or above `start_dir` that has a [tool.flake8-tensorcopy] table."""
    directory = os.path.abspath(start_dir)
    while True:
        candidate = os.path.join(directory, "pyproject.toml")
        if os.path.isfile(candidate) and _has_section(candidate):
            return candidate
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def load_config(start_dir: str = ".") -> Config:
    """The configuration that applies to files under `start_dir`; defaults when there is none.
    Raises ConfigError for unknown keys, wrong types and invalid rule codes."""
    path = find_pyproject(start_dir)
    if path is None:
        return Config(root=os.path.abspath(start_dir))
    table = _read(path)[SECTION]
    return config_from_table(table, root=os.path.dirname(path), path=path)


def load_config_file(path: str) -> Config:
    """The configuration in one given pyproject.toml (defaults if it has no [tool.flake8-tensorcopy])."""
    return config_from_table(_read(path).get(SECTION, {}), root=os.path.dirname(os.path.abspath(path)), path=path)


def config_from_table(table: dict, root: str, path: Optional[str] = None) -> Config:
    where = f"{shown(path)}: " if path else ""
    if not isinstance(table, dict):
        raise ConfigError(f"{where}[tool.{SECTION}] must be a table")
    for key in table:
        if key not in KEYS:
            hint = f" (did you mean {key.replace('_', '-')!r}?)" if key.replace("_", "-") in KEYS else ""
            raise ConfigError(f"{where}unknown key {key!r} in [tool.{SECTION}]{hint}; known keys: "
                              f"{', '.join(KEYS)}")
    values = {}
    for key in LIST_KEYS:
        if key in table:
            values[key] = _string_list(table[key], key, where)
            if key in CODE_KEYS:
                values[key] = validate_codes(values[key], key, where)
    per_file = table.get("per-file-ignores", {})
    if not isinstance(per_file, dict):
        raise ConfigError(f"{where}'per-file-ignores' must be a table of pattern = [codes]")
    pfi = tuple((pattern, validate_codes(_string_list(codes, f"per-file-ignores.{pattern}", where),
                                         f"per-file-ignores.{pattern}", where))
                for pattern, codes in per_file.items())
    return Config(
        select=values.get("select", ()),
        ignore=values.get("ignore", ()),
        extend_select=values.get("extend-select", ()),
        per_file_ignores=pfi,
        exclude=values.get("exclude"),
        extend_exclude=values.get("extend-exclude", ()),
        tensor_functions=values.get("tensor-functions", ()),
        root=root,
        path=path,
    )


def validate_codes(codes: Iterable[str], key: str, where: str = "") -> tuple[str, ...]:
    """Upper-cased codes or prefixes; each must name at least one rule (`TEN`, `TEN1`, `TEN101`)."""
    out = []
    for code in codes:
        norm = code.strip().upper()
        if not CODE_PATTERN.match(norm) or not any(r.code.startswith(norm) for r in RULES):
            raise ConfigError(f"{where}invalid rule code {code!r} in {key!r}: expected TEN or a prefix of a "
                              f"rule code such as TEN1 or TEN101 (`flake8-tensorcopy rules` lists them)")
        out.append(norm)
    return tuple(out)


def _string_list(value, key: str, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}{key!r} must be a list of strings, got {value!r}")
    return tuple(value)


_PARSED: dict[tuple, object] = {}  # (path, inode, size, mtime) -> its [tool] table, or the ConfigError it gave


def _read(path: str) -> dict:
    """The [tool] table of a pyproject.toml, parsed once per version of the file."""
    try:
        st = os.stat(path)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    key = (os.path.abspath(path), st.st_ino, st.st_size, st.st_mtime_ns)
    if key not in _PARSED:
        try:
            _PARSED[key] = _parse(path)
        except ConfigError as exc:
            _PARSED[key] = exc
    found = _PARSED[key]
    if isinstance(found, ConfigError):
        raise ConfigError(str(found))
    return found


def _parse(path: str) -> dict:
    """The [tool] table of one file. Every way it can fail is a ConfigError: not a regular file (a FIFO
    would block, /dev/zero never end), too large, not UTF-8, not TOML, or TOML that tomllib cannot
    hold (nesting past the recursion limit, an integer of more digits than Python converts)."""
    if sys.version_info >= (3, 11):  # imported only for a project that has a pyproject.toml
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    where = f"{shown(path)}: cannot read"
    try:
        data = _contents(path)
        parsed = tomllib.loads(data.decode("utf-8"))
    except OSError as exc:
        raise ConfigError(f"{where}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:  # TOML is UTF-8
        raise ConfigError(f"{where}: not UTF-8 ({exc.reason} at byte {exc.start})") from None
    except RecursionError:
        raise ConfigError(f"{where}: too deeply nested") from None
    except MemoryError:
        raise ConfigError(f"{where}: too large to parse") from None
    except ValueError as exc:  # TOMLDecodeError, and the integer digit limit
        raise ConfigError(f"{where}: {exc}".splitlines()[0]) from None
    return parsed.get("tool", {}) if isinstance(parsed.get("tool"), dict) else {}


def _contents(path: str) -> bytes:
    """A configuration file's bytes; OSError when it is not a regular file or larger than SIZE_LIMIT."""
    data = read_regular(path, SIZE_LIMIT + 1)
    if len(data) > SIZE_LIMIT:
        raise OSError(errno.EFBIG, f"larger than {SIZE_LIMIT // (1 << 20)} MiB")
    return data


def _has_section(path: str) -> bool:
    try:
        return SECTION in _read(path)
    except ConfigError:
        return _mentions_section(path)  # a broken file is ours to report only if it names our table


def _mentions_section(path: str) -> bool:
    try:
        return SECTION.encode() in _contents(path)
    except OSError:
        return False
