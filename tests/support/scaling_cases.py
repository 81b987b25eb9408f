"""Worst-case-shaped inputs at any size, shared by tests/integration/test_scaling.py (which counts work) and
scripts/scaling.py (which times it). Each rule's documented example is repeated in the shapes that
stress an analysis: many statements in one function (long binding chains), many branches that rebind
the same names, many functions, deep nesting; and hostile text for the regexes."""
from __future__ import annotations

import json
import re
import sys
import textwrap

HEADER = "import copy\nimport torch\nfrom torch import nn\n\nencoder = nn.Linear(4, 4)\n\n\n"
# Rules whose documented example needs context the snippet leaves out (where `h` and `p` come from).
UNITS = {"TEN204": "h = torch.ones(2) * x\ntarget = torch.tensor(h)\n",
         "TEN903": "p = model.weight\nloss = (p * p).sum()\np.data.mul_(0.5)\nloss.backward()\n"}


def unit(rule) -> str:
    """The code that makes `rule` fire: the code block under its doc's `## Example` heading."""
    if rule.code in UNITS:
        return UNITS[rule.code]
    section = re.search(r"^## Example\n+```python\n(.*?)^```", rule.doc, re.MULTILINE | re.DOTALL)
    return section.group(1)


def _wrap(code: str, bodies: list[str]) -> str:
    """Each body in a function: the example's own `def` (a method of an nn.Module) or `def run()`."""
    if code.startswith("def "):
        header = code.splitlines()[0]
        methods = "".join(textwrap.indent(f"{header}\n{textwrap.indent(b, '    ')}", "    ") for b in bodies)
        return HEADER + "class Net(nn.Module):\n" + methods
    return HEADER + "".join(f"def run{i}(model, x, flags):\n{textwrap.indent(b, '    ')}\n"
                            for i, b in enumerate(bodies))


def _body(code: str) -> str:
    if code.startswith("def "):
        return textwrap.dedent("".join(code.splitlines(keepends=True)[1:]))
    return code


def statements(code: str, n: int) -> str:
    """The example n times in one function: every name rebound n times."""
    return _wrap(code, [_body(code) * n])


def branches(code: str, n: int) -> str:
    """The example under n `if`s in one function, then once more: every binding reaches the end by 2**n
    paths (issue 15: TEN101 was exponential in these)."""
    body = _body(code)
    guarded = "".join(f"if flags[{i}]:\n{textwrap.indent(body, '    ')}" for i in range(n))
    return _wrap(code, [guarded + body])


def loop(code: str, n: int) -> str:
    """The example n times in the body of one loop (a training loop when the example trains)."""
    return _wrap(code, ["for batch in loader:\n" + textwrap.indent(_body(code) * n, "    ")])


def functions(code: str, n: int) -> str:
    return _wrap(code, [_body(code)] * n)


def nesting(code: str, n: int) -> str:
    """The example inside n nested `if`s (Python allows fewer than 100 nested blocks)."""
    body = _body(code)
    for i in reversed(range(n)):
        body = f"if flags[{i}]:\n{textwrap.indent(body, '    ')}"
    return _wrap(code, [body])


SHAPES = {"statements": statements, "branches": branches, "loop": loop, "functions": functions}


def hostile_text(n: int) -> str:
    """Lines of near-misses for the rules' trigger regexes: a prefix repeated n times with no match,
    so a pattern that rescans from each occurrence costs n**2."""
    shapes = ["x[a" + ".to(a" * n, "a" * n + ".to(" * n, ".detach(" * n, ".data " * n + ".data\t" * n,
              ".numpy from_nump asarra " * n, "deepcop " * n, "copy.copy " * n, "from copy import " + "x, " * n,
              ".clone " * n, "tensor( " * n, "state_dict " * n, "self.a:" * n, "self.a[" * n, "self.a" + " " * n,
              ".clone(" + "(" * n, ".clone() " * n, ".clone(" * n, ".clone(a)" + "#\n" * n, ".data" * n,
              "+" * n, ".backward " * n, "forward hook .backward( .step( += .append("]
    return "\n".join(shapes) + "\n"


# ---- the cases issue 15 named, run through the front ends ----------------------------------------
def many_branches(n: int) -> str:
    """TEN101: `img = img.flip(0)` under n `if` blocks, then `out = img.detach(); out.mul_(2)`."""
    body = "".join(f"    if flags[{i}]:\n        img = img.flip(0)\n" for i in range(n))
    return ("import torch\n\n\ndef f(img, flags):\n    img = torch.zeros(3, 3) + img\n" + body
            + "    out = img.detach()\n    out.mul_(2)\n    return img\n")


def long_line(n: int) -> str:
    """TEN901: a forward whose one line holds `self.a:` n times (in a string)."""
    return ("import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    def forward(self, x):\n"
            f"        text = \"{'self.a:' * n}\"\n        self.out = self.proj(x)\n        return text\n")


