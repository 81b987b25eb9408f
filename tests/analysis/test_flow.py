"""Reaching bindings from the control-flow graph (analysis/flow.py): exact answers on small programs, and,
on generated programs that are run, every binding a read really saw is one the graph says may reach it."""
from __future__ import annotations

import ast
import textwrap

from hypothesis import given, strategies as st

from flake8_tensorcopy.analysis.facts import FileFacts


def reaching_values(source: str) -> dict[int, set]:
    """For each `seen(N, x)` read: the values of the bindings of `x` the graph says may reach it (each
    binding of the programs below assigns a distinct constant; a parameter is 'arg')."""
    source = textwrap.dedent(source)
    tree = ast.parse(source)
    facts = FileFacts(tree, source, (ast.Call,), None)
    found = {}
    for node, frame in facts.nodes:
        if isinstance(node.func, ast.Name) and node.func.id == "seen":
            read = node.args[1]
            bindings = frame.scope.reaching(read.id, (read.lineno, read.col_offset))
            found[node.args[0].value] = {
                "arg" if b.value is None else b.value.value for b in bindings
            }
    return found


def test_a_binding_later_in_a_loop_reaches_its_top():
    assert reaching_values("""
        def f(data):
            prev = 0
            for x in data:
                seen(1, prev)
                prev = 1
            seen(2, prev)
    """) == {1: {0, 1}, 2: {0, 1}}


def test_if_and_else_bindings_do_not_see_each_other():
    assert reaching_values("""
        def f(c):
            if c:
                x = 1
                seen(1, x)
            else:
                seen(2, x)
                x = 2
            seen(3, x)
    """) == {1: {1}, 2: set(), 3: {1, 2}}


def test_return_break_and_continue_end_their_paths():
    assert reaching_values("""
        def f(c, data):
            x = 0
            if c:
                x = 1
                return x
            seen(1, x)
            while True:
                x = 2
                if c:
                    break
                x = 3
                if c:
                    continue
                x = 4
            seen(2, x)
    """) == {1: {0}, 2: {2}}


def test_a_handler_sees_bindings_made_before_any_statement_of_the_try_body():
    assert reaching_values("""
        def f(g):
            x = 0
            try:
                x = 1
                g()
                x = 2
            except ValueError:
                seen(1, x)
                x = 3
            else:
                seen(2, x)
            finally:
                seen(3, x)
            seen(4, x)
    """) == {1: {0, 1, 2}, 2: {2}, 3: {0, 1, 2, 3}, 4: {0, 1, 2, 3}}


def test_parameters_walrus_and_augmented_assignments():
    assert reaching_values("""
        def f(x, y):
            seen(1, x)
            x += 1
            seen(2, x)
            if (y := 5) and seen(3, y):
                seen(4, y)
    """) == {1: {"arg"}, 2: {"arg"}, 3: {5}, 4: {5}}


def test_a_for_else_runs_after_the_loop_ends_without_break():
    assert reaching_values("""
        def f(data):
            x = 0
            for item in data:
                x = 1
                if item:
                    x = 2
                    break
            else:
                seen(1, x)
            seen(2, x)
    """) == {1: {0, 1}, 2: {0, 1, 2}}


# ---- generated programs, run: the graph never misses a binding that a run saw -------------------------
NAMES = ("a", "b")


def programs():
    leaf = st.one_of(
        st.tuples(st.just("bind"), st.sampled_from(NAMES)),
        st.tuples(st.just("read"), st.sampled_from(NAMES)),
        st.tuples(st.just("jump"), st.sampled_from(["break", "continue", "return", "raise"])),
    )
    return st.recursive(
        st.lists(leaf, min_size=1, max_size=4),
        lambda inner: st.lists(st.one_of(
            leaf,
            st.tuples(st.just("if"), inner, inner),
            st.tuples(st.just("while"), inner),
            st.tuples(st.just("for"), inner, inner),
            st.tuples(st.just("try"), inner, inner, inner),
        ), min_size=1, max_size=4),
        max_leaves=14,
    )


def render(block, depth, counter, in_loop) -> list[str]:
    pad = "    " * depth

    def body(inner, loop=in_loop):  # each body ends in `pass`, so an empty one still parses
        return render(inner, depth + 1, counter, loop) + ["    " * (depth + 1) + "pass"]

    lines = []
    for stmt in block:
        kind = stmt[0]
        counter[0] += 1
        n = counter[0]
        if kind == "bind":
            lines.append(f"{pad}{stmt[1]} = {n}")
        elif kind == "read":
            lines.append(f"{pad}seen({n}, {stmt[1]})")
        elif kind == "jump":
            word = stmt[1]
            if word in ("break", "continue") and not in_loop:
                word = "pass"
            lines.append(f"{pad}if choose():\n{pad}    {'raise Stop' if word == 'raise' else word}")
        elif kind == "if":
            lines += [f"{pad}if choose():"] + body(stmt[1]) + [f"{pad}else:"] + body(stmt[2])
        elif kind == "while":
            lines += [f"{pad}while choose():"] + body(stmt[1], True)
        elif kind == "for":
            lines += [f"{pad}for _ in steps():"] + body(stmt[1], True) + [f"{pad}else:"] + body(stmt[2])
        elif kind == "try":
            lines += [f"{pad}try:"] + body(stmt[1]) + [f"{pad}except Stop:"] + body(stmt[2])
            lines += [f"{pad}finally:"] + body(stmt[3])
    return lines


class Stop(Exception):
    pass


