"""Statement shapes the analysis normalises: a sum that holds its accumulator, a per-step container entry,
a chain of in-place calls, a conversion after an in-place write, a state_dict() kept in a container entry.
Units of each fact, then end-to-end snippets with look-alikes that must stay quiet."""
from __future__ import annotations

import ast

import pytest

from tests.support.analysis_tools import context_at
from tests.support.rule_tools import codes
from flake8_tensorcopy.analysis import accumulators, kept, state_dicts
from flake8_tensorcopy.analysis.inplace import chain_written, written


def statement(text: str) -> ast.stmt:
    return ast.parse(text).body[0]


def expression(text: str) -> ast.expr:
    return ast.parse(text, mode="eval").body


# --- accumulation: one definition for `acc += v` and the sums that mean it ---

@pytest.mark.parametrize("text, acc, values", [
    ("total = total + loss", "total", ["loss"]),
    ("total = loss + total", "total", ["loss"]),
    ("total = total + w * loss", "total", ["w * loss"]),
    ("total = 0.5 * loss + total + extra", "total", ["0.5 * loss", "extra"]),
    ("avg = 0.9 * avg + 0.1 * loss", "avg", ["0.1 * loss"]),
    ("avg = avg / 2 + loss", "avg", ["loss"]),
    ("self.total = self.total + loss", "self.total", ["loss"]),
    ("stats[k] = v + stats[k]", "stats[k]", ["v"]),
    ("stats[k] = stats.get(k, 0) + v", "stats[k]", ["v"]),
])
def test_a_sum_holding_its_target_once_accumulates(text, acc, values):
    found = accumulators.accumulation(statement(text))
    assert (ast.unparse(found[0]), [ast.unparse(v) for v in found[1]]) == (acc, values)


@pytest.mark.parametrize("text", [
    "total = other + loss",          # another name
    "total = total + total",         # twice: a doubling, not an accumulation
    "total = total * loss",          # not a sum
    "total = total - loss",          # subtraction is not `+=`
    "avg = w * avg + loss",          # scaled by a value that is not a number
    "avg = 2 / avg + loss",          # the reciprocal is not the value
    "self.total = other.total + loss",
    "a = b = a + loss",              # two targets
])
def test_other_sums_do_not_accumulate(text):
    assert accumulators.accumulation(statement(text)) is None


def test_sum_terms_flatten_left_to_right():
    assert [ast.unparse(t) for t in accumulators.sum_terms(expression("a + w * b + (c + d)"))] == [
        "a", "w * b", "c", "d"]


@pytest.mark.parametrize("index, per_step", [
    ("step", True), ("step + 1", True), ("1 + step", True), ("step - 1", True), ("(epoch, step)", True),
    ('f"step{step}"', True), ("str(step)", True),
    ("step % 10", False),   # comes round again: a ring of entries
    ("other", False), ("step + offset", False), ('f"step{other}"', False), ("len(step)", False),
])
def test_a_per_step_key(index, per_step):
    assert accumulators.per_step_key(expression(index), frozenset({"step", "epoch"})) is per_step


LOOP = """
import torch.nn.functional as F

class Trainer:
    def __init__(self):
        self.log = {log_made}

    def fit(self, model, loader, opt):
        for step, (x, y) in enumerate(loader):
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            self.log[{index}] = loss  # <-
        return self.log
"""


@pytest.mark.parametrize("log_made, index, entry", [
    ("{}", "step", True), ("dict()", "step + 1", True), ("[]", '(0, step)', True),
    ("torch.zeros(100)", "step", False),   # a tensor's row, written in place: not a Python container
    ("{}", "step % 4", False),
])
def test_a_per_step_entry_of_a_self_container(log_made, index, entry):
    node, ctx = context_at(LOOP.format(log_made=log_made, index=index))
    assert (accumulators.per_step_entry(node, ctx) is not None) is entry


# --- in-place writes: a chain writes its first receiver, whatever follows it ---

