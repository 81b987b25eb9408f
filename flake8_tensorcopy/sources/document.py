"""A file's text as the pipeline reads it: a Python file as it is, a notebook as one program of its cells,
and a script exported from a notebook (`!pip install ...`, `%matplotlib inline` lines, which no Python
parses) as the program IPython would run, line for line: analysed, never fixed or rewritten."""
from __future__ import annotations

import re

from ..engine.core import AnalysisError, parse
from ..pipeline.lint import Document
from .ipython_syntax import neutralise
from .notebook import read_notebook

IPYTHON_LINE = re.compile(r"(?m)^[ \t]*(?:[!%]|\w+[ \t]*=[ \t]*[!%])")  # `!cmd`, `%magic`, `files = !ls`


def read_document(text: str, path: str) -> Document:
    """The document of `text`, reported as `path`; raises NotebookError for a notebook that cannot be read."""
    if path.endswith(".ipynb"):
        notebook = read_notebook(text)
        return Document(path, notebook.program, notebook, notebook.cell_ends)
    if IPYTHON_LINE.search(text):
        return _exported_notebook(text, path)
    return Document(path, text)


def _exported_notebook(text: str, path: str) -> Document:
    """A script with IPython lines, when it does not parse as it is: its lines as IPython runs them."""
    try:
        parse(text, path)
        return Document(path, text)
    except AnalysisError:
        program = "\n".join(neutralise(text.split("\n")))
    try:
        parse(program, path)
    except AnalysisError:
        return Document(path, text)  # not IPython either: the error is the file's own
    return Document(path, program, derived=True)
