"""The def `self.m()` runs in a method of a class: its own, else the nearest base class's that the code shows
at hand, the file's or the text under analysis (analysis/hierarchy.py `resolved`)."""
from __future__ import annotations

import ast
import textwrap

import pytest

from flake8_tensorcopy.analysis import hierarchy, package_index, project
from flake8_tensorcopy.analysis.facts import FileFacts

from tests.support.project_tools import write

CLASSES = """
class Base:
    def record(self, v):
        return v

    @property
    def size(self):
        return 1

    scale = 2.0


class Middle(Base):
    pass


class Child(Middle):
    def record(self, v):
        return v * 2


class Leaf(Middle):
    size = 3
"""


def facts_of(source: str, path=None) -> FileFacts:
    facts = FileFacts(ast.parse(source), source, ())
    facts.path = path
    return facts


def owner(found) -> str:
    """`Class.method` of a def found, by the class whose body holds it."""
    return found and next(c.name for c in ast.walk(TREE) if isinstance(c, ast.ClassDef) and found in c.body)


FACTS = facts_of(CLASSES)
TREE = FACTS.tree
CLASS = {c.name: c for c in TREE.body if isinstance(c, ast.ClassDef)}


@pytest.mark.parametrize("cls, name, expected", [
    ("Base", "record", "Base"),
    ("Middle", "record", "Base"),  # inherited two classes up
    ("Child", "record", "Child"),  # an override is the class's own
    ("Leaf", "record", "Base"),
    ("Middle", "size", None),  # a property is not called
    ("Leaf", "size", None),  # an attribute of the class hides the base's property
    ("Middle", "scale", None),  # a class attribute is no def
    ("Middle", "missing", None),
])
def test_the_method_self_runs_is_the_nearest_one_the_classes_define(cls, name, expected):
    found = hierarchy.resolved(CLASS[cls], name, FACTS)
    assert (found.name, owner(found)) == (name, expected) if expected else found is None


def test_a_base_class_of_another_module_is_followed_only_when_it_is_the_text_under_analysis(tmp_path):
    """Parsing a library's base modules for every `self.m()` of its subclasses costs too much: a neighbour's
    base class is read when it is the text under analysis (its checks ask about its own methods' callers)."""
    write(tmp_path, {"pkg/__init__.py": "", "pkg/base.py": "class Base:\n    def record(self, v):\n        return v\n"})
    sub = tmp_path / "pkg" / "sub.py"
    sub.write_text("from .base import Base\n\n\nclass Sub(Base):\n    pass\n")
    package_index.reset()
    here = facts_of(sub.read_text(), str(sub))
    assert hierarchy.resolved(here.tree.body[1], "record", here) is None
    base_path = tmp_path / "pkg" / "base.py"
    base = facts_of(base_path.read_text(), str(base_path))
    with project.analysing(base):
        found = hierarchy.resolved(here.tree.body[1], "record", facts_of(sub.read_text(), str(sub)))
    assert found is base.tree.body[0].body[0]


def test_a_hierarchy_that_names_itself_ends():
    facts = facts_of(textwrap.dedent("""
        class A(B):
            pass


        class B(A):
            pass
    """))
    assert hierarchy.resolved(facts.tree.body[0], "record", facts) is None
