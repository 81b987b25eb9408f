"""Classes of harmful fixes a review of `fix --unsafe-fixes` on unseen repositories found (docs/fix-review.md),
each as a small program: a lesson that writes through an alias and then only shows both sides gets no fix
(TEN101, TEN103), and a list of graph-attached values that an update def the loop calls backpropagates and
empties is not a graph kept across the loop (TEN401)."""
from __future__ import annotations

import textwrap

import pytest
import torch

from tests.support.notebook_tools import code_notebook
from flake8_tensorcopy.engine.core import analyse
from flake8_tensorcopy.fix.fixer import fix_source
from flake8_tensorcopy.rules import BY_CODE, RULES
from flake8_tensorcopy.sources.notebook import read_notebook


def _notebook_findings(code: str, *cells: str):
    nb = read_notebook(code_notebook(*cells))
    return nb, [f for f in analyse(nb.program, "nb.ipynb", [BY_CODE[code]], cell_ends=nb.cell_ends).findings
                if f.code == code]


DETACH_LESSON = ("import torch\nsource = torch.tensor([3, 4])",
                 "alias = source.detach()\nalias[0] = 1111\nsource, alias")


def test_a_lesson_cell_showing_a_detach_alias_write_gets_no_fix():
    _, (finding,) = _notebook_findings("TEN101", *DETACH_LESSON)
    assert finding.fix is None


def test_a_detach_alias_write_whose_source_is_computed_with_is_still_fixed():
    cells = DETACH_LESSON[:1] + (DETACH_LESSON[1] + "\ntotal = source.sum()",)
    _, (finding,) = _notebook_findings("TEN101", *cells)
    assert finding.fix is not None and finding.fix.edits[0].text == "source.detach().clone()"


LEGACY_LESSON = "import torch\nt = torch.rand(2, 3)\nr = torch.Tensor(t)\nr.zero_()\nprint(t)\n"


def test_a_lesson_showing_a_legacy_constructor_alias_gets_no_fix():
    (finding,) = [f for f in analyse(LEGACY_LESSON, "t.py", [BY_CODE["TEN204"]]).findings]
    assert finding.fix is None


def test_a_legacy_constructor_alias_whose_source_is_computed_with_is_still_fixed():
    (finding,) = [f for f in analyse(LEGACY_LESSON + "u = t * 2\n", "t.py", [BY_CODE["TEN204"]]).findings]
    assert finding.fix is not None and finding.fix.edits[0].text == "t.detach().clone()"


def test_a_displayed_output_only_counts_in_a_notebook():
    source = "\n".join(DETACH_LESSON)
    (finding,) = [f for f in analyse(source, "t.py", [BY_CODE["TEN101"]]).findings]
    assert finding.fix is not None  # a .py file has no cell output: `source, alias` is a read


NUMPY_LESSON = ("import numpy as np\nimport torch\narr = np.ones(5)\nt = torch.from_numpy(arr)",
                "t.add_(1)\nprint(arr)\nprint(t)",
                "arr = np.zeros(3)\narr = arr * 2\nprint(arr.sum() + 1)")


def test_a_lesson_that_rebinds_the_array_later_still_only_shows_the_shared_one():
    _, (finding,) = _notebook_findings("TEN103", *NUMPY_LESSON)
    assert finding.fix is None  # the later cell's reads are of another array


def test_a_read_of_the_shared_array_itself_keeps_the_fix():
    cells = NUMPY_LESSON[:2] + ("total = arr.sum()",)
    _, (finding,) = _notebook_findings("TEN103", *cells)
    assert finding.fix is not None


ACTOR_CRITIC = """
import torch
import torch.nn.functional as F

critic = torch.nn.Linear(2, 1)
critic.saved = []
optimizer = torch.optim.SGD(critic.parameters(), lr=0.1)


def update(targets):
    losses = [F.mse_loss(v, t) for v, t in zip(critic.saved, targets)]
    optimizer.zero_grad()
    torch.stack(losses).sum().backward()
    optimizer.step()
    {empty}


def train(episodes, states, targets):
    for _ in range(episodes):
        for s in states:
            value = critic(s)
            critic.saved.append(value)
        update(targets)
"""


@pytest.mark.parametrize("empty", ["del critic.saved[:]", "critic.saved.clear()", "critic.saved = []"])
def test_a_list_an_update_def_of_the_loop_backpropagates_and_empties_is_not_reported(empty):
    source = ACTOR_CRITIC.format(empty=empty)
    assert [f.code for f in analyse(source, "t.py", [BY_CODE["TEN401"]]).findings] == []
    assert fix_source(source, "t.py", RULES, unsafe=True).fixed == source


def test_the_list_kept_by_an_update_that_never_empties_it_is_still_reported():
    source = ACTOR_CRITIC.format(empty="pass")
    (finding,) = analyse(source, "t.py", [BY_CODE["TEN401"]]).findings
    assert finding.code == "TEN401" and finding.line == source.splitlines().index(
        "            critic.saved.append(value)") + 1


