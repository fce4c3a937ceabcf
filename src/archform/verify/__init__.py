"""Check a generated tree with the real tools available on this machine.

Each check module exposes CHECK (a Check). A check whose tool is missing reports
"skipped" with the reason, never "passed".
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

Status = Literal["passed", "failed", "skipped"]


@dataclass(frozen=True, slots=True)
class Result:
    """The outcome of one check on one artifact."""

    check: str
    artifact: str
    status: Status
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Check:
    """A validator: which trees it applies to and how to run it."""

    name: str
    applies: Callable[[Path], bool]
    run: Callable[[Path], list[Result]]
    tools: tuple[str, ...] = field(default_factory=tuple)


def missing_tools(*tools: str) -> list[str]:
    """Executables not on PATH (the venv's bin dir is searched too)."""
    import sys

    extra = str(Path(sys.executable).parent)
    path = os.environ.get("PATH", "") + os.pathsep + extra
    return [t for t in tools if shutil.which(t, path=path) is None]


def tool_path(tool: str) -> str:
    """Full path of a tool (PATH, then the running interpreter's bin dir)."""
    import sys

    found = shutil.which(tool) or shutil.which(tool, path=str(Path(sys.executable).parent))
    if found is None:
        raise FileNotFoundError(tool)
    return found


def builtin_checks() -> list[Check]:
    """All built-in checks, in a fixed order."""
    from archform.verify import checks

    return list(checks.BUILTIN)


def verify_tree(root: Path, jobs: int = 1) -> list[Result]:
    """Run every applicable check over a generated tree (`jobs` checks at a time)."""
    from archform.verify.runner import run_checks

    return [r for run in run_checks(root, jobs) for r in run.results]
