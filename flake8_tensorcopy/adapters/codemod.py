"""The fixer as a LibCST codemod, for projects that already drive LibCST codemods:

    python -m libcst.tool codemod -x flake8_tensorcopy.codemod.TensorCopyCodemod --no-format src/

(`--no-format`: the fixer touches only what it fixes; the tool would otherwise run black.) It applies
exactly what `flake8-tensorcopy fix` applies, with the same `[tool.flake8-tensorcopy]` configuration (the
nearest above each file; its excludes skip a file) under the same options; `fix` adds --diff, --check
and the data-safety checks.
"""
from __future__ import annotations

import argparse
from typing import Optional

import libcst as cst
from libcst.codemod import CodemodCommand, CodemodContext, SkipFile

from ..config.pyproject import ConfigError
from ..config.discovery import excluded_named
from ..engine.core import AnalysisError
from ..fix.fixer import FixError, fix_source
from ..rules import BY_CODE
from ..config.settings import Options, PerFile


class TensorCopyCodemod(CodemodCommand):
    DESCRIPTION = "Apply flake8-tensorcopy's fixes (safe ones; unsafe ones with --unsafe-fixes)."

    def __init__(self, context: CodemodContext, unsafe_fixes: bool = False, select: str = "",
                 ignore: str = "", extend_select: str = "", tensor_functions: str = "") -> None:
        super().__init__(context)
        self.unsafe = unsafe_fixes
        self.options = {"select": _names(select) or None, "ignore": _names(ignore) or None,
                        "extend_select": _names(extend_select), "tensor_functions": _names(tensor_functions)}
        self.per_file: Optional[PerFile] = None  # each file's nearest table, as `fix` finds it

    @staticmethod
    def add_args(arg_parser: argparse.ArgumentParser) -> None:
        arg_parser.add_argument("--unsafe-fixes", action="store_true", help="also apply unsafe fixes")
        for opt in ("--select", "--ignore", "--extend-select"):
            arg_parser.add_argument(opt, default="", help="comma-separated TEN codes (over pyproject.toml's)")
        arg_parser.add_argument("--tensor-functions", default="", help="extra names of functions that return tensors")

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        filename = self.context.filename or "<codemod>"
        try:
            if self.per_file is None:
                self.per_file = PerFile(Options(paths=[filename], **self.options))
            chosen = self.per_file(filename)
        except ConfigError as exc:
            raise SkipFile(f"flake8-tensorcopy: {exc}") from None
        if self.context.filename and excluded_named(filename, chosen.excludes):
            raise SkipFile("excluded by the [tool.flake8-tensorcopy] excludes")
        rules = [BY_CODE[c] for c in chosen.codes_for(filename)]
        try:
            outcome = fix_source(tree.code, filename, rules, self.unsafe, tensor_functions=chosen.tensor_functions)
        except (AnalysisError, FixError) as exc:
            raise SkipFile(str(exc)) from None
        return cst.parse_module(outcome.fixed) if outcome.changed else tree


def _names(text: str) -> list[str]:
    return [c.strip() for c in (text or "").split(",") if c.strip()]
