"""Work grows at most linearly with the input, for every rule and every front end, on worst-case-shaped
inputs (tests/scaling_cases.py) at two sizes (issue 15: an exponential evaluator, a quadratic regex, a
tree walk per call, a pyflakes run per fix, difflib over a notebook). Work is counted, never timed:
lines executed and built-in calls (WorkCounter), regex steps (regex_steps.Counting), memoised answers,
nodes walked. scripts/scaling.py times the same cases."""
from __future__ import annotations

import ast
import io
from contextlib import redirect_stderr, redirect_stdout

import pytest

from flake8_tensorcopy.cli import main as cli
from flake8_tensorcopy.engine import core as engine
from flake8_tensorcopy.pipeline.lint import Document, lint
from flake8_tensorcopy.rules.model import Trigger
from flake8_tensorcopy.adapters.flake8_plugin import Plugin
from flake8_tensorcopy.rules import BY_CODE, RULES
from tests.support.regex_steps import Counting
from tests.support.scaling_cases import SHAPES, CallCounter, WorkCounter, big_file, every_rule, hostile_text, \
    long_line, many_branches, many_functions, neighbours, nesting, notebook, one_scope, package, unit, write_files

pytestmark = pytest.mark.slow  # traced or step-counted runs at two sizes

LINEAR = 4 * 1.5  # 4x the input: at most 6x the work (quadratic would be 16x)


def branches(n: int) -> str:
    body = "".join(f"    if flags[{i}]:\n        img = img.flip(0)\n" for i in range(n))
    return ("import torch\n\n\ndef f(img, flags):\n    img = torch.zeros(3, 3) + img\n" + body
            + "    out = img.detach()\n    out.mul_(2)\n    return img\n")


def answers(source: str, monkeypatch) -> int:
    made = []

    from flake8_tensorcopy.analysis import facts

    class Recording(facts.FileFacts):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made.append(self)

    monkeypatch.setattr(facts, "FileFacts", Recording)  # the engine imports it when a file needs it
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


# ---- every rule, in every shape --------------------------------------------------------------------
def rule_work(code: str, shape, n: int, counting=WorkCounter) -> tuple[int, int]:
    """(work done, findings) analysing `shape` of the rule's example at size n with that rule alone; a rule
    the engine does not run (TEN905 reads the findings and comments after it) through the pipeline, with
    every rule on (it reports only codes the run enables); the findings counted are the rule's own. Work is
    lines traced by default, or calls (`counting=CallCounter`, cheap enough for 16n)."""
    rule = BY_CODE[code]
    source = shape(unit(rule), n)
    with counting() as counter:
        result = engine.analyse(source, "t.py", [rule]) if rule.nodes else lint(Document("t.py", source), RULES)
    assert result.errors == []
    return counter.steps, sum(f.code == code for f in result.findings)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("code", [r.code for r in RULES])
def test_every_rule_costs_linear_work_in_every_shape(code, shape):
    (small, found_small), (large, found_large) = rule_work(code, SHAPES[shape], 25), rule_work(code, SHAPES[shape], 100)
    assert 0 < found_small < found_large  # the input exercises the rule at both sizes
    assert large <= small * LINEAR


@pytest.mark.parametrize("code", [r.code for r in RULES])
def test_every_rule_costs_linear_work_in_deep_nesting(code):
    (small, found_small), (large, found_large) = rule_work(code, nesting, 10), rule_work(code, nesting, 40)
    assert found_small > 0 and found_large > 0
    assert large <= small * LINEAR


@pytest.mark.parametrize("shape", ["statements", "branches", "loop"])
@pytest.mark.parametrize("code", [r.code for r in RULES])
def test_every_rule_costs_linear_work_in_one_scope_up_to_16n(code, shape):
    """n, 4n and 16n copies of the example in one function: each copy rebinds the example's names and
    (TEN102, TEN203, TEN401) calls `.backward()` on one of them again. Red at 16n where a question about one
    binding looks at every binding or every backward of its name in the scope (n**2)."""
    (small, found_small), (middle, found_middle), (large, found_large) = (
        rule_work(code, SHAPES[shape], n, CallCounter) for n in (25, 100, 400))
    assert 0 < found_small < found_middle < found_large
    assert middle <= small * LINEAR and large <= small * 16 * 1.5