def test_a_def_that_binds_the_name_itself_empties_another_object():
    source = ACTOR_CRITIC.format(empty="critic = torch.nn.Linear(2, 1)\n    critic.saved = []")
    assert [f.code for f in analyse(source, "t.py", [BY_CODE["TEN401"]]).findings] == ["TEN401"]


METHOD = """
import torch

class Agent:
    def __init__(self):
        self.critic = torch.nn.Linear(2, 1)
        self.opt = torch.optim.SGD(self.critic.parameters(), lr=0.1)
        self.saved = []

    def finish(self):
        self.opt.zero_grad()
        torch.stack(self.saved).pow(2).sum().backward()
        self.opt.step()
        {empty}

    def run(self, states):
        for s in states:
            self.saved.append(self.critic(s))
            self.finish()
"""


def test_a_method_called_on_self_that_empties_the_list_resets_it():
    source = METHOD.format(empty="del self.saved[:]")
    assert analyse(source, "t.py", [BY_CODE["TEN401"]]).findings == []
    assert [f.code for f in analyse(METHOD.format(empty="pass"), "t.py", [BY_CODE["TEN401"]]).findings] == ["TEN401"]


def test_the_values_such_a_loop_keeps_must_stay_attached():
    """Why no fix is right there: the update backpropagates through the kept values, so detaching them (the
    fix TEN401 would offer) makes that backward raise, and as written the critic trains."""
    namespace: dict = {}
    exec(textwrap.dedent(ACTOR_CRITIC.format(empty="del critic.saved[:]")), namespace)
    critic = namespace["critic"]
    before = critic.weight.detach().clone()
    states, targets = [torch.ones(2), torch.zeros(2)], [torch.ones(1), torch.zeros(1)]
    namespace["train"](2, states, targets)
    assert not torch.equal(before, critic.weight) and critic.saved == []
    detached = [critic(s).detach() for s in states]
    with pytest.raises(RuntimeError, match="does not require grad"):
        torch.stack([(v - t).pow(2).sum() for v, t in zip(detached, targets)]).sum().backward()


SHOWN_TOGETHER = ("import numpy as np\nimport torch\narr = np.ones(5)\nt = torch.from_numpy(arr)",
                  "arr += 1\nprint(arr, t)\nt += 1\nprint(arr, t)",
                  "c = torch.tensor(arr)\narr += 1\nprint(arr, c)")


def test_a_write_whose_next_read_shows_both_sides_together_gets_no_fix():
    _, (finding,) = _notebook_findings("TEN103", *SHOWN_TOGETHER)
    assert finding.fix is None  # `print(arr, t)` right after the write: the lesson shows the sharing
    alone = SHOWN_TOGETHER[:1] + (SHOWN_TOGETHER[1].replace("print(arr, t)\nt += 1\nprint(arr, t)",
                                                            "t += 1\nprint(arr)"),) + SHOWN_TOGETHER[2:]
    _, (other,) = _notebook_findings("TEN103", *alone)
    assert other.fix is not None  # the array alone, then used: the copy is what the code needs


EPOCH = """
import torch

def train(model, loader, optimizer, criterion):
    for epoch in range(3):
        total = 0.0
        for x, y in loader:
            loss = criterion(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss
        mean = {use}
        print(epoch, mean)
"""


def test_an_accumulator_whose_arithmetic_gets_a_tensor_method_keeps_a_tensor():
    (finding,) = analyse(EPOCH.format(use="(total / len(loader)).detach().cpu().numpy()"), "t.py",
                         [BY_CODE["TEN401"]]).findings
    assert finding.fix.edits[0].text == "loss.detach()"  # `.item()` would make `(total / n).detach()` raise
    (plain,) = analyse(EPOCH.format(use="total / len(loader)"), "t.py", [BY_CODE["TEN401"]]).findings
    assert plain.fix.edits[0].text == "loss.item()"


def test_the_fixed_epoch_loop_runs_and_reports_the_same_mean():
    """With real torch: the fixed loop runs, and the mean it reports is the one the original computed."""
    source = textwrap.dedent(EPOCH.format(use="(total / len(loader)).detach().cpu().numpy()"))
    fixed = fix_source(source, "t.py", RULES, unsafe=True).fixed
    assert "total += loss.detach()" in fixed
    means = []
    for program in (source, fixed):
        namespace = {"print": lambda epoch, mean: means.append(float(mean))}
        exec(program, namespace)
        torch.manual_seed(0)
        model = torch.nn.Linear(2, 1)
        loader = [(torch.randn(4, 2), torch.randn(4, 1)) for _ in range(3)]
        namespace["train"](model, loader, torch.optim.SGD(model.parameters(), lr=0.1), torch.nn.MSELoss())
    assert len(means) == 6 and means[:3] == pytest.approx(means[3:])
