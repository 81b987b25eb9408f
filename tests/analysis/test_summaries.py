"""Summaries of the file's own functions: what a def returns, what its callers pass, and the partial
parse keeping the defs those summaries read (so flake8 and `check` agree with a whole-file analysis)."""
from __future__ import annotations

import ast
import re
import textwrap
from types import SimpleNamespace

import pytest

from flake8_tensorcopy.engine import core as engine
from flake8_tensorcopy.analysis import summaries
from flake8_tensorcopy.rules import BY_CODE


def codes(source: str, *extra: str) -> list[tuple[int, str]]:
    rules = [r for r in engine.RULES if r.default_on or r.code in extra]
    result = engine.analyse(textwrap.dedent(source), "t.py", rules)
    assert result.errors == []
    return [(f.line, f.code) for f in result.findings]


def whole_file(source: str) -> list[tuple[int, str]]:
    source = textwrap.dedent(source)
    result = engine.analyse(source, "t.py", [r for r in engine.RULES if r.default_on], tree=ast.parse(source))
    return [(f.line, f.code) for f in result.findings]


def partial_file(source: str) -> list[tuple[int, str]]:
    """Findings from the partial tree (the one a file that does not parse falls back to)."""
    source, rules = textwrap.dedent(source), [r for r in engine.RULES if r.default_on]
    tree = engine.partial_tree(source, rules)
    assert tree is not None
    return [(f.line, f.code) for f in engine.analyse(source, "t.py", rules, tree=tree).findings]


HELPER_RETURNS_TENSOR = """
    import torch


    def make_kernel(n):
        return torch.ones(n, n)


    def unrelated():
        return 1


    def apply(x):
        kernel = make_kernel(3)
        kernel.to(x.device)
        return x
"""


def test_a_helper_of_the_file_returns_a_tensor():
    assert codes(HELPER_RETURNS_TENSOR) == [(15, "TEN104")]


def test_the_partial_parse_keeps_the_helper_a_hot_function_calls():
    assert partial_file(HELPER_RETURNS_TENSOR) == whole_file(HELPER_RETURNS_TENSOR) == [(15, "TEN104")]


def test_each_element_of_a_returned_tuple():
    source = """
        import torch


        def extract(model, loader):
            return torch.zeros(3), [1, 2]


        def run(model, loader):
            emb, labels = extract(model, loader)
            emb.to("cuda")
            labels.to("cuda")
    """
    assert codes(source) == [(11, "TEN104")]  # labels is a list: its .to() is not torch's


@pytest.mark.parametrize("returns", ["return None", "yield torch.zeros(3)", "return torch.zeros(3).tolist()"])
def test_a_def_that_may_return_something_else_says_nothing(returns):
    source = f"""
        import torch


        def make(flag):
            if flag:
                return torch.zeros(3)
            {returns}


        def apply(x):
            kernel = make(True)
            kernel.to(x.device)
    """
    assert codes(source) == []


def test_recursion_ends_unknown():
    source = """
        import torch


        def a(n):
            return b(n)


        def b(n):
            return a(n)


        def apply(x):
            k = a(1)
            k.to(x.device)
    """
    assert codes(source) == []


CALLERS_PASS_TENSORS = """
    import torch


    def quick_fit(features, labels):
        features = torch.tensor(features, dtype=torch.float32)
        return features, labels


    def fit(model, frame):
        x = torch.from_numpy(frame.values)
        quick_fit(x, [1, 2])
"""


def test_a_parameter_some_caller_passes_a_tensor_is_reported_without_a_fix():
    result = engine.analyse(textwrap.dedent(CALLERS_PASS_TENSORS), "t.py")
    assert [(f.line, f.code) for f in result.findings] == [(6, "TEN204")]
    assert result.findings[0].fix is None  # a caller elsewhere may pass a list: .detach() would break it


def test_callers_in_cold_defs_count_in_the_partial_parse():
    cold_caller = CALLERS_PASS_TENSORS.replace("torch.from_numpy(frame.values)", "torch.zeros(3)")  # no trigger
    cold_caller += "\n\n    def unrelated():\n        return 1\n"  # stubbed: a partial tree is made
    assert partial_file(cold_caller) == whole_file(cold_caller) == [(6, "TEN204")]


def test_a_parameter_no_caller_passes_a_tensor_is_quiet():
    assert codes(CALLERS_PASS_TENSORS.replace("quick_fit(x,", "quick_fit([0.5],")) == []


def test_a_method_that_returns_the_state_dict():
    source = """
        import torch


        class Runner:
            def __init__(self):
                self.network = torch.nn.Linear(2, 2)

            def get_state(self):
                return self.network.state_dict()

            def run(self, optimizer, batches):
                start = self.get_state()
                for x in batches:
                    self.network(x).sum().backward()
                    optimizer.step()
                self.network.load_state_dict(start)
    """
    assert (13, "TEN301") in codes(source)


def test_the_training_step_returns_an_attached_loss():
    source = """
        import torch


        class Trainer:
            def training_step(self, model, batch):
                loss = model(batch).sum()
                loss.backward()
                return loss

            def train(self, model, loader, optimizer):
                total = 0.0
                for batch in loader:
                    total += self.training_step(model, batch)
                    optimizer.step()
                return total
    """
    assert (14, "TEN401") in codes(source)


