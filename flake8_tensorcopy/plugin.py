"""The flake8 adapter: flake8 hands over the tree and the lines; this yields the engine's findings.

It never raises: flake8 aborts the whole run, for every file, when a plugin does.
Options (in `[flake8]` or on the command line) carry the `--tensorcopy-` prefix:
`--tensorcopy-tensor-functions` = extra tensor-returning function names, added to the
`tensor-functions` of `[tool.flake8-tensorcopy]` in pyproject.toml.
"""
from __future__ import annotations

import ast
import os
from typing import Iterator

from . import __version__
from .engine import AnalysisError, analyse
from .rules import RULES

DIAGNOSTIC = "TEN000"


class Plugin:
    name = "flake8-tensorcopy"
    version = __version__
    tensor_functions: tuple[str, ...] = ()
    rules: tuple = RULES  # the rules whose findings flake8 reports (parse_options narrows them)

    def __init__(self, tree: ast.AST, lines: list[str], filename: str = "stdin"):
        self.tree = tree
        self.lines = lines
        self.filename = filename

    @classmethod
    def add_options(cls, parser) -> None:
        parser.extend_default_ignore([r.code for r in RULES if not r.default_on])
        parser.add_option("--tensorcopy-tensor-functions", default="", parse_from_config=True,
                          comma_separated_list=True, metavar="NAMES",
                          help="flake8-tensorcopy: extra names of functions that return tensors "
                               "(`load_batch`, `mylib.ops.make`)")

    @classmethod
    def parse_options(cls, options) -> None:
        names = list(getattr(options, "tensorcopy_tensor_functions", None) or ())
        try:
            from .config import load_config

            names += load_config(os.getcwd()).tensor_functions
        except Exception:  # a broken pyproject.toml is `check`'s to report; flake8 must run
            pass
        cls.tensor_functions = tuple(dict.fromkeys(n for n in names if n))
        cls.rules = reported_rules(options)

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        try:
            result = analyse("".join(self.lines), self.filename, self.rules,
                             tree=self.tree if isinstance(self.tree, ast.Module) else None,
                             tensor_functions=self.tensor_functions)
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


def reported_rules(options) -> tuple:
    """The rules whose codes flake8's own decision selects (per-file-ignores and noqa only drop more):
    opt-in rules cost nothing until selected. When in doubt, every rule (flake8 filters)."""
    try:
        from flake8.style_guide import Decision, DecisionEngine

        decide = DecisionEngine(options).decision_for
        return tuple(r for r in RULES if decide(r.code) is Decision.Selected)
    except Exception:  # another flake8 version's internals, or options from a test double
        return RULES
