"""Small notebooks of code cells, and fixing one in-process."""
from __future__ import annotations

import json

from tests.support.fix_tools import run_fix


def code_notebook(*sources, language="python") -> str:
    """An nbformat 4 notebook (nbformat's own layout) with one code cell per source (a string or lines)."""
    cells = [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": src}
             for src in sources]
    return json.dumps({"cells": cells, "metadata": {"language_info": {"name": language}},
                       "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n"


def cell_sources(text: str) -> list[str]:
    return ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
            for c in json.loads(text)["cells"]]


def fix_notebook(tmp_path, capsys, text, *flags) -> tuple[int, str, str]:
    """(exit code, the file's text after `fix FLAGS nb.ipynb`, stderr)."""
    path = tmp_path / "nb.ipynb"
    path.write_bytes(text.encode())
    code, _, err = run_fix(capsys, *flags, path)
    return code, path.read_bytes().decode(), err
