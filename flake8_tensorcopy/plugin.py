"""The flake8 adapter: flake8 hands over the tree and the lines; this yields the engine's findings.

It never raises: flake8 aborts the whole run, for every file, when a plugin does.
"""
from __future__ import annotations

import ast
from typing import Iterator

from . import __version__
from .engine import AnalysisError, analyse
from .rules import RULES

DIAGNOSTIC = "TEN000"


class Plugin:
    name = "flake8-tensorcopy"
    version = __version__

    def __init__(self, tree: ast.AST, lines: list[str], filename: str = "stdin"):
        self.tree = tree
        self.lines = lines
        self.filename = filename

    @classmethod
    def add_options(cls, parser) -> None:
        parser.extend_default_ignore([r.code for r in RULES if not r.default_on])

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        try:
            result = analyse("".join(self.lines), self.filename, RULES,
                             tree=self.tree if isinstance(self.tree, ast.Module) else None)
        except AnalysisError as exc:
            yield 1, 0, f"{DIAGNOSTIC} flake8-tensorcopy could not analyse this file: {exc}", type(self)
            return
        except Exception as exc:  # never abort flake8's run
            message = f"{type(exc).__name__}: {exc}".split("\n")[0]
            yield 1, 0, f"{DIAGNOSTIC} flake8-tensorcopy internal error: {message}", type(self)
            return
        for f in result.findings:
            yield f.line, f.col, f.text, type(self)
        for error in result.errors:
            yield 1, 0, f"{DIAGNOSTIC} flake8-tensorcopy internal error: {error}", type(self)
