"""The standalone command: `flake8-tensorcopy check|fix|explain|rules|server`."""
from __future__ import annotations

import argparse
import gc
import os
import json
import sys
from typing import Optional, Sequence

from .. import __version__
from .cache import FOLDER
from .check import run_check
from .formats import FORMATS
from ..rules import BY_CODE, RULES
from ..config.settings import Options
from ..engine import collector
from ..text import shown


FIX_DESCRIPTION = """Rewrite files with the findings' fixes, or show (--diff) / test (--check) them.
Files are found as `check` finds them and every option of `check` means the same here; - reads stdin
and writes the fixed text to stdout.

Exit codes: 0 nothing left to report; 1 findings remain, or with --diff / --check fixes would be made;
2 a usage error, a file that could not be read, decoded, parsed or written, an internal error, or an
interrupt (files already written are fully fixed, the others untouched).
"""


def comma_list(text: str) -> list[str]:
    return [c.strip() for c in text.split(",") if c.strip()]


def cmd_check(args) -> int:
    if args.show_settings:
        return show_settings(Options.from_args(args))
    status = run_check(Options.from_args(args), statistics=args.statistics, add_noqa=args.add_noqa)
    return 0 if args.exit_zero and status == 1 else status


def show_settings(opts: Options) -> int:
    """Each path's configuration source, selected codes and tensor functions, as check would use them."""
    from ..config.pyproject import ConfigError
    from ..config.settings import PerFile

    try:
        for_file = PerFile(opts)
        for path in opts.paths:
            chosen = for_file(path)
            source = shown(chosen.source) if chosen.source else "defaults (none found)"
            print(f"{shown(path)}:\n  configuration: {source}"
                  f"\n  codes: {', '.join(chosen.codes_for(path)) or '(none)'}"
                  f"\n  tensor-functions: {', '.join(chosen.tensor_functions) or '(none)'}")
    except ConfigError as exc:
        print(f"flake8-tensorcopy: error: {exc}", file=sys.stderr)
        return 2
    return 0


def cmd_fix(args) -> int:
    from .fix import cmd_fix as run_fix  # LibCST is imported only to fix: `check` starts faster

    return run_fix(args)


def cmd_explain(args) -> int:
    from ..adapters.flake8_plugin import DIAGNOSTIC, NOT_A_RULE

    rule = BY_CODE.get(args.code.upper()) or next((r for r in RULES if r.name == args.code.lower()), None)
    if args.code.upper() == DIAGNOSTIC:
        print(NOT_A_RULE)
        return 0
    if rule is None:
        print(f"unknown rule {args.code!r}; `flake8-tensorcopy rules` lists them", file=sys.stderr)
        return 2
    from ..rules.docs import rule_page

    print(rule_page(rule), end="")
    return 0


def cmd_cache(args) -> int:
    """`cache clean`: remove the cache folder `check` would use from here."""
    from . import cache
    from ..config.pyproject import ConfigError
    from ..config.settings import selection

    try:
        folder = cache.folder_for(selection(Options(config=args.config)).project)
    except ConfigError as exc:
        print(f"flake8-tensorcopy: error: {exc}", file=sys.stderr)
        return 2
    print(f"{'removed' if cache.clean(folder) else 'no cache at'} {folder}")
    return 0


def cmd_server(args) -> int:
    try:
        from ..adapters.server import serve  # pygls is an optional dependency, imported only here
    except ImportError as exc:
        if (exc.name or "").split(".")[0] not in ("pygls", "lsprotocol"):
            raise
        print(f"flake8-tensorcopy server needs pygls 2 ({exc}): pip install 'pygls>=2', or the [server] extra",
              file=sys.stderr)
        return 2
    return serve()