def big_file(n: int) -> str:
    """TEN401: n training loops, each accumulating a loss (n findings with fixes)."""
    loop = ("def train{i}(model, loader, opt):\n    total = 0\n    for x in loader:\n"
            "        loss = model(x).sum()\n        loss.backward()\n        opt.step()\n"
            "        total += loss\n    return total\n\n\n")
    return "import torch\n\n\n" + "".join(loop.format(i=i) for i in range(n))


def notebook(n: int) -> str:
    """n cells of the same few lines (difflib's worst case: every line repeated), each with a fix."""
    cell = "h = torch.ones(2) * x\ntarget = torch.tensor(h)\nprint(target)\n"
    cells = [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
              "source": cell.splitlines(keepends=True)} for _ in range(n)]
    cells.insert(0, {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                     "source": ["import torch\n"]})
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n"


class WorkCounter:
    """Work as the number of Python lines executed plus built-in calls made while the block runs:
    deterministic, unlike time, and it grows with every loop, with or without calls in its body."""

    def __init__(self):
        self.steps = 0

    def _trace(self, frame, event, arg):
        self.steps += 1
        return self._trace

    def _profile(self, frame, event, arg):
        if event == "c_call":
            self.steps += 1

    def __enter__(self):
        self._previous = sys.gettrace(), sys.getprofile()
        sys.settrace(self._trace)
        sys.setprofile(self._profile)
        return self

    def __exit__(self, *exc):
        sys.settrace(self._previous[0])
        sys.setprofile(self._previous[1])
        return False


class CallCounter:
    """Work as the Python and built-in calls made while the block runs, generator resumptions among them (so
    `any(... for b in bindings)` counts each binding it looks at), counted by cProfile's C profiler:
    deterministic, and about 3x the run's time where WorkCounter's line trace takes about 6x, so it can count
    at 16n. Blind to a loop whose body calls nothing and to work inside one built-in call (a regex split of
    the whole text): WorkCounter sees the first at n and 4n; the second needs its own count."""

    def __init__(self):
        self.steps = 0

    def __enter__(self):
        import cProfile

        self._previous = sys.getprofile()
        self._profile = cProfile.Profile(builtins=True)
        self._profile.enable()
        return self

    def __exit__(self, *exc):
        self._profile.disable()
        sys.setprofile(self._previous)
        self.steps = sum(entry.callcount for entry in self._profile.getstats())
        return False


def every_rule(shape, n: int, rules) -> str:
    """Every rule's example in `shape` at size n, one after another in one file."""
    return HEADER + "".join(shape(unit(r), n)[len(HEADER):] for r in rules)


# ---- the package and one scope (issues 26 and 27) -------------------------------------------------
CONVERT = "import torch\n\n\ndef to_tensor(values):\n    return torch.tensor(values)\n"


def package(n: int) -> dict[str, str]:
    """A package of n modules; module i defines `f{i}(values)` (TEN204 when its callers pass tensors)
    and calls the functions of the 3 modules after it with tensors."""
    files = {"pkg/__init__.py": ""}
    for i in range(n):
        others = [(i + k) % n for k in (1, 2, 3)]
        imports = "".join(f"from .m{j} import f{j}\n" for j in others)
        calls = "".join(f"    f{j}(torch.ones(3) * x)\n" for j in others)
        files[f"pkg/m{i}.py"] = (f"import torch\n{imports}\n\ndef f{i}(values):\n    return torch.tensor(values)\n"
                                 f"\n\ndef run{i}(x):\n{calls}")
    return files


def neighbours(n: int, count: int = 40) -> dict[str, str]:
    """A 5-line module beside `count` generated modules of n functions that each call its function."""
    caller = "def g{i}(x):\n    return to_tensor(torch.ones(3) * x)\n\n\n"
    body = "import torch\nfrom .convert import to_tensor\n\n\n" + "".join(caller.format(i=i) for i in range(n))
    return {"pkg/__init__.py": "", "pkg/convert.py": CONVERT, **{f"pkg/gen{k}.py": body for k in range(count)}}


def one_scope(n: int) -> str:
    """n assignments to n names in one function, each read by the next (issue 26: memory grew with n**2)."""
    lines = "".join(f"    h{i + 1} = h{i} * 2\n" for i in range(n))
    return f"import torch\n\n\ndef run(x):\n    h0 = torch.ones(2) * x\n{lines}    return torch.tensor(h{n})\n"


def many_functions(n: int) -> str:
    """n functions in one module, each calling the one before it (the 16k-function file of issue 27)."""
    fns = "".join(f"def f{i + 1}(x):\n    y = f{i}(x).detach()\n    return torch.tensor(y)\n\n\n" for i in range(n))
    return "import torch\n\n\ndef f0(x):\n    return x * 2\n\n\n" + fns


def write_files(folder, files: dict[str, str]) -> None:
    import os

    for name, text in files.items():
        path = os.path.join(folder, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as fh:
            fh.write(text)
