"""The inputs a linter meets in editors and CI (issue 6), each with what every adapter must say about it.

Most inputs wrap BAD, a function with one TEN101 finding, so that "analysed" is visible as a finding
at a known place; an input that cannot be analysed has a `reason` the one-line message must match.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Optional

BAD = """import torch


def case(x):
    y = x.exp()
    z = y.detach()
    z.mul_(2)
    y.sum().backward()
    return z
"""
BAD_FINDING = (7, 5)  # line, 1-based column of the TEN101 finding in BAD
DEEP = 2500  # parses (the parser allows about 3x the recursion limit) but is far past Python's own limit


@dataclass(frozen=True)
class Input:
    name: str
    data: bytes
    findings: tuple = ()  # TEN101 (line, col) reported when the file is analysed
    reason: Optional[str] = None  # regex of `check`'s one-line reason when it cannot be analysed
    flake8: Optional[str] = None  # the code flake8 itself reports instead (E999, E902)
    flake8_findings: Optional[tuple] = None  # when flake8 reads the file differently from `check`
    flake8_breaks: Optional[str] = None  # another part of flake8 that fails on this input (not ours)
    suffix: str = ".py"
    stdin: bool = False  # also sent through stdin, as an editor does

    @property
    def filename(self) -> str:
        return self.name + self.suffix

    @property
    def expected_by_flake8(self) -> tuple:
        return self.findings if self.flake8_findings is None else self.flake8_findings


def _b(text: str) -> bytes:
    return text.encode("utf-8")


def _shifted(by: int) -> tuple:
    return ((BAD_FINDING[0] + by, BAD_FINDING[1]),)


def _newest_syntax() -> tuple[str, tuple]:
    """The newest syntax this interpreter accepts, with the findings it must still give."""
    parts = [BAD, """
def handle(command, y):
    match command:
        case {"scale": factor} if factor:
            z = y.detach()
            z.mul_(factor)
            y.sum().backward()
        case [first, *rest]:
            pass
        case Point(x=0) | None:
            pass
"""]
    found = [BAD_FINDING, (15, 13)]
    if sys.version_info >= (3, 11):
        parts.append("""
try:
    pass
except* (ValueError, TypeError) as group:
    pass
""")
    if sys.version_info >= (3, 12):
        parts.append("""
type Pair[T] = tuple[T, T]


class Box[T: (int, float), *Ts, **P]:
    def get[S](self, other: S) -> T | S: ...


label = f"{f"{f"{1 + 1}"}"}" + f"{'nested'!r:>{10}}"
""")
    else:
        parts.append("""