def cmd_rules(args) -> int:
    from ..adapters.flake8_plugin import NOT_A_RULE

    if args.format == "json":
        from ..rules.docs import DOCS_URL, fix_metadata

        print(json.dumps([{"code": r.code, "name": r.name, "summary": r.summary, "default_on": r.default_on,
                           **fix_metadata(r), "url": DOCS_URL.format(code=r.code)} for r in RULES], indent=2))
        return 0
    width = max(len(r.name) for r in RULES)
    print(f"{'code':<7} {'name':<{width}}  default  fix        safety       summary")
    for r in RULES:
        safety = ",".join(s.value for s in r.fix_safeties) or "-"
        print(f"{r.code:<7} {r.name:<{width}}  {'on' if r.default_on else 'off':<7}  {r.fix_offered.value:<9}  "
              f"{safety:<11}  {r.summary}")
    print(f"\n{NOT_A_RULE}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="flake8-tensorcopy", description=__doc__)
    parser.add_argument("--version", action="version", version=__version__)
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check", help="report findings", description="Report findings; exit 1 when "
                           "anything is reported, 0 when clean, 2 on errors.")
    add_common(check)
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even when findings are reported")
    check.add_argument("--add-noqa", action="store_true", help="add a `# noqa: CODE` comment for each finding "
                       "(adopting the linter on a large codebase: new code is checked, old findings kept for later)")
    check.add_argument("--show-settings", action="store_true", help="print each path's configuration source, "
                       "selected codes and tensor functions, and check nothing")
    check.add_argument("--statistics", action="store_true", help="print how many findings each code has")
    check.set_defaults(func=cmd_check)
    fix = sub.add_parser("fix", help="apply the fixes (safe ones; unsafe with --unsafe-fixes)",
                         description=FIX_DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common(fix)
    mode = fix.add_mutually_exclusive_group()
    mode.add_argument("--diff", action="store_true", help="print a unified diff, write nothing")
    mode.add_argument("--check", action="store_true", help="write nothing, only set the exit code")
    fix.add_argument("--unsafe-fixes", action="store_true", help="also apply fixes that change behaviour")
    fix.set_defaults(func=cmd_fix)
    explain = sub.add_parser("explain", help="print a rule's documentation")
    explain.add_argument("code", help="a rule's code (TEN201) or name (as `rules` lists them)")
    explain.set_defaults(func=cmd_explain)
    cache = sub.add_parser("cache", help="manage the cache of findings")
    cache.add_argument("action", choices=("clean",), help="clean: remove the cache folder")
    cache.add_argument("--config", metavar="PYPROJECT", help="the project's pyproject.toml (default: searched)")
    cache.set_defaults(func=cmd_cache)
    rules = sub.add_parser("rules", help="list the rules: default on/off and fix safety")
    rules.add_argument("--format", choices=("text", "json"), default="text")
    rules.set_defaults(func=cmd_rules)
    server = sub.add_parser("server", help="run the language server (LSP over stdio)",
                            description="A language server over stdin/stdout: diagnostics and code actions "
                            "for Python files and notebooks, configured as `check` is.")
    server.set_defaults(func=cmd_server)
    return parser


def add_common(parser: argparse.ArgumentParser) -> None:
    """The options `check` and `fix` share, with the same meaning and defaults (settings.Options)."""
    parser.add_argument("paths", nargs="*", default=["."], metavar="PATH",
                        help="files, folders, or - for stdin (default: .)")
    for opt, text in (("--select", "rule codes or prefixes to check (replaces the default set)"),
                      ("--ignore", "codes or prefixes not to report"),
                      ("--extend-select", "codes or prefixes to add, e.g. opt-in TEN9"),
                      ("--exclude", ".gitignore-style patterns to skip (replaces the defaults)"),
                      ("--extend-exclude", ".gitignore-style patterns to skip as well"),
                      ("--tensor-functions", "extra names of functions that return tensors")):
        parser.add_argument(opt, type=comma_list, metavar="A,B", help=text)
    parser.add_argument("--stdin-filename", help="the name to report for - (stdin)")
    parser.add_argument("--config", metavar="PYPROJECT", help="use this pyproject.toml instead of searching")
    parser.add_argument("-j", "--jobs", type=job_count, default=0, help="processes, 1 or more (default: all cores)")
    parser.add_argument("--format", choices=FORMATS, default="text", help="how findings are printed")
    parser.add_argument("--show-source", action="store_true", help="print the line and a caret")
    parser.add_argument("--force-exclude", action="store_true", help="apply the excludes to files named inside "
                        "excluded folders too (for pre-commit, which names every file)")
    parser.add_argument("-q", "--quiet", action="store_true", help="no summary line and no notes")
    parser.add_argument("--no-cache", dest="cache", action="store_false",
                        help=f"neither read nor write the cache ({FOLDER}/ beside pyproject.toml)")


def job_count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"-j takes a whole number of processes, 1 or more (not {text!r})")
    return value


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except BrokenPipeError:  # `... | head` closed the pipe: stop quietly, as other command-line tools do
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # Python flushes stdout again at exit
        return 1


def entry() -> None:
    """The command: main(), then exit. After a pool was stopped mid-run (Ctrl-C, a closed pipe, an error)
    its thread may wait forever on a queue a killed worker left locked, and Python joins that thread at
    exit; so the process flushes what it printed and ends without the join.

    The cyclic collector is told what it need not do: the imported modules live to the end (frozen), and
    a syntax tree is thousands of small objects that all live until the file is done (a collection every
    20,000 allocations, not 700: about 5 % of the CPU time of `check`)."""
    collector.freeze_once()
    gc.set_threshold(*collector.THRESHOLD)
    code = main()
    pool = sys.modules.get(f"{__package__}.pool")  # imported only by a run that used one
    if pool is not None and pool.abandoned():
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):  # a closed pipe, a closed stream: nothing more can be said there
                pass
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":  # pragma: no cover
    entry()
