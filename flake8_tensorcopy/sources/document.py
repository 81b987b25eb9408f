"""A file's text as the pipeline reads it: a Python file as it is, a notebook as one program of its cells."""
from __future__ import annotations

from ..pipeline.lint import Document
from .notebook import read_notebook


def read_document(text: str, path: str) -> Document:
    """The document of `text`, reported as `path`; raises NotebookError for a notebook that cannot be read."""
    if path.endswith(".ipynb"):
        notebook = read_notebook(text)
        return Document(path, notebook.program, notebook, notebook.cell_ends)
    return Document(path, text)
