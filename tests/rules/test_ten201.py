"""TEN201 (deepcopy-tensor): `copy.deepcopy` of a tensor deepcopy mishandles, or of a module that keeps a
tensor with its graph; the fix for a tensor, none for a module. Which modules keep one:
tests/analysis/test_module_state.py."""
from __future__ import annotations

import ast
import re

import pytest

from tests.support.edit_tools import replaced
from tests.support.rule_tools import call_at, case_findings, fixture_cases
from flake8_tensorcopy.fix.fixer import fix_source
from flake8_tensorcopy.rules import BY_CODE


def test_a_deepcopy_of_a_detached_tensor_becomes_one_clone():
    source = ("import copy\n\nimport torch\n\n\ndef f(t: torch.Tensor):\n    t = t[1:]\n"
              "    return copy.deepcopy(t.detach()), copy\n")
    outcome = fix_source(source, "t.py", [BY_CODE["TEN201"]], unsafe=True)
    assert "return t.detach().clone(), copy" in outcome.fixed


MODULE = re.compile(r"copy\.deepcopy\(\) of (?P<cls>\w+) '(?P<arg>[^']+)' raises RuntimeError once it has run: "
                    r"(?P=cls)\.(?P<method>\w+)\(\) leaves a tensor with a graph \(not a leaf\) in "
                    r"self\.(?P<attr>\w+); clear self\.(?P=attr) after use \(or store it detached\) in (?P=cls)")


@pytest.mark.parametrize("case", fixture_cases("TEN201"))
def test_a_tensor_copy_is_fixed_as_advised_and_a_module_copy_names_what_its_class_keeps(case):
    """Over the cases of the bad fixture (where each finding is: tests/rules/test_fixtures.py): a tensor's
    deepcopy becomes the copy the message advises; a module's has no fix, and the method and attribute the
    message names are a method of the copied object's class that stores on that attribute."""
    source, node, (finding,) = case_findings("TEN201", case)
    call = call_at(source, finding)
    copied = ast.unparse(call.args[0])
    module = MODULE.fullmatch(finding.message)
    if module is None:
        advice = finding.message.rsplit("; use ", 1)[1]
        assert advice == f"{copied}.detach().clone()" and f" of tensor '{copied}' " in finding.message
        (edit,) = finding.fix.edits
        assert (replaced(source, edit), edit.text) == (ast.get_source_segment(source, call), advice)
        return
    assert finding.fix is None and module["arg"] == copied
    (cls,) = [n for n in ast.walk(node) if isinstance(n, ast.ClassDef) and n.name == module["cls"]]
    (method,) = [n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == module["method"]]
    stored = [ast.unparse(t) for n in ast.walk(method) if isinstance(n, ast.Assign) for t in n.targets]
    assert any(re.match(rf"self\.{module['attr']}\b", target) for target in stored), stored
