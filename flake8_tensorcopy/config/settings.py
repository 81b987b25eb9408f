"""The one selection of every front end (`check`, `fix`, the flake8 plugin, the LibCST codemod, the
language server): the command line's options over the nearest `[tool.flake8-tensorcopy]` table of each
file (read and checked by pyproject.py).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, fields, replace
from typing import Optional, Sequence

from .pyproject import Config, find_pyproject, load_config, load_config_file, validate_codes
from .discovery import default_excludes, excluded_named
from ..engine.core import select_rules
from .gitignore import Pattern, compile_patterns, matches, option_patterns


@dataclass
class Options:
    """What the user asked for, shared by `check` and `fix`; None: the configuration's value."""

    paths: Sequence[str] = (".",)
    select: Optional[Sequence[str]] = None
    ignore: Optional[Sequence[str]] = None
    extend_select: Sequence[str] = ()
    exclude: Optional[Sequence[str]] = None
    extend_exclude: Sequence[str] = ()
    tensor_functions: Sequence[str] = ()
    stdin_filename: Optional[str] = None
    config: Optional[str] = None  # a pyproject.toml to use instead of searching
    jobs: int = 0  # 0: all cores
    format: str = "text"
    show_source: bool = False
    quiet: bool = False
    cache: bool = False  # keep findings in the cache folder (the command line's default; --no-cache)
    force_exclude: bool = False  # the excludes apply to named paths inside excluded folders too

    @classmethod
    def from_args(cls, args) -> "Options":
        """From the command line's namespace (the options both subcommands share: cli.add_common)."""
        given = {f.name: getattr(args, f.name) for f in fields(cls) if getattr(args, f.name, None) is not None}
        return cls(**given)


@dataclass(frozen=True)
class Selection:
    """What the options and the configuration choose."""

    select: Sequence[str]
    ignore: Sequence[str]
    extend: Sequence[str]
    excludes: list[Pattern]
    per_file: list[tuple[list[Pattern], tuple[str, ...]]]
    tensor_functions: tuple[str, ...]
    project: Optional[str] = None  # the folder of the pyproject.toml the configuration came from
    source: Optional[str] = None  # the pyproject.toml it came from; None: the defaults

    def codes_for(self, display: str) -> tuple[str, ...]:
        """The rule codes that apply to one file (per-file-ignores included)."""
        extra = [c for patterns, codes in self.per_file if matches(display, patterns) for c in codes]
        return tuple(r.code for r in select_rules(self.select, tuple(self.ignore) + tuple(extra), self.extend))


def selection(opts: Options) -> Selection:
    """Command-line options over the configuration; ConfigError when either is wrong."""
    config = configuration(opts.paths, opts.stdin_filename, opts.config)
    select = validate_codes(opts.select, "--select") if opts.select is not None else config.select
    ignore = validate_codes(opts.ignore, "--ignore") if opts.ignore is not None else config.ignore
    extend = config.extend_select + validate_codes(opts.extend_select, "--extend-select")
    if opts.exclude is not None:
        excludes = option_patterns(opts.exclude, os.getcwd())
    elif config.exclude is not None:
        excludes = option_patterns(config.exclude, config.root)
    else:
        excludes = default_excludes()
    excludes += option_patterns(config.extend_exclude, config.root)
    excludes += option_patterns(opts.extend_exclude, os.getcwd())
    per_file = [(compile_patterns([pattern], config.root), codes) for pattern, codes in config.per_file_ignores]
    tensor_functions = tuple(dict.fromkeys(tuple(config.tensor_functions) + tuple(opts.tensor_functions)))
    project = os.path.dirname(config.path) if config.path else None
    return Selection(select, ignore, extend, excludes, per_file, tensor_functions, project, config.path)


class PerFile:
    """Each file's selection, Ruff's way: the nearest `[tool.flake8-tensorcopy]` above the file (its
    patterns relative to that pyproject.toml) under the command-line options; with `--config`, that one
    for every file. `base` is the selection of the paths given (it finds the files). ConfigError when a
    table is wrong."""

    def __init__(self, opts: Options):
        self.opts = opts
        self.base = selection(opts)
        self._nearest: dict[str, Optional[str]] = {}  # folder -> its nearest pyproject.toml with a table
        self._chosen: dict[Optional[str], Selection] = {self.base.source: self.base}

    def __call__(self, path: str) -> Selection:
        if self.opts.config or path == "-":
            return self.base
        folder = os.path.dirname(os.path.abspath(path))
        if folder not in self._nearest:
            self._nearest[folder] = find_pyproject(folder)
        source = self._nearest[folder]
        if source not in self._chosen:
            self._chosen[source] = nearest(path, self.opts)
        return self._chosen[source]

    def excluded(self, path: str) -> bool:
        """A file found under the paths given that its own configuration excludes."""
        chosen = self(path)
        return chosen is not self.base and excluded_named(path, chosen.excludes)


def nearest(path: str, opts: Optional[Options] = None) -> Selection:
    """The selection of one file: `opts` over the nearest table above it. Nothing is kept between calls
    but the parsed tables (re-read when a file changes), so a long-lived server sees edits of them."""
    return selection(replace(opts or Options(), paths=[path]))


def configuration(paths: Sequence[str], stdin_filename: Optional[str] = None, path: Optional[str] = None) -> Config:
    """The configuration in `path`, or the one found above the folder holding all `paths`."""
    return load_config_file(path) if path else load_config(config_start(paths, stdin_filename))


def config_start(paths: Sequence[str], stdin_filename: Optional[str] = None) -> str:
    """Where the configuration search starts: the folder holding all the given paths."""
    named = [(stdin_filename or ".") if p == "-" else p for p in paths] or ["."]
    folders = [os.path.abspath(p if os.path.isdir(p) else os.path.dirname(p) or ".") for p in named]
    try:
        return os.path.commonpath(folders)
    except ValueError:
        return os.getcwd()