@pytest.mark.parametrize("text, target", [
    ("x.sub_(m).div_(s)", "x"),
    ("x[0].mul_(a).add_(b)", "x"),
    ("x.clamp_(0)[i] = v", "x"),
    ("x.float().add_(1)", "x.float()"),   # the cast's result, which may be a copy
    ("x.add(1)", None),
])
def test_an_in_place_chain_writes_its_receiver(text, target):
    stmt = statement(text)
    node = stmt if isinstance(stmt, ast.Assign) else stmt.value
    found = written(node)
    assert (ast.unparse(found) if found is not None else None) == target


@pytest.mark.parametrize("text, target", [
    ("x.data.normal_(0, 1).to(device)", "x.data"),
    ("u.sub_(m).div_(s).float()", "u"),
    ("x.add_(1).float().mul_(2)", "x"),   # the first write reaches x; the later one a cast's result
    ("x.clone().normal_()", "x.clone()"),
    ("x.to(device).float()", None),
])
def test_a_conversion_after_an_in_place_write_sees_it(text, target):
    found = chain_written(expression(text))
    assert (ast.unparse(found) if found is not None else None) == target


# --- state_dict() snapshots kept in a container entry ---

SNAPSHOT = """
import copy

def fit(model, loader):
    ckpts, best = [], {{}}
    for epoch in range(3):
        {line}  # <-
    return ckpts, best
"""


@pytest.mark.parametrize("line, key, entry, per_step", [
    ("best = model.state_dict()", "best", False, False),
    ('best["model"] = model.state_dict()', "best", True, False),
    ("best[epoch] = model.state_dict()", "best", True, True),
    ("ckpts.append(model.state_dict())", "ckpts", True, True),
    ('best = {"model": model.state_dict(), "epoch": epoch}', "best", True, False),
    ('ckpts.append(("m", [model.state_dict()]))', "ckpts", True, True),
    ("score, best = 0.5, model.state_dict()", "best", False, False),   # element by element
    ("best = last = model.state_dict()", "best", False, False),        # each target (the first here)
])
def test_a_snapshot_kept_in_an_entry(line, key, entry, per_step):
    node, ctx = context_at(SNAPSHOT.format(line=line))
    found = state_dicts.kept_snapshots(node, ctx)[0]
    assert (found.key, found.entry, found.per_step, ast.unparse(found.value)) == (
        key, entry, per_step, "model.state_dict()")


def test_each_target_of_a_chained_assignment_keeps_the_snapshot():
    node, ctx = context_at(SNAPSHOT.format(line="best = ckpts[-1] = model.state_dict()"))
    assert [(k.key, k.entry) for k in state_dicts.kept_snapshots(node, ctx)] == [("best", False), ("ckpts", True)]


@pytest.mark.parametrize("line", [
    "ckpts.append(copy.deepcopy(model.state_dict()))",
    'best["model"] = {k: v.clone() for k, v in model.state_dict().items()}',
    'best["opt"] = opt.state_dict()',
    "ckpts.append(model)",
    "print(model.state_dict())",
    "best, score = copy.deepcopy(model.state_dict()), model.state_dict",
    "best, score = model.state_dict().items()",   # unpacked, not paired: no element is the snapshot
])
def test_copies_and_other_values_are_no_kept_snapshot(line):
    node, ctx = context_at(SNAPSHOT.format(line=line))
    assert state_dicts.kept_snapshots(node, ctx) == []


# --- end to end ---

def test_sums_and_entries_across_a_training_loop():
    source = """
    import torch.nn.functional as F

    def train(model, loader, opt, w):
        a, b, avg, steps, log, ring = 0, 0, 0, 0, {}, {}
        for step, (x, y) in enumerate(loader):
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            a = loss + a
            b = b + w * loss
            avg = 0.9 * avg + 0.1 * loss
            steps = steps + 1
            log[step + 1] = loss
            ring[step % 4] = loss
            a2 = loss + a
        return a, b, avg, steps, log, ring, a2
    """
    assert codes(source) == [(11, "TEN401"), (12, "TEN401"), (13, "TEN401"), (15, "TEN401")]


def test_sums_outside_training_and_of_detached_values_stay_quiet():
    source = """
    import torch

    def forward(layers, h):
        for layer in layers:
            h = h + layer(h)
        return h

    def train(model, loader, opt):
        total = 0.0
        for x, y in loader:
            loss = model(x, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total = loss.item() + total
            total = total + loss.detach()
        return total
    """
    assert codes(source) == []


