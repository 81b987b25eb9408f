"""The view of the file a rule gets for one node: facts, frame, and ways to report."""
from __future__ import annotations

import ast
import os
from typing import Optional

from ..analysis import evidence, purpose
from ..analysis.facts import FileFacts, Frame
from ..text import MAX_QUOTED, one_line, printable
from .model import Edit, Finding, Fix, FixSafety


class Context:
    __slots__ = ("facts", "frame", "node", "pos", "spec", "quoted")

    def __init__(self, facts: FileFacts, frame: Frame, node: ast.AST, spec):
        self.facts = facts
        self.frame = frame
        self.node = node
        self.pos = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
        self.spec = spec
        self.quoted: Optional[list[str]] = None  # the source texts `text` gave: a message may quote them

    # ---- questions rules ask -----------------------------------------------------------------
    def kind(self, expr: ast.AST, pos=None) -> Optional[evidence.Kind]:
        return evidence.kind(expr, self, pos)

    def tensor_strength(self, expr: ast.AST, pos=None, some_path: bool = False) -> evidence.Strength:
        return evidence.tensor_strength(expr, self, pos, some_path)

    def attached(self, expr: ast.AST, pos=None) -> bool:
        return evidence.attached(expr, self, pos)

    def non_leaf(self, expr: ast.AST, pos=None) -> bool:
        return evidence.non_leaf(expr, self, pos)

    def qualname(self, expr: ast.AST) -> Optional[str]:
        return self.facts.qualname(expr)

    @property
    def grad_disabled(self) -> bool:
        """Grad mode is off here: under `no_grad` / `inference_mode` (a block or a decorator), or after a
        statement `torch.set_grad_enabled(False)` of this scope on every path."""
        return self.frame.grad_disabled or self.frame.scope.grad_off_at(self.pos)

    @property
    def in_param_update_function(self) -> bool:
        """Inside an init / reset / optimizer / EMA / fuse / load function (at any depth) that runs no
        backward pass of its own (analysis/purpose.py)."""
        return any(purpose.updates_weights(f, self.facts) for f in self.frame.funcs)

    def text(self, node: ast.AST) -> str:
        """The exact source text of `node`."""
        text = self.facts.segment(node)
        if len(text) > MAX_QUOTED:  # a message that quotes it shortens it (finding)
            self.quoted = (self.quoted or []) + [text]
        return text

    def place(self, path: Optional[str], line: int) -> str:
        """`line 8` in the file itself (`path` None or the file's), else `trainer.py:8` (relative to it)."""
        if path is None or path == self.facts.path:
            return f"line {line}"
        return f"{os.path.relpath(path, os.path.dirname(os.path.abspath(self.facts.path or '.')))}:{line}"

    # ---- reporting ---------------------------------------------------------------------------
    def finding(self, node: ast.AST, fix: Optional[Fix] = None, **fmt) -> Finding:
        """A finding at `node` with the rule's message formatted by `fmt`. Every message is one line of
        printable text (text.py): source code it quotes (`text`) on one line and shortened, line breaks and
        control characters from anywhere else (a neighbour's file name) collapsed or escaped. A fix of a
        form the rule withholds (model.FixForm.withheld) is left off: the finding is reported without it."""
        withheld = fix is not None and self.spec.withholds(fix)
        if withheld:
            fix = None
        line, col = self.char_pos(node.lineno, node.col_offset)
        end_line, end_col = self.char_pos(node.end_lineno or node.lineno, node.end_col_offset or 0)
        message = self.spec.message.format(**{k: self._quoting(str(v)) for k, v in fmt.items()}) if fmt \
            else self.spec.message
        return Finding(line, col, self.spec.code, printable(message), fix, end_line, end_col, withheld)

    def _quoting(self, value: str) -> str:
        """`value` with each long or multi-line source text it quotes shortened to one line, longest first."""
        if not self.quoted:
            return value
        value = " ".join(value.split())
        for code in sorted(self.quoted, key=len, reverse=True):
            value = value.replace(" ".join(code.split()), one_line(code))
        return value

    def replace(self, node: ast.AST, text: str, safety: FixSafety, imports=(), description="") -> Fix:
        return Fix((self.edit(node, text),), safety, tuple(imports), description)

    def edit(self, node: ast.AST, text: str) -> Edit:
        start = self.char_pos(node.lineno, node.col_offset)
        end = self.char_pos(node.end_lineno, node.end_col_offset)
        return Edit(start, end, text)

    def char_pos(self, line: int, byte_col: int) -> tuple[int, int]:
        """ast columns count UTF-8 bytes; editors, flake8 and the fixer count characters."""
        text = self.facts.lines[line - 1] if 0 < line <= len(self.facts.lines) else ""
        if text.isascii():
            return line, byte_col
        return line, len(text.encode("utf-8")[:byte_col].decode("utf-8", "replace"))
