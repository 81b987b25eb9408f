"""Context in the caller: a def that writes its parameter in place writes the alias a caller passes
(analysis/param_writes.py, analysis/aliasing.py), and a `.data` write of a parameter that a caller passes
a graph tensor backpropagated after the call (analysis/evidence.passed_non_leaf)."""
from __future__ import annotations

import ast
import textwrap

import pytest

from tests.support.project_tools import write
from tests.support.rule_tools import findings
from flake8_tensorcopy.analysis import param_writes
from flake8_tensorcopy.analysis.aliasing import alias_writes
from flake8_tensorcopy.analysis.facts import FileFacts
from flake8_tensorcopy.analysis.position import Position
from flake8_tensorcopy.engine import core as engine


def _written(source: str, name: str) -> dict[str, int]:
    source = textwrap.dedent(source)
    facts = FileFacts(ast.parse(source), source, (ast.Call,))
    fn = next(n for n in facts.tree.body if isinstance(n, ast.FunctionDef) and n.name == name)
    where = Position(facts, facts.module_frame, (fn.lineno, fn.col_offset))
    return {param: stmt.lineno for param, stmt in param_writes.written_params(fn, where).items()}


@pytest.mark.parametrize("write_line", ["m -= m.mean()", "m[0] = 1.0", "m.clamp_(0, 1)",
                                        "torch.add(m, 1, out=m)", "m[:, 0].mul_(2)"])
def test_a_def_that_writes_its_parameter_in_place(write_line):
    assert _written(f"""
        import torch
        def f(m, other):
            y = other + 1
            {write_line}
            return m
    """, "f") == {"m": 5}


@pytest.mark.parametrize("body", ["m = m.clone()\n    m -= 1", "m = m - 1", "m2 = m.clone()\n    m2 += 1",
                                  "def inner(m):\n        m += 1\n    return inner"])
def test_no_write_into_the_callers_object(body):
    assert _written(f"import torch\ndef f(m):\n    {body}\n", "f") == {}


def test_a_parameter_passed_on_to_a_def_that_writes_it():
    assert _written("""
        def center(m):
            m -= m.mean()
        def prepare(x, scale):
            center(x)
            return x * scale
    """, "prepare") == {"x": 5}


CENTER = """
    import torch

    def center(m):
        m -= m.mean(dim=0, keepdim=True)
        return m

    def stats(model, x):
        feats = model(x)
        {call}
        return c, {after}
"""


@pytest.mark.parametrize("call", ["c = center(feats.detach())", "m = feats.detach()\n        c = center(m)"])
def test_detach_alias_passed_to_a_def_that_writes_it(call):
    found = [(f.line, f.code) for f in findings(CENTER.format(call=call, after="feats.mean()"))]
    assert found == [(5, "TEN101")]


@pytest.mark.usefixtures("every_fix_offered")  # a fix the rules withhold shows the mechanics
def test_the_finding_names_the_call_and_the_fix_copies_at_the_call():
    [f] = findings(CENTER.format(call="c = center(feats.detach())", after="feats.mean()"))
    assert "center() writes it in place" in f.message and "line 10" in f.message
    [edit] = f.fix.edits
    assert edit.start[0] == 10 and edit.text == "feats.detach().clone()"


def test_no_finding_when_the_caller_does_not_read_the_source_again():
    assert findings(CENTER.format(call="c = center(feats.detach())", after="None")) == []


def test_a_clone_passed_gives_no_finding():
    assert findings(CENTER.format(call="c = center(feats.detach().clone())", after="feats.mean()")) == []


def test_a_def_named_for_updating_parameters_writes_on_purpose():
    assert findings("""
        import torch
        def soft_update(target, source, tau):
            target.mul_(1 - tau)
            target.add_(tau * source)
        def sync(a, b):
            soft_update(a.detach(), b, 0.01)
            return a.sum()
    """) == []


def test_numpy_alias_passed_to_a_def_that_normalises_it():
    found = findings("""
        import torch
        def standardize(a):
            a -= a.mean()
            return a
        def report(t: torch.Tensor):
            z = standardize(t.numpy())
            return z, t.sum()
    """)
    assert [(f.line, f.code) for f in found] == [(4, "TEN103")]


def test_data_alias_written_by_a_callee_while_the_graph_is_used():
    found = findings("""
        import torch
        def scale(d):
            d.mul_(2)
        def run(model, x):
            y = model(x)
            d = y.data
            scale(d)
            y.sum().backward()
    """)
    assert [(f.line, f.code) for f in found] == [(4, "TEN102")]


def test_alias_writes_of_a_call_carry_the_callee():
    source = textwrap.dedent(CENTER.format(call="c = center(feats.detach())", after="feats.mean()"))
    facts = FileFacts(ast.parse(source), source, (ast.Call,))
    node, frame = next((n, fr) for n, fr in facts.nodes if isinstance(n.func, ast.Name) and n.func.id == "center")
    [w] = alias_writes(node, Position(facts, frame, (node.lineno, node.col_offset)))
    assert (w.name, w.callee.param, w.reported_at(node).lineno, ast.unparse(w.alias.source)) == ("m", "m", 5, "feats")


def test_a_callee_of_another_module_is_reported_at_the_call(tmp_path):
    write(tmp_path, {"pkg/__init__.py": "", "pkg/ops.py": """
        def center(m):
            m -= m.mean(dim=0, keepdim=True)
            return m
    """, "pkg/stats.py": """
        import torch
        from .ops import center

        def stats(feats):
            c = center(feats.detach())
            return c, feats.mean()
    """})
    path = tmp_path / "pkg" / "stats.py"
    result = engine.analyse(path.read_text(), str(path), [r for r in engine.RULES if r.default_on])
    assert [(f.line, f.code) for f in result.findings] == [(6, "TEN101")]


RESCALE = """
    import torch
    from torch import nn

    def rescale(delta):
        delta.data *= 0.5
        return delta

    def train(gen: nn.Module, x, opt, lin: nn.Linear):
        for _ in range(3):
            loss = rescale({argument}).sum()
            {after}
"""


def test_data_write_of_a_parameter_a_caller_passes_a_graph_tensor_then_backpropagates():
    found = findings(RESCALE.format(argument="gen(x)", after="loss.backward()"))
    assert [(f.line, f.code) for f in found] == [(6, "TEN102")]


@pytest.mark.parametrize("argument, after", [
    ("gen(x)", "print(loss)"),                        # no backward after the call
    ("lin.weight", "loss.backward()"),                # a parameter: written on purpose
    ("torch.randn(3, requires_grad=True)", "loss.backward()"),  # a leaf
    ("x", "loss.backward()"),                         # not known to be in a graph
])
def test_no_data_write_finding_without_a_graph_tensor_and_a_backward(argument, after):
    assert findings(RESCALE.format(argument=argument, after=after)) == []
