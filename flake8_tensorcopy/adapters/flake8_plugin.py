"""The flake8 adapter: flake8 hands over the tree and the lines; this yields the engine's findings.

It never raises: flake8 aborts the whole run, for every file, when a plugin does.
Options (in `[flake8]` or on the command line) carry the `--tensorcopy-` prefix:
`--tensorcopy-tensor-functions` = extra tensor-returning function names, added to the
`tensor-functions` of `[tool.flake8-tensorcopy]` in pyproject.toml. That table is the nearest above each
file, as `check` finds it (config.settings.PerFile), and checked as `check` checks it; flake8 owns the
choice of codes and files, so its `select`, `ignore`, `per-file-ignores` and `exclude` keys are not used
here. A table that cannot be used is reported as `TEN000` on line 1: the one above the paths given once per
run (on the first file flake8 reports), a nested one on each file it governs.
"""
from __future__ import annotations

import ast
from typing import Iterator, Optional

from .. import __version__
from ..engine.core import AnalysisError
from ..pipeline.lint import Document, lint
from ..rules import RULES

DIAGNOSTIC = "TEN000"
NOT_A_RULE = ("TEN000 is not a rule: the flake8 plugin's one-line notice for a file it could not analyse, or for a "
              "[tool.flake8-tensorcopy] table it could not use (once per run); it never aborts flake8")


class Plugin:
    name = "flake8-tensorcopy"
    version = __version__
    tensor_functions: tuple[str, ...] = ()
    rules: tuple = RULES  # the rules whose findings flake8 reports (parse_options narrows them)
    notice: Optional[str] = None  # why [tool.flake8-tensorcopy] is not used, said once per run
    notice_file: Optional[str] = None  # the file that says it; None: the first this process checks
    per_file = None  # config.settings.PerFile: each file's nearest table; None when the paths' own is unusable

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
        from ..config.settings import Options, PerFile

        names = tuple(dict.fromkeys(n for n in getattr(options, "tensorcopy_tensor_functions", None) or () if n))
        cls.notice = cls.notice_file = cls.per_file = None
        cls.tensor_functions = names
        try:
            paths = list(getattr(options, "filenames", None) or ["."])
            cls.per_file = PerFile(Options(paths=paths, stdin_filename=getattr(options, "stdin_display_name", None),
                                           tensor_functions=names))
            cls.tensor_functions = cls.per_file.base.tensor_functions
        except Exception as exc:  # a ConfigError (or a bug of ours): said once, flake8 runs on
            cls.notice = ignored(exc)
            cls.notice_file = first_file(options)
        cls.rules = reported_rules(options)

    def functions(self) -> tuple[tuple[str, ...], Optional[str]]:
        """The tensor functions of this file's nearest table, and a notice when that table is unusable."""
        cls = type(self)
        if cls.per_file is None:
            return cls.tensor_functions, None
        try:
            return cls.per_file(self.filename).tensor_functions, None
        except Exception as exc:  # a nested table's ConfigError: this file says so, the others run on
            return cls.per_file.opts.tensor_functions, ignored(exc)

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        cls = type(self)
        if cls.notice and cls.notice_file in (None, self.filename):
            yield 1, 0, cls.notice, cls
            cls.notice = None
        functions, notice = self.functions()
        if notice:
            yield 1, 0, notice, cls
        try:
            result = lint(Document(self.filename, "".join(self.lines)), self.rules, functions,
                          tree=self.tree if isinstance(self.tree, ast.Module) else None, noqa=False)
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


def ignored(exc: Exception) -> str:
    return f"{DIAGNOSTIC} flake8-tensorcopy ignores its configuration: {exc}".split("\n")[0]


def first_file(options) -> Optional[str]:
    """The file flake8 reports first (its output is sorted by name), or None when flake8 cannot say."""
    try:
        from flake8.discover_files import expand_paths

        stdin_name = options.stdin_display_name or "stdin"
        files = expand_paths(paths=options.filenames or ["."], stdin_display_name=stdin_name,
                             filename_patterns=options.filename, exclude=[*options.exclude, *options.extend_exclude])
        return min((stdin_name if f == "-" else f for f in files), default=None)
    except Exception:  # another flake8 version's internals, or options from a test double
        return None


def reported_rules(options) -> tuple:
    """The rules whose codes flake8's own decision selects (per-file-ignores and noqa only drop more):
    opt-in rules cost nothing until selected. When in doubt, every rule (flake8 filters)."""
    try:
        from flake8.style_guide import Decision, DecisionEngine

        decide = DecisionEngine(options).decision_for
        return tuple(r for r in RULES if decide(r.code) is Decision.Selected)
    except Exception:  # another flake8 version's internals, or options from a test double
        return RULES