def test_summaries_cost_one_evaluation_per_def(monkeypatch):
    """n helpers each called once: the summaries are asked once per def, not once per caller chain."""
    from flake8_tensorcopy.analysis import summaries

    def program(n):
        helpers = "".join(f"def h{i}(x):\n    return h{i - 1}(x)\n\n" for i in range(1, n))
        return ("import torch\n\ndef h0(x):\n    return torch.zeros(3)\n\n" + helpers
                + f"def apply(x):\n    k = h{n - 1}(1)\n    k.to(x.device)\n")

    calls = [0]
    real = summaries._returned

    def counted(*args):
        calls[0] += 1
        return real(*args)

    monkeypatch.setattr(summaries, "_returned", counted)
    rules = [BY_CODE["TEN104"]]
    small = engine.analyse(program(20), "t.py", rules, tree=ast.parse(program(20)))
    small_calls, calls[0] = calls[0], 0
    large = engine.analyse(program(80), "t.py", rules, tree=ast.parse(program(80)))
    assert [f.code for f in small.findings] == [f.code for f in large.findings] == ["TEN104"]
    assert calls[0] <= small_calls * 4 * 1.5


def test_a_class_attribute_set_from_a_method_and_rebound_from_itself():
    source = """
        import torch


        class SSIM:
            def __init__(self):
                self.kernel = self._gaussian_kernel(3)

            def _gaussian_kernel(self, n):
                return torch.ones(n, n) / n

            def update(self, y_pred):
                self.kernel = self.kernel.expand(3, 1, -1, -1)
                if y_pred.device is not self.kernel.device:
                    self.kernel.to(device=y_pred.device)
    """
    assert codes(source) == [(15, "TEN104")]


@pytest.mark.parametrize("base, found", [("torch.nn.Module", [(7, "TEN104")]), ("object", [])])
def test_the_inputs_of_a_module_forward(base, found):
    source = f"""
        import torch


        class Net({base}):
            def forward(self, input):
                input.cuda()
                return input
    """
    assert codes(source) == found


def test_a_def_passed_as_a_callback_still_warns_for_the_tensor_the_file_passes():
    source = CALLERS_PASS_TENSORS + "        optimize(func=quick_fit)\n"
    assert codes(CALLERS_PASS_TENSORS) == [(6, "TEN204")]
    assert codes(source) == [(6, "TEN204")]  # other callers may pass lists; this one passes a tensor


def test_what_every_caller_passes_is_unknown_for_a_def_passed_as_a_callback():
    source = """
        import torch


        def to_cpu(x):
            x.to("cpu")


        to_cpu(torch.zeros(3))
"""
    assert codes(source) == [(6, "TEN104")]
    assert codes(source + "        register(to_cpu)\n") == []  # a module may arrive: its .to() moves it


def test_a_conversion_after_an_early_return_for_tensors_is_intended():
    source = """
        import torch


        def to_torch(x_in, device):
            if torch.is_tensor(x_in):
                return x_in.to(device)
            return torch.tensor(x_in, device=device)


        def run(obs):
            return to_torch(torch.zeros(3), "cpu")
    """
    assert codes(source) == []


def test_many_defs_with_parameters_cost_linear_work():
    """Every def's parameter asks for its callers: finding them must not walk (or search) the whole file
    once per def (a 50,000-line file of 6,250 such defs took 100 s). Work counted as in test_scaling."""
    from tests.support.scaling_cases import WorkCounter

    def program(n):
        defs = "".join(f"def case_{i}(x):\n    y = x.exp()\n    z = y.detach()\n    z.mul_(2)\n    return z\n\n\n"
                       for i in range(n))
        calls = "".join(f"case_{i}(torch.ones(2))\n" for i in range(0, n, 10))
        return "import torch\n\n\n" + defs + calls

    def work(n):
        source = program(n)
        with WorkCounter() as counter:
            engine.analyse(source, "t.py")
        return counter.steps

    small, large = work(100), work(400)
    assert large <= small * 4 * 1.15  # deterministic counts: 3.97x now, 5.49x with a text search per def


def test_the_lines_of_a_word_are_the_same_searched_one_by_one_or_from_the_index():
    source = ("def ab(x):\n    return xab(ab_) + ab\nab=1;cab.ab(\u00e9ab, ab\u00e9, ab)\n\n"
              "class Zz:\n    zz = Zz.ab + \u00e9ab\n")
    names = sorted(set(re.findall(r"\w+", source))) + ["a", "b_", "nothere", "a\u0301b"]
    searched = {n: summaries._word_lines(SimpleNamespace(source=source, memo={}), n) for n in names}
    index = summaries._word_index(source)
    assert searched == {n: index.get(n, []) for n in names}
    assert searched["ab"] == [1, 2, 3, 6] and searched["\u00e9ab"] == [3, 6] and searched["a"] == []


def test_a_file_that_asks_about_many_names_indexes_its_words_once():
    facts = SimpleNamespace(source="".join(f"def f{i}(x):\n    return f{i + 1}(x)\n" for i in range(100)), memo={})
    asked = [summaries._word_lines(facts, f"f{i}") for i in range(100)]
    assert asked == [[1]] + [[2 * i, 2 * i + 1] for i in range(1, 100)]
    assert facts.memo["word-searches"] == summaries.WORD_SEARCHES + 1 and "word-index" in facts.memo
