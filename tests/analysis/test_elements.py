"""Elements (analysis/elements.py and the value model that judges them): a comprehension's variables (its own
scope), what a `for` loop binds from the items of its iterable (a parameter, a state_dict's tensor, an entry
of a display or of what code appends, a tensor's rows), the tuple a package module's forward returns when it
is unpacked, and `sum()` of values. Every rule that asks for a value's kind, attachment or proof sees them;
the end-to-end snippets show one finding per rule that gains, beside its look-alike."""
from __future__ import annotations

import ast
import textwrap

import pytest

from flake8_tensorcopy.analysis import elements, evidence, proven
from flake8_tensorcopy.analysis.facts import target_path

from tests.support.analysis_tools import context_at
from tests.support.rule_tools import findings


def _name(node: ast.AST, name: str, nth: int = 0) -> ast.Name:
    """The `nth` read of `name` under `node`, in source order."""
    reads = sorted((n for n in ast.walk(node) if isinstance(n, ast.Name) and n.id == name
                    and isinstance(n.ctx, ast.Load)), key=lambda n: (n.lineno, n.col_offset))
    return reads[nth]


def _at(source: str, name: str, nth: int = 0):
    node, ctx = context_at(source)
    return _name(node, name, nth), ctx


@pytest.mark.parametrize("target, name, path", [
    ("p", "p", ()), ("n, p", "p", (1,)), ("i, (a, b)", "b", (1, 1)), ("n, p", "q", None), ("a, *rest", "a", None),
])
def test_where_a_name_sits_in_an_unpacking_target(target, name, path):
    assert target_path(ast.parse(f"for {target} in x: pass").body[0].target, name) == path


PARAMS = """
    import copy
    import torch

    def f(model):
        p = torch.zeros(3)
        kept = {n: copy.copy(p) for n, p in model.named_parameters()}  # <-
        return kept
"""


def test_a_comprehension_variable_is_an_element_of_its_iterable_not_the_outer_name():
    p, ctx = _at(PARAMS, "p")
    assert evidence.kind(p, ctx) == evidence.PARAM  # the outer `p = torch.zeros(3)` is another variable
    assert evidence.attached(p, ctx)
    assert proven.tensor(p, ctx)
    n, ctx = _at(PARAMS, "n")
    assert evidence.kind(n, ctx) == evidence.SCALAR and not evidence.attached(n, ctx)


def test_a_name_read_after_the_comprehension_is_the_outer_one():
    source = PARAMS.replace("        return kept", "        return p.sum()  # <-")
    source = source.replace("  # <-\n        return p", "\n        return p")
    p, ctx = _at(source, "p")
    assert evidence.kind(p, ctx) == evidence.TENSOR and not evidence.attached(p, ctx)


@pytest.mark.parametrize("loop, name, expected, graph", [
    ("for v in sd.values():", "v", evidence.TENSOR, False),  # a state_dict maps names to tensors
    ("for k, v in sd.items():", "v", evidence.TENSOR, False),
    ("for v in [a, b]:", "v", evidence.TENSOR, True),  # entries of a display
    ("for i, v in enumerate([a, b]):", "v", evidence.TENSOR, True),
    ("for i, v in enumerate([a, b]):", "i", evidence.SCALAR, False),
    ("for u, v in zip(rows, [a, b]):", "v", evidence.TENSOR, True),
    ("for v in kept:", "v", evidence.TENSOR, True),  # what the function appends
    ("for v in a:", "v", evidence.TENSOR, True),  # the rows of a tensor
    ("for v in range(3):", "v", evidence.SCALAR, False),
    ("for v in names:", "v", None, False),  # a parameter nothing says anything of
])
def test_a_loop_variable_is_an_element_of_what_it_iterates(loop, name, expected, graph):
    source = f"""
        import torch

        def f(rows, names):
            model = torch.nn.Linear(2, 2)
            sd = model.state_dict()
            a = model(torch.ones(2))
            b = a * 2
            kept = []
            kept.append(a)
            kept.append(b)
            {loop}
                print({name})  # <-
    """
    node, ctx = _at(source, name)
    assert evidence.kind(node, ctx) == expected
    assert evidence.attached(node, ctx) is graph


