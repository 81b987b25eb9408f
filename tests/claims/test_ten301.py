"""TEN301 claim: a state_dict() snapshot (or a shallow copy of it) follows the live weights after an
optimizer step; copy.deepcopy / {k: v.detach().clone()} snapshots keep the old values."""
import torch

from fixture_tools import cases, load

SNAPSHOTS = ("case_copy_method", "case_copy_copy", "case_ordered_dict", "case_detached_entries", "case_cpu_entries",
             "case_through_name")


def initial_weights():
    torch.manual_seed(0)
    return torch.nn.Linear(4, 3).state_dict()["weight"].clone()


def weights_after_one_step():
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 3)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    model(torch.ones(8, 4)).pow(2).mean().backward()
    optimizer.step()
    return model.weight.detach().clone()


def assert_hazard(bad: dict) -> None:
    start = initial_weights()
    for name in SNAPSHOTS + ("case_best_weights", "case_attribute"):
        model, snapshot = bad[name]()
        assert not torch.equal(model.weight, start), name  # the model did train
        assert torch.equal(snapshot["weight"], model.weight), name  # and the snapshot moved with it
    model, initial = bad["case_initial_weights"]()
    assert not torch.equal(model.weight, start)  # the reset restored nothing


def assert_fixed(fixed: dict) -> None:
    start = initial_weights()
    for name in SNAPSHOTS + ("case_initial_weights",):
        model, snapshot = fixed[name]()
        assert torch.equal(snapshot["weight"], start), name
    model, initial = fixed["case_initial_weights"]()
    assert torch.equal(model.weight, start)  # the reset restored the initial weights
    first_epoch = weights_after_one_step()
    for name in ("case_best_weights", "case_attribute"):
        model, best = fixed[name]()
        assert torch.equal(best["weight"], first_epoch), name  # the best epoch (the first) was kept


def test_bad_cases_show_the_hazard():
    assert_hazard(cases(load("TEN301", "bad")))


def test_fixed_cases_are_safe():
    assert_fixed(cases(load("TEN301", "fixed")))
