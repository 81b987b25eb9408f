"""A progress bar on stderr, only for a terminal and a long run (MIN_FILES files or more)."""
from __future__ import annotations

from typing import TextIO

MIN_FILES = 100
WIDTH = 30


class Progress:
    def __init__(self, total: int, stream: TextIO):
        self.total = total
        self.done = 0
        self.stream = stream
        isatty = getattr(stream, "isatty", None)
        self.shown = total >= MIN_FILES and bool(isatty and isatty())
        self._last = -1

    def advance(self) -> None:
        self.done += 1
        if not self.shown:
            return
        filled = WIDTH * self.done // self.total
        if filled != self._last or self.done == self.total:
            self._last = filled
            self.stream.write(f"\r[{'#' * filled}{'.' * (WIDTH - filled)}] {self.done}/{self.total} files")
            self.stream.flush()

    def close(self) -> None:
        if self.shown:
            self.stream.write("\r" + " " * (WIDTH + 30) + "\r")  # leave the line clean for the summary
            self.stream.flush()