def test_a_container_changed_otherwise_says_nothing_of_its_entries():
    source = """
        import torch

        def f(more):
            kept = []
            kept.append(torch.ones(2))
            kept.extend(more)
            for v in kept:
                print(v)  # <-
    """
    node, ctx = _at(source, "v")
    assert evidence.kind(node, ctx) is None


TWO_HEADS = """
    import torch
    from torch import nn

    class TwoHead(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = nn.Linear(4, 1), nn.LSTM(4, 1)

        def forward(self, x):
            return self.a(x), self.b(x)

    def f(x):
        model = TwoHead()
        pa, pb = model(x)
        print(pa, pb)  # <-
"""


def test_a_module_call_unpacks_into_what_its_forward_returns():
    pa, ctx = _at(TWO_HEADS, "pa")
    assert evidence.kind(pa, ctx) == evidence.TENSOR and evidence.attached(pa, ctx)
    pb, _ = _at(TWO_HEADS, "pb")
    assert evidence.kind(pb, ctx) is None  # an LSTM returns a tuple: not a tensor
    assert evidence.attached(pb, ctx)  # but it keeps the graph


def test_sum_of_values_is_what_they_are():
    source = """
        import torch

        def f(xs, counts):
            model = torch.nn.Linear(2, 2)
            losses = [model(x).mean() for x in xs]
            total = sum(losses)
            steps = sum(c for c in range(3))
            print(total, steps, sum(counts))  # <-
    """
    node, ctx = context_at(source)
    total, steps, unknown = node.value.args
    assert evidence.kind(total, ctx) == evidence.TENSOR and evidence.attached(total, ctx)
    assert evidence.kind(steps, ctx) == evidence.SCALAR and not evidence.attached(steps, ctx)
    assert evidence.kind(unknown, ctx) is None


def test_items_are_none_where_nothing_is_known():
    node, ctx = context_at("""
        def f(d):
            print(d)  # <-
    """)
    assert elements.items(ast.parse("d.keys()").body[0].value, (), ctx, ctx.pos) is None
    assert elements.items(ast.parse("[*d]").body[0].value, (), ctx, ctx.pos) is None


ENTRIES_READ = """
    import torch

    def f(batches, keys, n):
        sums = {}
        for x, key in batches:
            sums[key] = torch.ones(2) * x
        table = {k: {"mean": torch.zeros(2), "count": 1} for k in keys}
        mixed = {"w": torch.ones(3), "n": 3}
        mixed["steps"] = n
        pair = (torch.ones(1), 0.5)
        kept = []
        kept.append(torch.ones(1))
        print(sums[n], table[n]["mean"], table[n]["count"], mixed["w"], mixed["n"], mixed["steps"],  # <-
              mixed[n], pair[0], pair[1], kept[0], kept[1:])
"""


@pytest.mark.parametrize("index, tensor", [
    (0, True),  # an entry written `sums[key] = t`
    (1, True), (2, False),  # an entry of a dict of dicts, by a constant key: the tensor, not the count
    (3, True), (4, False), (5, False),  # a display's entry of that key; one written later under its own key
    (6, False),  # a key nobody spells: any entry, a tensor or a number
    (7, True), (8, False),  # a tuple display's element by index
    (9, True), (10, False),  # an appended entry; a slice is a list, not an entry
])
def test_an_entry_read_by_key_is_what_was_stored_under_it(index, tensor):
    node, ctx = context_at(ENTRIES_READ)
    read = node.value.args[index]
    assert proven.tensor(read, ctx) is tensor
    assert (evidence.kind(read, ctx) == evidence.TENSOR) is tensor


def test_an_entry_read_is_attached_when_every_entry_it_may_be_is():
    node, ctx = context_at("""
        import torch

        def f(x, n):
            model = torch.nn.Linear(2, 2)
            out = {"loss": model(x).sum(), "value": model(x).detach()}
            print(out["loss"], out["value"], out[n])  # <-
    """)
    loss, value, either = node.value.args
    assert evidence.attached(loss, ctx) and not evidence.attached(value, ctx) and not evidence.attached(either, ctx)


