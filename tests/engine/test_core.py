"""The engine's shortcuts change nothing a rule sees: the pre-filter, the skipped defs, and the partial parse
(the tree a file that does not parse falls back to)."""
import ast
import re
import subprocess
import sys

import pytest

from tests.support.fixture_tools import FIXTURES
from flake8_tensorcopy.analysis.facts import children, walk
from flake8_tensorcopy.engine.core import analyse, match_lines, partial_tree
from flake8_tensorcopy.rules.model import Trigger
from flake8_tensorcopy.engine.partial import parse_partial
from flake8_tensorcopy.rules import BY_CODE, RULES

FIXTURE_FILES = sorted(FIXTURES.glob("TEN*/*.py"))


def positions(findings):
    return [(f.line, f.col, f.code, f.message) for f in findings]


def from_partial_tree(source, rules=RULES):
    tree = partial_tree(source, rules)
    assert tree is not None, "no partial tree"
    return analyse(source, "t.py", rules, tree=tree)


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_partial_parse_and_skipped_defs_find_what_a_full_walk_finds(path):
    source = path.read_text()
    full = analyse(source, str(path), RULES, tree=ast.parse(source))
    tree = partial_tree(source, RULES)
    partial = analyse(source, str(path), RULES, tree=tree) if tree is not None else full
    assert positions(analyse(source, str(path), RULES).findings) == positions(full.findings)
    assert positions(partial.findings) == positions(full.findings)


EVERY_KIND = """
import a.b as c
from . import d
global g
async def f(x: int = 1, /, *args, k=2, **kw) -> None:
    nonlocal h
    async with m() as (p, *q):
        async for i in r:
            y = {**kw, 1: [z async for z in i if z]}
            print(f"{y!r:>{w}}", *args, key=lambda u: u[1:2, ...])
    match x:
        case None | True: pass
        case [1, *rest] if (n := rest): pass
        case {"k": v, **more}: pass
        case Point(x=0, y=as_y) as pt: pass
    try:
        del y
    except* E as e:
        raise e from None
@dec(1)
class C(B, metaclass=M):
    t: list[int] = []
"""


def test_the_fast_walk_meets_every_node_ast_walk_meets_but_the_expression_contexts():
    sources = [EVERY_KIND] + [p.read_text() for p in FIXTURE_FILES + sorted(
        (FIXTURES.parent / "flake8_tensorcopy").rglob("*.py"))]
    for source in sources:
        tree = ast.parse(source)
        assert [id(n) for n in walk(tree)] == [id(n) for n in ast.walk(tree) if not isinstance(n, ast.expr_context)]
        for node in ast.walk(tree):
            expected = [c for c in ast.iter_child_nodes(node) if not isinstance(c, ast.expr_context)]
            assert [id(c) for c in children(node)] == [id(c) for c in expected]


def test_the_partial_parse_stubs_cold_defs_keeps_hot_classes_whole_and_keeps_line_numbers():
    source = ("import torch\n\n\ndef cold():\n    return 1\n\n\n@decorated\nclass Model:\n    def cold(self):\n"
              "        return 2\n\n    def hot(self, y):\n        z = y.detach()\n")
    tree = parse_partial(source, match_lines(source, RULES))
    assert ast.unparse(tree).split("\n") == [
        "import torch", "", "def cold():", "    pass", "", "@decorated", "class Model:", "", "    def cold(self):",
        "        return 2", "", "    def hot(self, y):", "        z = y.detach()"]
    assert [(n.name, n.lineno) for n in tree.body[1:]] == [("cold", 4), ("Model", 9)]
    assert tree.body[2].body[1].lineno == 13


@pytest.mark.parametrize("source", [
    'import torch\nDOC = """\ndef not_code():\n"""\n\n\ndef f(y):\n    z = y.detach()\n',  # a def in a string
    "import torch\n\n\ndef f(y):\n    z = y.detach()\n\n\nw = v.detach()\n",  # hot module-level code
    "import torch\n\n\nclass M:\n    w = v.detach()\n\n    def f(self):\n        pass\n",  # hot class body
    "def f(y):\n    s = '''\ndef g():\n'''\n\n\ndef h(y):\n    z = y.detach()\n",  # a string crosses a unit
])
def test_the_whole_file_is_parsed_where_a_partial_tree_could_mislead(source):
    assert parse_partial(source, match_lines(source, RULES)) is None


@pytest.mark.parametrize("source", [
    # TEN401 reads every def: a backward() through the accumulator in another function is intended
    "import torch\n\n\ndef backprop(total):\n    total.backward()\n\n\ndef main():\n    total = 0\n"
    "    for x, y in loader:\n        loss = crit(model(x), y)\n        loss.backward()\n        opt.step()\n"
    "        total += loss\n    backprop(total)\n",
])
def test_rules_that_read_beyond_their_def_see_the_whole_file(source):
    assert partial_tree(source, RULES) is None
    full = analyse(source, "t.py", RULES, tree=ast.parse(source))
    assert positions(analyse(source, "t.py", RULES).findings) == positions(full.findings)


def test_what_a_class_puts_on_self_in_a_cold_method_is_seen_by_the_partial_tree_too():
    source = ("import torch\n\n\nclass Loss:\n    def __init__(self, n):\n"
              "        self.schedule = torch.linspace(0.1, 0.2, n)\n\n    def forward(self, x, epoch):\n"
              "        return x / torch.tensor(self.schedule[epoch])\n\n\ndef unrelated():\n    return 1\n")
    rules = [BY_CODE["TEN204"]]
    full = analyse(source, "t.py", rules, tree=ast.parse(source))
    assert [(f.line, f.code) for f in full.findings] == [(9, "TEN204")]
    assert positions(from_partial_tree(source, rules).findings) == positions(full.findings)