def regex_steps(trigger: Trigger, text: str) -> int:
    """Steps the trigger's regexes take to find every match in `text`, as `match_lines` does."""
    counting = Trigger()
    counting.patterns = tuple(Counting(p) for p in trigger.patterns)
    counting.line_start = Counting(trigger.line_start) if trigger.line_start is not None else None
    list(counting.finditer(text))
    return sum(p.steps for p in counting.patterns) + (counting.line_start.steps if counting.line_start else 0)


@pytest.mark.parametrize("which", ["trigger", "hot"])
@pytest.mark.parametrize("code", [r.code for r in RULES])
def test_every_trigger_regex_takes_linear_steps(code, which):
    """Issue 15: TEN901's trigger took 18 s on a 142 KB line; TEN104's line-start check and TEN901's
    HOT rescanned a line from each match (19 s and 39 s on one 100 KB line)."""
    trigger = getattr(BY_CODE[code], which)
    small, large = regex_steps(trigger, hostile_text(60)), regex_steps(trigger, hostile_text(240))
    assert large <= small * LINEAR


def test_the_regex_step_counter_finds_what_re_finds():
    """The counting matcher is only a measure if it matches as `re` does."""
    text = hostile_text(3) + "".join(every_rule(shape, 2, RULES) for shape in SHAPES.values())
    patterns = {p for r in RULES for t in (r.trigger, r.hot) for p in t.patterns + (t.line_start,) if p is not None}
    for pattern in patterns:
        counted = Counting(pattern)
        assert [m.span() for m in pattern.finditer(text)] == [(m.start(), m.end()) for m in counted.finditer(text)]
        assert counted.steps > 0


# ---- the front ends ---------------------------------------------------------------------------------
def plugin_work(source: str) -> tuple[int, int]:
    tree, lines = ast.parse(source), source.splitlines(keepends=True)
    with WorkCounter() as counter:
        reported = list(Plugin(tree, lines, "t.py").run())
    assert not any("TEN000" in r[2] for r in reported)
    return counter.steps, len(reported)


@pytest.mark.parametrize("shape", SHAPES)
def test_the_flake8_plugin_costs_linear_work(shape):
    """Every rule's example in one file: rules also meet each other's code (TEN203 once walked a
    function for each `target = ...` that TEN204's example writes)."""
    (small, found_small), (large, found_large) = (plugin_work(every_rule(SHAPES[shape], n, RULES)) for n in (10, 40))
    assert 0 < found_small < found_large
    assert large <= small * LINEAR


def cli_work(tmp_path, args: list[str], name: str, text: str) -> tuple[int, str]:
    """(work done, output) running the command on a file holding `text`, in this process."""
    path = tmp_path / name
    path.write_text(text)
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(io.StringIO()), WorkCounter() as counter:
        code = cli.main([*args, "-j", "1", str(path)])
    assert code == 1, out.getvalue()[-2000:]
    return counter.steps, out.getvalue()


CLI_CASES = {
    "check every rule": (["check", "--select", "TEN"], "t.py", lambda n: every_rule(SHAPES["statements"], n, RULES), 5),
    "check many branches (TEN101)": (["check"], "t.py", many_branches, 25),
    "check a long line (TEN901)": (["check", "--select", "TEN"], "t.py", long_line, 5_000),
    "fix every rule": (["fix", "--unsafe-fixes", "--select", "TEN"], "t.py",
                       lambda n: every_rule(SHAPES["statements"], n, RULES), 5),
    "fix a big file (TEN401)": (["fix", "--unsafe-fixes", "--diff"], "t.py", big_file, 25),
    "fix a notebook of repeated lines": (["fix", "--diff"], "t.ipynb", notebook, 25),
}


