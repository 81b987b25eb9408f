"""The engine: pre-filter, parse once, collect facts once, run the rules that could fire.

Every adapter (flake8 plugin, `check`, `fix`) calls `analyse`; nothing else decides what is found.
The analysis and a rule's module are imported when a file first gets past the pre-filter: a run over
files no rule could fire on never loads them.
"""
from __future__ import annotations

import ast
import dataclasses
import warnings
from dataclasses import dataclass, field
from typing import Iterable, Optional, Sequence

from ..rules.model import Finding, Rule
from ..text import percent_cell_ends, python_line_ends
from .collector import tuned
from ..rules import RULES


class AnalysisError(Exception):
    """A file that could not be analysed; the message is one line, fit to show a user."""


@dataclass
class Result:
    findings: list[Finding] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # rules that failed on this file (bugs of ours)
    parsed: bool = False  # False when the pre-filter ruled the file out


def select_rules(select: Iterable[str] = (), ignore: Iterable[str] = (), extend_select: Iterable[str] = (),
                 rules: Sequence[Rule] = RULES) -> list[Rule]:
    """flake8's meaning: `select` replaces the default set, `extend_select` adds, `ignore` removes;
    the longest matching prefix wins between a select and an ignore."""
    select, ignore, extend = list(select), list(ignore), list(extend_select)
    chosen = []
    for rule in rules:
        sel = [p for p in (select or ([] if not rule.default_on else ["TEN"])) + extend if rule.code.startswith(p)]
        ign = [p for p in ignore if rule.code.startswith(p)]
        if sel and (not ign or max(map(len, sel)) > max(map(len, ign))):
            chosen.append(rule)
    return chosen


def could_fire(source: str, rules: Sequence[Rule]) -> list[Rule]:
    """The cheap textual pre-filter: rules whose trigger text occurs in the file. A rule that looks at no
    node (TEN905, checked by the pipeline after lint) never makes the engine parse a file."""
    return [r for r in rules if r.nodes and r.trigger.search(source)]


def match_lines(source: str, rules: Sequence[Rule]) -> Optional[list[int]]:
    """Sorted line numbers where the rules' HOT texts (default: TRIGGER) start, or None when the whole
    file must be looked at (an empty match is a file-level condition, not a place)."""
    source = python_line_ends(source)
    matches = [m for r in rules for m in (r.hot or r.trigger).finditer(source)]
    if any(m.start() == m.end() for m in matches):
        return None
    found, line, last = [], 1, 0
    for offset in sorted({m.start() for m in matches}):
        line += source.count("\n", last, offset)
        last = offset
        found.append(line)
    return found


def hot_lines(found: Optional[list[int]], tree: ast.Module) -> Optional[list[int]]:
    """`found`, unless a match is a module-level import (`from copy import deepcopy as dc`): then the
    calls can be anywhere, and every def is walked (None)."""
    if found is None:
        return None
    imports = {line for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))
               for line in range(n.lineno, n.end_lineno + 1)}
    return None if imports.intersection(found) else found


def tree_for(source: str, filename: str, active: Sequence[Rule]) -> ast.Module:
    """The whole tree. For a file that does not parse, the tree of its text with a newer Python's f-strings
    blanked (newer_fstrings: its findings then have no fix, the fixer never rewrites such a file), else
    the partial tree (see `partial_tree`) when there is one: a syntax error in a def no rule looks at is
    left to flake8 (E999). Files that parse are parsed whole: stubbing them first costs more than it
    saves, as the walk skips cold defs anyway."""
    try:
        return parse(source, filename)
    except AnalysisError:
        from .newer_fstrings import masked  # only for a file that does not parse

        blanked = masked(source)
        if blanked is not None:
            try:
                tree = parse(blanked, filename)
                setattr(tree, BLANKED, True)
                return tree
            except AnalysisError:
                pass
        tree = partial_tree(source, active)
        if tree is None:
            raise
        return tree


BLANKED = "_tensorcopy_blanked_fstrings"  # set on a tree parsed from text whose newer f-strings were blanked


