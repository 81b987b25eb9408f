"""The analysis package is a leaf: rules and front ends import it, it imports none of them."""
import ast
from pathlib import Path

ANALYSIS = Path(__file__).resolve().parent.parent / "flake8_tensorcopy" / "analysis"


def _runtime_imports(tree: ast.Module):
    """Relative imports executed at import time (not those under `if TYPE_CHECKING:`)."""
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        for sub in ast.walk(node):
            if isinstance(sub, ast.ImportFrom) and sub.level:
                yield sub


def test_analysis_imports_only_itself():
    outside = []
    for path in sorted(ANALYSIS.glob("*.py")):
        for imp in _runtime_imports(ast.parse(path.read_text())):
            if imp.level > 1:
                outside.append(f"{path.name}:{imp.lineno} from {'.' * imp.level}{imp.module or ''}")
    assert outside == []


def test_the_check_sees_an_escape():
    tree = ast.parse("from ..rules import RULES\nif TYPE_CHECKING:\n    from ..context import Context\n")
    assert [i.module for i in _runtime_imports(tree)] == ["rules"]