@pytest.mark.parametrize("case", CLI_CASES)
def test_check_and_fix_cost_linear_work(tmp_path, case):
    args, name, make, n = CLI_CASES[case]
    (small, out_small), (large, out_large) = (cli_work(tmp_path, args, name, make(size)) for size in (n, 4 * n))
    assert len(out_small) < len(out_large) or "long line" in case  # more to report at 4x
    assert large <= small * LINEAR


def split_characters(tmp_path, args: list[str], n: int, monkeypatch) -> int:
    """Characters of text the command splits into lines (text.split_lines, through pipeline.lint) on every
    rule's example, n times in one function each: work inside one regex split that no call count sees."""
    from flake8_tensorcopy.pipeline import lint as pipeline

    count = [0]
    real = pipeline.split_lines
    monkeypatch.setattr(pipeline, "split_lines", lambda text: count.__setitem__(0, count[0] + len(text)) or real(text))
    path = tmp_path / f"t{n}.py"
    path.write_text(every_rule(SHAPES["statements"], n, RULES))
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        assert cli.main([*args, "-j", "1", str(path)]) == 1
    monkeypatch.undo()
    return count[0]


@pytest.mark.parametrize("args", [["check", "--select", "TEN"], ["fix", "--unsafe-fixes", "--select", "TEN"]],
                         ids=["check", "fix"])
def test_check_and_fix_split_the_text_into_lines_linearly(tmp_path, args, monkeypatch):
    """A finding's source line is read from the text split into lines: split once per file, not once per
    finding (at b9972e9 fix splits the whole text once per applied and once per remaining finding, in
    cli/fix.py's `lines_of(doc)` inside its comprehensions: 1,451 file lengths at n = 80)."""
    small, middle, large = (split_characters(tmp_path, args, n, monkeypatch) for n in (5, 20, 80))
    assert middle <= small * LINEAR and large <= small * 16 * 1.5


def test_the_notebook_case_fixes_every_cell(tmp_path):
    """The notebook case has a fix in each of its repeated cells, so its diff exercises the cell split."""
    _, diff = cli_work(tmp_path, ["fix", "--diff"], "t.ipynb", notebook(4))
    assert sum(line.startswith("+") and "h.detach().clone()" in line for line in diff.splitlines()) == 4


# ---- the package: indexed once, whatever its size (issues 26 and 27) --------------------------------
def package_work(tmp_path, n: int, monkeypatch) -> tuple[int, int]:
    """(modules read + modules parsed, findings) checking every module of a package of n modules, in
    which each module's def is called by three others with tensors."""
    from flake8_tensorcopy.analysis import package_index, project

    monkeypatch.setattr(package_index, "parsed", package_index.Parsed(package_index.SOURCES))
    monkeypatch.setattr(package_index, "_packages", type(package_index._packages)())  # a fresh process's caches
    count = [0]
    for module, name in ((package_index, "read"), (project, "_parse")):
        monkeypatch.setattr(module, name, lambda file, real=getattr(module, name): count.__iadd__([1]) and real(file))
    root = tmp_path / str(n)
    files = package(n)
    write_files(root, files)
    rules = [r for r in RULES if r.default_on]
    found = 0
    for name in files:
        path = str(root / name)
        found += len(engine.analyse(open(path).read(), path, rules).findings)
    monkeypatch.undo()
    return len(count) - 1, found


def test_a_package_is_read_once_whatever_its_size(tmp_path, monkeypatch):
    """The search for callers read and regex-searched the whole package for each question (quadratic up to a
    cap of 500 modules, and past the cap it stopped looking): now each module is read once for the index,
    once more when parsed, and parsed once; every module's finding is found at every size."""
    (small, found_small), (middle, found_middle), (large, found_large) = (
        package_work(tmp_path, n, monkeypatch) for n in (10, 40, 160))
    assert (found_small, found_middle, found_large) == (10, 40, 160)
    assert large <= small * 16 * 1.1 and middle <= small * 4 * 1.1  # linear: 3 per module


