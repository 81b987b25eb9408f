"""Writing a small project (files by relative path) into a folder, and a neighbouring module that converts
values to tensors (the callers test it)."""
from __future__ import annotations

import textwrap


def write(folder, files: dict[str, str]):
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


CONVERT = """
    import torch


    def to_tensor(values):
        return torch.tensor(values, dtype=torch.float32)


    class Potential:
        def __init__(self, model, mean=None):
            self.model = model
            self.mean = torch.tensor(mean)
"""