def test_module_level_bindings_after_a_cold_def_are_kept():  # `weights` is a tensor for f
    source = ("import copy\nimport torch\n\n\ndef f():\n    return copy.copy(weights)\n\n\ndef g():\n    pass\n\n\n"
              "weights = torch.zeros(3)\n")
    assert [f.code for f in from_partial_tree(source).findings] == ["TEN202"]


def test_a_syntax_error_in_a_def_no_rule_looks_at_is_left_to_flake8():
    source = "import torch\n\n\ndef broken(:\n    pass\n\n\ndef f(y):\n    z = y.detach()\n    z += 1\n    return y\n"
    assert [(f.line, f.code) for f in analyse(source, "t.py", RULES).findings] == [(10, "TEN101")]


@pytest.mark.parametrize("test, guarded", [
    ("isinstance(x, torch.Tensor)", True),
    ("ok and torch.is_tensor(x)", True),
    ("not isinstance(x, torch.Tensor)", False),
    ("isinstance(x, (list, torch.Tensor))", False),
    ("ok or isinstance(x, torch.Tensor)", False),
])
def test_only_a_proving_isinstance_guard_makes_a_name_a_tensor(test, guarded):
    source = f"import copy\nimport torch\n\n\ndef f(x, ok):\n    if {test}:\n        return copy.copy(x)\n"
    assert bool(analyse(source, "t.py", RULES).findings) is guarded


def test_a_trigger_is_any_of_its_patterns_and_honours_its_line_start():
    trigger = Trigger(r"\.to\(", r"deepcopy\(", line_start=r"[ \t]*[\w.]*")
    source = "x = y.to(d)\n    y.to(d)\nz = deepcopy(w)\ncopy.deepcopy(w)\n"
    assert [source.count("\n", 0, m.start()) + 1 for m in trigger.finditer(source)] == [2, 4]
    assert trigger.search(source).start() == source.index(".to(", 12)
    assert Trigger("a", "b").search("xxb") and not Trigger("a", "b").search("xyz")
    assert Trigger.of(("a", "b")).patterns[1].pattern == "b" and Trigger.of(trigger) is trigger


@pytest.mark.parametrize("text, fires", [
    ("loss.backward()\ntotal += loss", True), ("opt.step()\nhist.append(x)", True),
    ("loss.backward()", False), ("total += loss", False), ("", False),
])
def test_a_trigger_with_groups_needs_a_match_of_every_group(text, fires):
    trigger = Trigger(r"\.backward\(", r"\.step\(", r"\+=", r"\.append\(", groups=(2, 2))
    assert bool(trigger.search(text)) is fires
    assert len(list(trigger.finditer(text))) == (2 if fires else 0)


def test_check_does_not_import_libcst():  # LibCST is the fixer's; `check` starts without it
    code = ("import sys; from flake8_tensorcopy.cli.main import main; main(['check', '-q', sys.argv[1]]); "
            "assert 'libcst' not in sys.modules, 'libcst imported'")
    fixture = str(FIXTURES / "TEN101" / "bad.py")
    proc = subprocess.run([sys.executable, "-c", code, fixture], capture_output=True, text=True)
    assert proc.returncode == 0 and "TEN101" in proc.stdout, proc.stderr


def test_check_of_a_file_no_rule_could_fire_on_imports_no_analysis_and_no_rule(tmp_path):
    """Start-up: a run pays only for what it uses. No trigger text: no rule module, no analysis (the cache's
    file states aside), no torch model; a file with trigger text loads exactly the rules it triggers."""
    (tmp_path / "plain.py").write_text("x = 1\nprint(x)\n")
    (tmp_path / "copies.py").write_text("import copy\ny = copy.copy(x)\n")
    code = ("import sys; from flake8_tensorcopy.cli.main import main; main(['check', '-q', sys.argv[1]]); "
            "print(sorted(m for m in sys.modules if m.startswith('flake8_tensorcopy.')))")
    loaded = {}
    for name in ("plain.py", "copies.py"):
        proc = subprocess.run([sys.executable, "-c", code, str(tmp_path / name)], capture_output=True, text=True)
        loaded[name] = set(ast.literal_eval(proc.stdout.splitlines()[-1]))
    plain, copies = loaded["plain.py"], loaded["copies.py"]
    # the cache records and verifies an entry with the package index's file states only: no parser, no facts
    cache_only = {"flake8_tensorcopy.analysis", "flake8_tensorcopy.analysis.package_index",
                  "flake8_tensorcopy.analysis.reads"}
    assert not {m for m in plain if m.startswith("flake8_tensorcopy.analysis")} - cache_only, plain
    assert not {m for m in plain if re.fullmatch(r"flake8_tensorcopy\.rules\.ten\d+", m)}, plain
    assert len(plain) <= 30, sorted(plain)  # cli, config, sources, pipeline, engine, the rule catalog
    assert "flake8_tensorcopy.analysis.torch_api" in copies  # the file a rule may fire on pays for the analysis
    assert {m for m in copies if re.fullmatch(r"flake8_tensorcopy\.rules\.ten\d+", m)} == {
        "flake8_tensorcopy.rules.ten202"}


def test_the_sweep_script_finds_no_crash_and_no_partial_parse_mismatch_in_the_fixtures():
    root = FIXTURES.parent
    proc = subprocess.run([sys.executable, str(root / "scripts" / "sweep.py"), "--jobs", "1", "--compare",
                           str(FIXTURES)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "crashes: 0" in proc.stdout and "partial-parse mismatches: 0" in proc.stdout
