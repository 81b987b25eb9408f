"""TEN401 claim: a graph-attached loss accumulated across a loop keeps every step's graph reachable
(activations alive when nothing backpropagated through them, a growing node chain after per-step
backward); the fixed accumulators (.item() / .detach()) keep neither."""
import gc


from fixture_tools import cases, load


def graph_nodes(tensor) -> int:
    """Autograd nodes reachable from a tensor's grad_fn."""
    seen, stack = set(), [getattr(tensor, "grad_fn", None)]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        stack.extend(next_node for next_node, _ in node.next_functions)
    return len(seen)


def alive(refs) -> int:
    gc.collect()
    return sum(r() is not None for r in refs)


def assert_hazard(bad: dict) -> None:
    short, long = bad["case_running_total"](steps=2), bad["case_running_total"](steps=6)
    assert graph_nodes(long) > graph_nodes(short) > 0  # the chain grows with every step
    kept, refs = bad["case_validation_history"](steps=4)
    assert alive(refs) == 4  # every step's held-out activations are still reachable
    del kept
    assert alive(refs) == 0  # ... through the accumulated losses, and nothing else
    assert graph_nodes(bad["case_stats_by_key"](steps=4)["loss"]) > graph_nodes(
        bad["case_stats_by_key"](steps=1)["loss"])
    assert all(entry["out"].grad_fn is not None for entry in bad["case_dict_in_history"]())
    assert all(kept.grad_fn is not None for kept in bad["case_clone_history"]())


def assert_fixed(fixed: dict) -> None:
    total = fixed["case_running_total"](steps=6)
    assert isinstance(total, float)
    kept, refs = fixed["case_validation_history"](steps=4)
    assert alive(refs) == 0 and all(v.grad_fn is None for v in kept)
    assert isinstance(fixed["case_stats_by_key"](steps=4)["loss"], float)
    assert all(entry["out"].grad_fn is None for entry in fixed["case_dict_in_history"]())
    assert all(kept.grad_fn is None for kept in fixed["case_clone_history"]())


def test_bad_cases_show_the_hazard():
    assert_hazard(cases(load("TEN401", "bad")))


def test_fixed_cases_are_safe():
    bad, fixed = cases(load("TEN401", "bad")), cases(load("TEN401", "fixed"))
    assert sorted(fixed) == sorted(bad)
    assert_fixed(fixed)
