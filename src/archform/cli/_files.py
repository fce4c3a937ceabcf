"""Which given paths are blueprints, for the commands that take many (lint, validate).

The filters (exclude patterns, detection by content) live in `spec.discovery`; this only
reads the settings and says on stderr what was skipped.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from archform.lint.config import LintConfig


def blueprint_files(paths: list[Path], settings: LintConfig, force_exclude: bool) -> list[Path]:
    """The blueprint files among `paths`; the skipped ones are counted on stderr."""
    from archform.spec.discovery import DEFAULT_EXCLUDE, Excluder, select_files, skipped_note

    patterns = settings.exclude if settings.exclude is not None else list(DEFAULT_EXCLUDE)
    selection = select_files(
        paths,
        Excluder((*patterns, *settings.extend_exclude), settings.root),
        force_exclude=force_exclude or settings.force_exclude,
    )
    note = skipped_note(selection)
    if note is not None:
        sys.stderr.write(note + "\n")
    if not selection.files:
        sys.stderr.write("no blueprint among the files given; nothing to check\n")
    return selection.files