label = f"{f'{1 + 1}'}" + f"{'nested'!r:>{10}}"
""")
    return "".join(parts), tuple(found)


NEWEST, NEWEST_FINDINGS = _newest_syntax()
LONG_LINE_PREFIX = "q = [" + "1, " * 20000 + "]; "  # one statement before the finding: flake8 pays per error
LONG_LINE_BAD = BAD.replace("    z.mul_(2)", "    " + LONG_LINE_PREFIX + "z.mul_(2)")
FORMFEED = BAD.replace("import torch\n", "import torch\n\x0c# caf\u00e9\n").replace(
    "    z.mul_(2)", "    \u00e9 = 1; z.mul_(2)")
BIG_REPEAT = 50000 // 8
BIG = "import torch\n" + "".join(
    BAD.replace("import torch\n", "").replace("def case", f"def case_{i}") for i in range(BIG_REPEAT))
ELIF_CHAIN = BAD + "if a:\n    pass\n" + "".join(f"elif a{i}:\n    w = z.detach()\n" for i in range(DEEP))
NESTED_BLOCKS = BAD + "".join(
    "    " * i + (f"def f{i}(a):\n", f"for i{i} in a:\n", "with torch.no_grad():\n")[i % 3]
    for i in range(99)) + "    " * 99 + "w = a.detach()\n"

INPUTS = [
    Input("syntax_error", _b("def f(:\n    return x.detach()\n" + BAD),
          reason=r"cannot parse at line 1: invalid syntax", flake8="E999", stdin=True),
    Input("half_typed", _b(BAD + "    w = z.detach(\n"), reason=r"cannot parse at line 10: '\(' was never closed",
          flake8="E999", stdin=True),
    Input("half_typed_block", _b(BAD + "for step in range(3):\n"), reason=r"cannot parse at line 1[01]: ",
          flake8="E999", stdin=True),
    Input("empty", b""),
    Input("only_comments", _b("# z = y.detach()\n# z.mul_(2)\n#\n")),
    Input("utf8_bom", b"\xef\xbb\xbf" + _b(BAD), _shifted(0)),
    Input("latin1_cookie", b"# -*- coding: latin-1 -*-\nname = '\xe9t\xe9'\n" + _b(BAD), _shifted(2)),
    Input("undecodable", _b(BAD) + b"name = '\xff\xfe'\n", reason=r"(can't|cannot) decode",
          flake8_findings=_shifted(0)),
    Input("unknown_cookie", b"# coding: klingon\n" + _b(BAD), reason=r"unknown encoding: klingon",
          flake8_findings=_shifted(1)),
    Input("nul_bytes", _b(BAD) + b"x = 1\x00\n", reason=r"null bytes", flake8="E999"),
    Input("crlf", _b(BAD.replace("\n", "\r\n")), _shifted(0)),
    Input("lone_cr", _b(BAD.replace("\n", "\r")), _shifted(0)),
    Input("tabs", _b(BAD.replace("    ", "\t")), ((BAD_FINDING[0], 2),)),
    Input("form_feed_and_unicode", _b(FORMFEED), ((BAD_FINDING[0] + 1, 12),)),
    Input("form_feed_noqa", _b(FORMFEED.replace("z.mul_(2)", "z.mul_(2)  # noqa: TEN101"))),
    Input("no_trailing_newline", _b(BAD.rstrip("\n")), _shifted(0)),
    Input("very_long_line", _b("data = [" + "1, " * 40000 + "]\n" + LONG_LINE_BAD),
          ((BAD_FINDING[0] + 1, 5 + len(LONG_LINE_PREFIX)),)),
    Input("deep_expression", _b(BAD + "w = " + " + ".join(["z.detach()"] * DEEP) + "\n"), _shifted(0),
          flake8_breaks="pyflakes"),
    Input("deep_unary", _b(BAD + "w = " + "-" * DEEP + "z.detach()\n"), _shifted(0), flake8_breaks="pyflakes"),
    Input("deep_elif_chain", _b(ELIF_CHAIN), _shifted(0), flake8_breaks="pyflakes"),
    Input("nested_blocks_99", _b(NESTED_BLOCKS), _shifted(0)),
    Input("nested_blocks_too_deep", _b(BAD + "".join(" " * i + f"if a{i}:\n" for i in range(120)) + " " * 120
                                       + "w = z.detach()\n"),
          reason=r"too many levels of indentation", flake8="E999"),
    Input("beyond_the_parser", _b(BAD + "w = " + "-" * 100000 + "z.detach()\n"),
          reason=r"cannot parse: too deeply nested", flake8_breaks="flake8"),
    Input("fifty_thousand_lines", _b(BIG), tuple((1 + 8 * i + 6, 5) for i in range(BIG_REPEAT))),
    Input("stub", _b('"""Types only; see copy.deepcopy(x) and y.detach()."""\nimport torch\n\n'
                     "def f(x: torch.Tensor = ...) -> torch.Tensor: ...\nclass M:\n    w: torch.Tensor\n"
                     "    def clone(self) -> M: ...\n"), suffix=".pyi"),
    Input("python2", _b("print 'hello'\nexec code in ns\nz = y.detach()\n"), reason=r"cannot parse at line 1",
          flake8="E999"),
    Input("newest_syntax", _b(NEWEST), NEWEST_FINDINGS),
    Input("type_comments", _b(BAD + "\n\ndef h(x):\n    # type: (torch.Tensor) -> None\n"
                              "    q = x.detach()  # type: torch.Tensor\n"), _shifted(0)),
    Input("png_image", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) + b"z = y.detach()",
          reason=r"(encoding|null bytes|decode)", flake8="E999"),
    Input("json", _b('{"x": "y.detach()", "a": [1, 2.5, null]}\n')),
    Input("shell_script", _b("#!/bin/sh\necho $(z.detach())\nfi\n"), reason=r"cannot parse at line 2", flake8="E999"),
    Input("c_source", _b("#include <torch/torch.h>\nint main() { auto z = y.detach(); return 0; }\n"),
          reason=r"cannot parse at line 2", flake8="E999"),
]
REAL = Input("real_findings", _b(BAD), _shifted(0))