def partial_tree(source: str, rules: Sequence[Rule]) -> Optional[ast.Module]:
    """The tree with the defs that hold no trigger text of `rules` stubbed (partial.py), or None where
    that could change a finding: a rule that reads other defs (WHOLE_FILE), trigger text outside
    functions (a module-level import's names can be called anywhere)."""
    source = python_line_ends(source)
    active = could_fire(source, rules)
    found = match_lines(source, active)
    if not active or found is None or any(r.whole_file for r in active):
        return None
    from .partial import parse_partial  # only for a file that does not parse

    return parse_partial(source, found)


def rules_by_node_type(rules: Sequence[Rule]) -> dict[type, list[Rule]]:
    """Which rules look at each node type: the walk records only these types."""
    by_type: dict[type, list[Rule]] = {}
    for rule in rules:
        for node_type in rule.nodes:
            by_type.setdefault(node_type, []).append(rule)
    return by_type


def analyse(source: str, filename: str = "<stdin>", rules: Sequence[Rule] = RULES,
            tree: Optional[ast.Module] = None, tensor_functions: Iterable[str] = (),
            cell_ends: Iterable[int] = ()) -> Result:
    """Findings for one file's source text. Raises AnalysisError for a file that cannot be parsed.

    `tensor_functions`: extra names of functions that return tensors (the `tensor-functions` option);
    `cell_ends`: for a notebook's program, the lines that end a cell (sources.notebook.cell_ends); a script
    with `# %%` cell markers gets its cells' ends from them (text.percent_cell_ends). Line ends
    are read as Python reads them (\\r\\n and a lone \\r as \\n), once, here: every rule and count of lines
    sees one text whatever the file's line ends, at the same positions."""
    with tuned():
        return _analyse(python_line_ends(source), filename, rules, tree, tensor_functions, cell_ends)


def _analyse(source: str, filename: str, rules: Sequence[Rule], tree: Optional[ast.Module],
             tensor_functions: Iterable[str], cell_ends: Iterable[int]) -> Result:
    active = could_fire(source, rules)
    if not active:
        return Result()
    from ..analysis import project  # the analysis is imported only for a file a rule may fire on
    from ..analysis.facts import FileFacts

    found = match_lines(source, active)
    if tree is None:
        tree = tree_for(source, filename, active)
    by_type = rules_by_node_type(active)
    try:
        facts = FileFacts(tree, source, tuple(by_type), hot_lines(found, tree))
    except RecursionError:
        raise AnalysisError("too deeply nested to analyse") from None
    facts.tensor_functions = frozenset(tensor_functions)
    facts.cell_ends = frozenset(cell_ends) or (percent_cell_ends(source) if "%%" in source else frozenset())
    facts.path = filename
    result = Result(parsed=True)
    with project.analysing(facts):  # neighbours that import this file read this text, not the saved file
        _run_rules(facts, by_type, result)
    if getattr(tree, BLANKED, False):  # a fix is made for text this Python cannot parse: none is offered
        result.findings = [dataclasses.replace(f, fix=None) for f in result.findings]
    result.findings.sort(key=lambda f: (f.line, f.col, f.code))
    return result


def _run_rules(facts, by_type: dict, result: Result) -> None:
    """Each rule on each node it looks at; findings (once per place and code) and failures into `result`."""
    from ..rules.context import Context

    seen = set()
    for node, frame in facts.nodes:
        for rule in by_type.get(type(node), ()):
            try:
                reported = list(rule.check(node, Context(facts, frame, node, rule)) or ())
            except RecursionError:
                reported = []
            except Exception as exc:  # a bug in one rule must not cost the user the others
                result.errors.append(f"{rule.code} failed at line {getattr(node, 'lineno', '?')}: "
                                     f"{type(exc).__name__}: {exc}".split("\n")[0])
                continue
            for f in reported:
                key = (f.line, f.col, f.code)
                if key not in seen:
                    seen.add(key)
                    result.findings.append(f)


def parse(source: str, filename: str) -> ast.Module:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarning on invalid escapes is not ours to report
            return ast.parse(source, filename)
    except SyntaxError as exc:
        where = f" at line {exc.lineno}" if exc.lineno else ""
        raise AnalysisError(f"cannot parse{where}: {exc.msg}") from None
    except (RecursionError, MemoryError) as exc:  # the parser's own limits on nesting
        raise AnalysisError(f"cannot parse: too deeply nested ({type(exc).__name__})") from None
    except ValueError as exc:  # null bytes on older Pythons
        raise AnalysisError(f"cannot parse: {exc}".split("\n")[0]) from None