def same_names_work(tmp_path, n: int, monkeypatch) -> tuple[int, int]:
    """(neighbours parsed, findings) checking every script of a folder of n scripts that all define the same
    20 functions (each with a finding) and call none of the others'."""
    from flake8_tensorcopy.analysis import package_index, project

    monkeypatch.setattr(package_index, "parsed", package_index.Parsed(package_index.SOURCES))
    monkeypatch.setattr(package_index, "_packages", type(package_index._packages)())
    parses = [0]
    monkeypatch.setattr(project, "_parse", lambda file, real=project._parse: parses.__iadd__([1]) and real(file))
    body = "".join(f"def f{i}(x):\n    y = x.exp()\n    z = y.detach()\n    z.add_(1)\n    return y\n\n"
                   for i in range(20))
    root = tmp_path / str(n)
    write_files(root, {f"m{i}.py": "import torch\n\n" + body for i in range(n)})
    rules = [r for r in RULES if r.default_on]
    found = 0
    for i in range(n):
        path = str(root / f"m{i}.py")
        found += len(engine.analyse(open(path).read(), path, rules).findings)
    monkeypatch.undo()
    return len(parses) - 1, found


def test_scripts_that_define_the_same_names_are_not_each_others_callers(tmp_path, monkeypatch):
    """A `def f0` is no use of `f0`: the search for callers of each script's defs read every other script
    (a flake8 run over 300 such scripts grew to 10 GB per worker); now no neighbour is parsed."""
    (small, found_small), (large, found_large) = (same_names_work(tmp_path, n, monkeypatch) for n in (5, 20))
    assert (found_small, found_large) == (5 * 20, 20 * 20)
    assert small == large == 0


def neighbour_work(tmp_path, n: int) -> tuple[int, int]:
    """(work, findings) checking a 5-line module beside 8 modules of n functions that call its def."""
    root = tmp_path / str(n)
    write_files(root, neighbours(n, count=8))
    path = str(root / "pkg" / "convert.py")
    with WorkCounter() as counter:
        result = engine.analyse(open(path).read(), path, [BY_CODE["TEN204"]])
    return counter.steps, len(result.findings)


def test_a_small_module_beside_big_callers_costs_linear_work(tmp_path):
    """Issue 26 item 6: a 5-line file beside 40 generated 0.9 MB modules that call its def took 4.8 GB."""
    (small, found_small), (middle, found_middle), (large, found_large) = (
        neighbour_work(tmp_path, n) for n in (10, 40, 160))
    assert found_small == found_middle == found_large == 1
    assert middle <= small * LINEAR and large <= small * 16 * 1.5


def test_the_collector_is_tuned_while_a_file_is_analysed_and_restored_after(monkeypatch):
    """flake8 leaves the cyclic collector at its defaults, most of the plugin's overhead."""
    import gc

    from flake8_tensorcopy.engine import collector

    seen = []
    real = engine._analyse
    monkeypatch.setattr(engine, "_analyse", lambda *args: seen.append(gc.get_threshold()) or real(*args))
    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        source = branches(3)
        assert len(list(Plugin(ast.parse(source), source.splitlines(keepends=True), "t.py").run())) == 1
        assert seen == [collector.THRESHOLD] and gc.get_threshold() == (700, 10, 10)
    finally:
        gc.set_threshold(*before)


def test_what_a_file_leaves_alive_is_frozen_and_cycles_among_it_are_collected_once_memory_doubles():
    """flake8's full collections walked the plugin's kept modules again and again; frozen, they are not
    walked, and a cycle left among them is freed by the full collection that runs once memory doubled."""
    import gc
    import sys
    import weakref

    from flake8_tensorcopy.engine import collector

    class Node:
        pass

    gc.unfreeze()
    try:
        with collector.tuned():
            pass
        kept = Node()  # alive after the file: frozen by the next settle
        cycle = Node()
        cycle.me, cycle.payload = cycle, [object() for _ in range(1000)]
        gone = weakref.ref(cycle)
        collector._settled[0] = sys.getallocatedblocks() * 4  # memory far from doubled: no full collection
        with collector.tuned():
            del cycle
        assert gc.get_freeze_count() > 0 and gone() is not None  # frozen: flake8's collections skip it
        collector._settled[0] = 0  # memory doubled: the full collection runs over the frozen objects
        collector.settle()
        assert gone() is None and kept is not None
        assert collector._settled[0] == pytest.approx(sys.getallocatedblocks(), rel=0.5)
    finally:
        gc.unfreeze()


