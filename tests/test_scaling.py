"""The evidence questions stay polynomial on worst cases: every branch rebinding a name (issue 15's
100-`if` file took 48 s before answers were memoised). Work is counted as memoised answers, not timed."""
from __future__ import annotations

from flake8_tensorcopy import engine
from flake8_tensorcopy.rules import BY_CODE


def branches(n: int) -> str:
    body = "".join(f"    if flags[{i}]:\n        img = img.flip(0)\n" for i in range(n))
    return ("import torch\n\n\ndef f(img, flags):\n    img = torch.zeros(3, 3) + img\n" + body
            + "    out = img.detach()\n    out.mul_(2)\n    return img\n")


def answers(source: str, monkeypatch) -> int:
    made = []

    class Recording(engine.FileFacts):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made.append(self)

    monkeypatch.setattr(engine, "FileFacts", Recording)
    result = engine.analyse(source, "t.py", [BY_CODE["TEN101"], BY_CODE["TEN104"], BY_CODE["TEN401"]])
    assert [f.code for f in result.findings] == ["TEN101"]
    return len(made[0].memo)


def test_rebinding_in_every_branch_costs_at_most_quadratic_work(monkeypatch):
    small, large = answers(branches(20), monkeypatch), answers(branches(80), monkeypatch)
    assert large <= small * 4 ** 2  # 4x the branches: at most 16x the answers (exponential would be 2**60x)


def accumulations(n: int) -> str:
    helpers = "".join(f"def helper{i}(x):\n    return x * 2\n\n" for i in range(n))
    loop = ("def train(model, loader, opt):\n    total = 0\n    for x in loader:\n        loss = model(x).sum()\n"
            "        loss.backward()\n        opt.step()\n"
            + "".join(f"        total += helper{i}(loss)\n" for i in range(n)))
    return "import torch\n" + helpers + loop + "    return total\n"


def visited(source: str, monkeypatch) -> int:
    """AST nodes TEN401 walks over while checking `source` (its loops are asked about once each)."""
    import ast

    from flake8_tensorcopy.rules import ten401

    count, real_walk = [0], ast.walk

    def walk(node):
        for n in real_walk(node):
            count[0] += 1
            yield n

    monkeypatch.setattr(ten401.ast, "walk", walk)
    result = engine.analyse(source, "t.py", [BY_CODE["TEN401"]])
    monkeypatch.undo()
    assert result.errors == []
    return count[0]


def test_many_accumulations_in_one_loop_cost_linear_work(monkeypatch):
    small, large = visited(accumulations(100), monkeypatch), visited(accumulations(400), monkeypatch)
    assert large <= small * 4 * 1.5  # 4x the statements: about 4x the nodes walked (it was 16x)