def test_an_in_place_chain_through_a_numpy_alias():
    source = """
    import numpy as np
    import torch

    def normalise(images, idx, mean, std):
        img = torch.from_numpy(images[idx])
        img.sub_(mean).div_(std)
        m = images.mean()
        return img

    def copied(images, idx, mean, std):
        img = torch.from_numpy(images[idx]).clone()
        img.sub_(mean).div_(std)
        m = images.mean()
        return img

    def cast(images, idx, mean, std):
        img = torch.from_numpy(images[idx])
        img.float().sub_(mean).div_(std)
        m = images.mean()
        return img
    """
    assert codes(source) == [(7, "TEN103")]


def test_a_conversion_after_a_data_write_still_overwrites_the_source():
    source = """
    import torch

    def noisy(action, device):
        noise = action.data.normal_(0, 0.1).to(device)
        return action + noise

    def fresh(action, device):
        noise = action.data.clone().normal_(0, 0.1).to(device)
        other = torch.randn_like(action).mul_(0.1).to(device)
        return action + noise + other

    def caller():
        a = torch.zeros(3)
        noisy(a, "cpu")
        fresh(a, "cpu")
    """
    assert codes(source) == [(5, "TEN102")]


def test_snapshots_kept_in_entries_of_a_training_loop():
    source = """
    import copy
    import torch

    def fit(model, opt, loader, evaluate):
        best, ckpts, copies, score = {}, [], [], 0
        for epoch in range(10):
            for x in loader:
                loss = model(x).sum()
                opt.zero_grad()
                loss.backward()
                opt.step()
            ckpts.append(model.state_dict())
            copies.append(copy.deepcopy(model.state_dict()))
            s = evaluate(model)
            if s > score:
                best["model"] = model.state_dict()
                best["epoch"] = epoch
        model.load_state_dict(best["model"])
        return ckpts, copies
    """
    assert codes(source) == [(13, "TEN301"), (17, "TEN301")]


def test_a_snapshot_paired_in_a_tuple_assignment():
    source = """
    def fit(model, opt, loader, evaluate):
        best_score, best_state = 0.0, None
        for epoch in range(10):
            for x in loader:
                loss = model(x).sum()
                opt.zero_grad()
                loss.backward()
                opt.step()
            score = evaluate(model)
            if score > best_score:
                best_score, best_state = score, model.state_dict()
            last_score, last_state = score, model.state_dict()
        model.load_state_dict(best_state)
        return last_state
    """
    assert codes(source) == [(12, "TEN301")]  # not `last_state`: named for the latest weights


@pytest.mark.parametrize("store, expected", [
    ("prev = total", ["total"]),
    ("prev, n = total, 0", ["total"]),          # element by element
    ("prev = hist[-1] = total", ["total", "total"]),
    ("prev, n = total", []),                    # unpacked rows are not the tensor itself
])
def test_stores_by_reference_pair_targets_with_values(store, expected):
    tree = ast.parse(f"def f(total, hist):\n    {store}\n")
    found = kept.stores(None, tree)
    assert sorted(ast.unparse(s.value) for s in found.get("total", [])) == expected


def test_snapshots_in_entries_read_before_training_stay_quiet():
    source = """
    import torch

    def fit(model, opt, loader):
        ckpt = {"model": model.state_dict(), "epoch": 0}
        torch.save(ckpt, "init.pt")
        saved = []
        saved.append(model.state_dict())
        torch.save(saved, "s.pt")
        for x in loader:
            loss = model(x).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
        state = {}
        state["model"] = model.state_dict()
        torch.save({"model": model.state_dict()}, "last.pt")
        return state
    """
    assert codes(source) == []


@pytest.mark.parametrize("text, name", [
    ("x.copy_(y).add_(e)", "x"),    # a fill, then a write that changes the value
    ("x.add_(a).mul_(b)", "x"),
    ("x.copy_(y)", None),           # a fill alone
    ("x.float().add_(e)", None),    # the cast's result, not x
])
def test_a_chained_write_changes_the_value_of_its_first_receiver(text, name):
    assert kept.value_write(expression(text)) == name