def test_the_parsed_modules_kept_are_bounded_by_the_size_of_their_sources():
    from flake8_tensorcopy.analysis import package_index

    cache = package_index.Bounded(1000, len)
    for i in range(100):
        cache.get(i, lambda: "x" * 30)
        cache.get(0, lambda: "never made again")  # the most recently used stays
    assert cache.used == 990 and len(cache.entries) == 33 and cache.entries[0] == "x" * 30


def flow_memory(n: int) -> tuple[int, int]:
    """(peak bytes allocated, bindings found) building the flow graph of a function of n assignments and
    asking which bindings reach each of its reads."""
    import tracemalloc

    from flake8_tensorcopy.analysis.facts import FileFacts
    from flake8_tensorcopy.analysis.flow import Flow

    source = one_scope(n)
    facts = FileFacts(ast.parse(source), source, (), hot_lines=None)
    scope = facts.function_frame(facts.tree.body[1]).scope
    tracemalloc.start()
    try:
        flow = Flow(scope)
        found = sum(len(flow.reaching(name, p)) for name, reads in scope.loads.items() for p in reads)
        return tracemalloc.get_traced_memory()[1], found
    finally:
        tracemalloc.stop()


def test_memory_grows_linearly_with_the_assignments_in_one_scope():
    """Issue 26 item 5: a bit mask of every binding per statement took 3.4 GB for 100k lines (at 16x the
    assignments it took 65x the memory; now 17x)."""
    (small, found_small), (middle, found_middle), (large, found_large) = (flow_memory(n) for n in (500, 2000, 8000))
    assert (found_small, found_middle, found_large) == (502, 2002, 8002)  # one binding reaches each read
    assert middle <= small * LINEAR and large <= small * 16 * 1.5


# ---- n, 4n and 16n for the front ends and one file's size (issue 27), calls counted -------------------------
GROWTH = {
    "plugin, every rule's example": ("plugin", lambda n: every_rule(SHAPES["statements"], n, RULES), 4),
    "check, every rule's example": ("check", lambda n: every_rule(SHAPES["statements"], n, RULES), 4),
    "fix, every rule's example": ("fix", lambda n: every_rule(SHAPES["statements"], n, RULES), 4),
    "check, functions in one file": ("check", many_functions, 100),
    "check, assignments in one scope": ("check", one_scope, 250),  # one finding-free chain: the flow analysis
}


def front_end_calls(tmp_path, front_end: str, text: str) -> tuple[int, int]:
    """(calls made, findings reported) running one front end, in this process, on a file holding `text`."""
    if front_end == "plugin":
        tree, lines = ast.parse(text), text.splitlines(keepends=True)
        with CallCounter() as counter:
            reported = list(Plugin(tree, lines, "t.py").run())
        return counter.steps, len(reported)
    path = tmp_path / f"t{len(text)}.py"
    path.write_text(text)
    fix = ["fix", "--unsafe-fixes", "--diff", "--select", "TEN"]
    args = ["check", "--select", "TEN"] if front_end == "check" else fix
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(io.StringIO()), CallCounter() as counter:
        cli.main([*args, "-j", "1", "--no-cache", str(path)])
    return counter.steps, out.getvalue().count(": TEN")


@pytest.mark.parametrize("case", GROWTH)
def test_the_front_ends_cost_linear_work_up_to_16n(tmp_path, case):
    """16x the input costs at most 24x the calls (and 4x at most 6x), with more reported at each size (the one
    scope's chain reports nothing at any size: it measures the flow analysis of a long function)."""
    front_end, make, n = GROWTH[case]
    (small, found_small), (middle, found_middle), (large, found_large) = (
        front_end_calls(tmp_path, front_end, make(size)) for size in (n, 4 * n, 16 * n))
    assert 0 < found_small < found_middle < found_large or case.endswith("one scope") and found_large == 0
    assert middle <= small * LINEAR and large <= small * 16 * 1.5