def test_an_entry_of_a_dict_a_forward_returns_is_what_it_stores_under_that_key():
    """Review 16: `res["scores"]` of a model whose forward returns `{"loss": ..., "scores": {...floats}}`
    holds no graph, though `res["loss"]` is backpropagated; the entries are judged in the forward."""
    source = """
        import torch

        class Scorer(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = torch.nn.Linear(4, 1)

            def forward(self, xb):
                out = self.lin(xb)
                return {"loss": out.pow(2).mean(), "scores": {"mean": float(out.mean())}}

        def run(batches, opt):
            net, log = Scorer(), []
            for xb in batches:
                res = net(xb)
                res["loss"].backward()
                opt.step()
                log.append({"loss": res["loss"], "scores": res["scores"]})  # <-
    """
    node, ctx = context_at(source)
    loss, scores = node.value.args[0].values
    assert evidence.attached(loss, ctx) and proven.tensor(loss, ctx)
    assert not evidence.attached(scores, ctx) and evidence.kind(scores, ctx) == evidence.CONTAINER
    assert [(f.line, f.code) for f in findings(source)] == [(19, "TEN401")]  # the loss entry, not the scores


# ---- end to end: each rule that gains, with a look-alike it stays quiet on ---------------------------------

def _codes(source: str) -> list[tuple[int, str]]:
    return sorted((f.line, f.code) for f in findings(source))


def test_ten202_copy_copy_of_each_parameter_in_a_comprehension():
    found = _codes("""
        import copy

        def f(model, cfgs):
            init = {n: copy.copy(p) for n, p in model.named_parameters()}
            plain = [copy.copy(c) for c in cfgs]
            return init, plain
    """)
    assert found == [(5, "TEN202")]


@pytest.mark.parametrize("use, found", [
    ("loss = loss + sum(((p - anchor[n]) ** 2).sum() for n, p in model.named_parameters())", True),
    ("print([(p == anchor[n]).all() for n, p in model.named_parameters()])", False),  # only compared
])
def test_ten203_clones_of_parameters_in_a_comprehension_fed_back(use, found):
    source = f"""
        import torch

        def train(model, loader, opt):
            anchor = {{n: p.clone() for n, p in model.named_parameters()}}
            for x, y in loader:
                loss = model(x).mean()
                {use}
                opt.zero_grad()
                loss.backward()
                opt.step()
    """
    assert ((5, "TEN203") in _codes(source)) is found


def test_ten401_a_loss_from_an_unpacked_module_call_kept_across_steps():
    source = textwrap.dedent(TWO_HEADS).replace("""def f(x):
    model = TwoHead()
    pa, pb = model(x)
    print(pa, pb)  # <-""", """def train(loader):
    model = TwoHead()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    history = []
    for x, y in loader:
        pa, pb = model(x)
        la = torch.nn.functional.mse_loss(pa, y)
        opt.zero_grad()
        la.backward()
        opt.step()
        history.append(la{detach})
    return history""")
    line = 1 + source.splitlines().index("        history.append(la{detach})")
    assert (line, "TEN401") in _codes(source.format(detach=""))
    assert (line, "TEN401") not in _codes(source.format(detach=".item()"))


def test_ten104_a_discarded_move_of_an_unpacked_module_output():
    source = textwrap.dedent(TWO_HEADS).replace("print(pa, pb)  # <-", "pa.to('cpu')\n    return pa")
    assert (1 + source.splitlines().index("    pa.to('cpu')"), "TEN104") in _codes(source)


def test_ten104_a_discarded_move_of_each_tensor_a_loop_iterates():
    source = """
        import torch

        def f(xs, cfgs):
            batch = [torch.ones(2), torch.zeros(2)]
            for t in batch:
                t.to("cuda")
            for c in cfgs:
                c.to("cuda")
            return batch
    """
    assert _codes(source) == [(7, "TEN104")]
