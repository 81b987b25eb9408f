"""The fixer as a LibCST codemod, for projects that already drive LibCST codemods:

    python -m libcst.tool codemod -x flake8_tensorcopy.codemod.TensorCopyCodemod --no-format src/

(`--no-format`: the fixer touches only what it fixes; the tool would otherwise run black.) It applies
exactly what `flake8-tensorcopy fix` applies; `fix` adds --diff, --check and the data-safety checks.
"""
from __future__ import annotations

import argparse

import libcst as cst
from libcst.codemod import CodemodCommand, CodemodContext, SkipFile

from .engine import AnalysisError, select_rules
from .fixer import FixError, fix_source


class TensorCopyCodemod(CodemodCommand):
    DESCRIPTION = "Apply flake8-tensorcopy's fixes (safe ones; unsafe ones with --unsafe-fixes)."

    def __init__(self, context: CodemodContext, unsafe_fixes: bool = False, select: str = "",
                 ignore: str = "", extend_select: str = "") -> None:
        super().__init__(context)
        self.unsafe = unsafe_fixes
        self.rules = select_rules(_codes(select), _codes(ignore), _codes(extend_select))

    @staticmethod
    def add_args(arg_parser: argparse.ArgumentParser) -> None:
        arg_parser.add_argument("--unsafe-fixes", action="store_true", help="also apply unsafe fixes")
        for opt in ("--select", "--ignore", "--extend-select"):
            arg_parser.add_argument(opt, default="", help="comma-separated TEN codes, as in flake8")

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        try:
            outcome = fix_source(tree.code, self.context.filename or "<codemod>", self.rules, self.unsafe)
        except (AnalysisError, FixError) as exc:
            raise SkipFile(str(exc)) from None
        return cst.parse_module(outcome.fixed) if outcome.changed else tree


def _codes(text: str) -> list[str]:
    return [c.strip().upper() for c in (text or "").split(",") if c.strip()]