@given(programs(), st.lists(st.lists(st.booleans(), min_size=1, max_size=40), min_size=1, max_size=6))
def test_every_binding_a_run_sees_is_one_the_graph_says_may_reach(block, runs):
    body = render(block, 1, [0], False)
    source = "def f(a, b):\n" + "\n".join(body) + "\n    pass\n"
    static = reaching_values(source)
    code = compile(source, "<generated>", "exec")
    for choices in runs:
        observed = set()
        flips = iter(choices * 50)

        def choose():
            return next(flips, False)

        def steps():
            while choose():
                yield None

        def seen(n, value):
            observed.add((n, value))
            return True

        space = {"choose": choose, "steps": steps, "seen": seen, "Stop": Stop}
        exec(code, space)
        try:
            space["f"]("arg", "arg")
        except Stop:
            pass
        for n, value in observed:
            assert value in static[n], (source, n, value, static[n])


# ---- reads later (liveness) -----------------------------------------------------------------------
def read_later(source: str) -> dict[int, bool]:
    """For each `mark(N)` statement: whether `x` is read on some path after it before being rebound."""
    source = textwrap.dedent(source)
    tree = ast.parse(source)
    facts = FileFacts(tree, source, (ast.Call,), None)
    return {node.args[0].value: frame.scope.read_later("x", (node.end_lineno, node.end_col_offset))
            for node, frame in facts.nodes if isinstance(node.func, ast.Name) and node.func.id == "mark"}


def test_a_read_at_the_top_of_a_loop_is_later_for_a_write_at_its_bottom():
    assert read_later("""
        def f(data):
            x = 0
            for item in data:
                print(x)
                mark(1)
            mark(2)
    """) == {1: True, 2: False}


def test_a_rebinding_on_every_path_ends_the_life_a_rebinding_on_some_paths_does_not():
    assert read_later("""
        def f(c):
            x = 0
            mark(1)
            if c:
                x = 1
            print(x)
            mark(2)
            x = 2
            print(x)
    """) == {1: True, 2: False}


def test_a_loop_that_rebinds_first_on_every_pass_does_not_read_the_old_value():
    assert read_later("""
        def f(data, c):
            x = 0
            for item in data:
                mark(1)
                x = item
                print(x)
            for item in data:
                mark(2)
                if c:
                    x = item
                print(x)
    """) == {1: False, 2: True}


# ---- grad mode ------------------------------------------------------------------------------------
def grad_off(source: str) -> dict[int, bool]:
    """For each `mark(N)` statement: whether grad is off there on every path."""
    source = textwrap.dedent(source)
    tree = ast.parse(source)
    facts = FileFacts(tree, source, (ast.Call,), None)
    return {node.args[0].value: frame.scope.grad_off_at((node.lineno, node.col_offset))
            for node, frame in facts.nodes if isinstance(node.func, ast.Name) and node.func.id == "mark"}


def test_grad_is_off_after_a_statement_that_turns_it_off_on_every_path():
    assert grad_off("""
        import torch

        def f(c, data):
            mark(1)
            torch.set_grad_enabled(False)
            mark(2)
            if c:
                torch.set_grad_enabled(True)
                mark(3)
            mark(4)
            for x in data:
                mark(5)
                torch.autograd.set_grad_enabled(False)
            mark(6)

        def g():
            mark(7)
    """) == {1: False, 2: True, 3: False, 4: False, 5: False, 6: False, 7: False}


def escapes(source: str) -> bool:
    """Whether a path from the `start()` statement of `f` leaves it without passing a `stop()` statement."""
    source = textwrap.dedent(source)
    facts = FileFacts(ast.parse(source), source, (ast.Call,), None)
    calls = {node.func.id: (node, frame) for node, frame in facts.nodes
             if isinstance(node.func, ast.Name) and node.func.id in ("start", "stop")}
    (start, frame), stops = calls["start"], [n for n, _ in facts.nodes
                                             if isinstance(n.func, ast.Name) and n.func.id == "stop"]
    return frame.scope.escapes((start.lineno, start.col_offset), [(n.lineno, n.col_offset) for n in stops])


def test_escapes_counts_returns_and_the_end_of_the_body_not_raises():
    assert escapes("""
        def f(flag):
            start()
            if flag:
                return 1
            stop()
    """)
    assert not escapes("""
        def f(flag):
            start()
            if flag:
                raise ValueError
            stop()
            return 1
    """)
    assert escapes("""
        def f(xs):
            for x in xs:
                start()
                if x:
                    stop()
    """)


def test_a_finally_runs_before_a_return_in_its_try():
    assert not escapes("""
        def f(flag):
            try:
                start()
                if flag:
                    return 1
                return 2
            finally:
                stop()
    """)
    assert escapes("""
        def f(flag):
            try:
                start()
                return 1
            except ValueError:
                stop()
    """)


def test_grad_off_asked_with_the_functions_own_frame_reads_the_with_blocks_around_the_point():
    """FileFacts.grad_off: a position whose frame is its function's (a call site found by name) still sees
    the `with torch.no_grad()` around it, and an `enable_grad()` inside turns it back on."""
    source = textwrap.dedent("""
        import torch

        def f(x):
            mark(1)
            with torch.no_grad():
                mark(2)
                with torch.enable_grad():
                    mark(3)
            mark(4)
    """)
    facts = FileFacts(ast.parse(source), source, (ast.Call,), None)
    fn = facts.tree.body[1]
    frame = facts.function_frame(fn)
    marks = [n for n in ast.walk(fn)
             if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "mark"]
    assert {m.args[0].value: facts.grad_off(frame, (m.lineno, m.col_offset)) for m in marks} == {
        1: False, 2: True, 3: False, 4: False}
