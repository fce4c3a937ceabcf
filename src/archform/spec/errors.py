"""Domain errors the user can cause, each with a file position and a hint."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Pos:
    """A 1-based line and column in a source file."""

    line: int
    column: int


@dataclass(frozen=True, slots=True)
class SpecProblem:
    """One problem in a blueprint: where, what was expected, and how to fix it."""

    file: str
    line: int
    column: int
    message: str
    hint: str = ""
    path: str = ""
    secondary: bool = False  # a consequence of another problem (e.g. a missing key): listed last

    def render(self) -> str:
        """One line: ``file:line:col: error: message (hint: ...)``."""
        text = f"{self.file}:{self.line}:{self.column}: error: {self.message}"
        if self.hint:
            text += f" (hint: {self.hint})"
        return _one_line(text)


class SpecError(Exception):
    """A blueprint that cannot be loaded; carries every problem found, first one first."""

    def __init__(self, problems: list[SpecProblem]) -> None:
        if not problems:
            raise ValueError("SpecError needs at least one problem")
        self.problems = problems
        super().__init__(problems[0].render())

    @classmethod
    def at(cls, file: str, pos: Pos, message: str, hint: str = "", path: str = "") -> SpecError:
        """Build an error with a single problem."""
        return cls([SpecProblem(file, pos.line, pos.column, message, hint, path)])


class UsageError(Exception):
    """A command-line mistake (bad option value, missing file): exit code 2."""

    def __init__(self, message: str, hint: str = "") -> None:
        self.message = message
        self.hint = hint
        super().__init__(message)

    def render(self) -> str:
        """One line for stderr."""
        text = f"error: {self.message}"
        if self.hint:
            text += f" (hint: {self.hint})"
        return _one_line(text)


def _one_line(text: str) -> str:
    return " ".join(text.split("\n")).replace("\r", " ")


class HintedError(ValueError):
    """A validator error that carries a fix hint for the user."""

    def __init__(self, message: str, hint: str = "") -> None:
        self.hint = hint
        super().__init__(message)


class FieldError(HintedError):
    """A model-validator error that belongs to one field of the model (for its position)."""

    def __init__(self, field: str, message: str, hint: str = "") -> None:
        self.field = field
        super().__init__(message, hint)
