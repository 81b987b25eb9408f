"""The standalone command: `flake8-tensorcopy check|explain|rules`."""
from __future__ import annotations

import argparse
import os
import sys
from typing import Iterator, Optional, Sequence

from . import __version__
from .engine import AnalysisError, analyse, physical_lines, select_rules, suppressed
from .rules import BY_CODE, RULES


def iter_files(paths: Sequence[str]) -> Iterator[str]:
    for path in paths:
        if os.path.isdir(path):
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
                for name in sorted(files):
                    if name.endswith((".py", ".pyi")):
                        yield os.path.join(root, name)
        else:
            yield path


def read_source(path: str) -> str:
    if path == "-":
        data = sys.stdin.buffer.read()
    else:
        with open(path, "rb") as fh:
            data = fh.read()
    import io
    import tokenize

    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    return data.decode(encoding).lstrip("\ufeff") if encoding == "utf-8-sig" else data.decode(encoding)


def cmd_check(args) -> int:
    rules = select_rules(args.select or (), args.ignore or (), args.extend_select or ())
    status = 0
    for path in iter_files(args.paths):
        name = args.stdin_filename if path == "-" and args.stdin_filename else path
        try:
            source = read_source(path)
            result = analyse(source, name, rules)
        except (OSError, UnicodeDecodeError, LookupError, SyntaxError, AnalysisError) as exc:
            print(f"{name}: error: {exc}", file=sys.stderr)
            status = 2
            continue
        except Exception as exc:  # a bug of ours: say so in one line and go on with the other files
            print(f"{name}: internal error: {type(exc).__name__}: {exc}".split("\n")[0], file=sys.stderr)
            status = 2
            continue
        for error in result.errors:
            print(f"{name}: internal error: {error}", file=sys.stderr)
            status = 2
        lines = physical_lines(source)
        for f in result.findings:
            if not suppressed(f, lines):
                print(f"{name}:{f.line}:{f.col + 1}: {f.code} {f.message}")
                status = max(status, 1)
    return status


def cmd_explain(args) -> int:
    rule = BY_CODE.get(args.code.upper())
    if rule is None:
        print(f"unknown rule {args.code!r}; `flake8-tensorcopy rules` lists them", file=sys.stderr)
        return 2
    from .docs import rule_page

    print(rule_page(rule), end="")
    return 0


def cmd_rules(args) -> int:
    for r in RULES:
        print(f"{r.code}  {'on ' if r.default_on else 'off'}  fix:{r.fix_safety.value:<6}  {r.summary}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="flake8-tensorcopy", description=__doc__)
    parser.add_argument("--version", action="version", version=__version__)
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check", help="report findings")
    check.add_argument("paths", nargs="+")
    for opt in ("--select", "--ignore", "--extend-select"):
        check.add_argument(opt, type=lambda s: [c.strip().upper() for c in s.split(",") if c.strip()])
    check.add_argument("--stdin-filename")
    check.set_defaults(func=cmd_check)
    explain = sub.add_parser("explain", help="print a rule's documentation")
    explain.add_argument("code")
    explain.set_defaults(func=cmd_explain)
    sub.add_parser("rules", help="list the rules").set_defaults(func=cmd_rules)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
