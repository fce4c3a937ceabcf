"""Which of the given paths are blueprints: exclude patterns and detection by content.

A repository holds YAML that is not a blueprint (GitHub workflows, `.pre-commit-config.yaml`,
Kubernetes manifests, Ansible). A YAML file is a blueprint when one of its documents has a
top-level ``kind:`` naming a blueprint kind (TrainingCluster, InferenceFleet, Platform), or a
near miss of one (``TrainingCluser``, so a typo is reported instead of skipped), and no
top-level ``apiVersion:`` (the Kubernetes marker); or when a peer reader (spec.peers: an
AWS ParallelCluster config, ...) recognises it by its content. The test reads lines, not
YAML, so a file that does not parse is still classified, and a broken blueprint still
reaches the loader.

Files found inside a folder are filtered: excluded by a pattern, or not a blueprint, they are
skipped and counted. Files named on the command line are read as given (a non-blueprint is
an error, as before) unless `force_exclude` is set, which applies both filters to them too,
as ruff's ``--force-exclude`` does: pre-commit and CI pass every changed file by name.

Patterns follow ruff's ``exclude``: a pattern without ``/`` matches any file or folder of
that name anywhere (``.venv``, ``*.k8s.yaml``); a pattern with ``/`` matches the path
relative to the project root (the folder of the config file, else the working directory)
or a folder above the file (``deploy/manifests``, ``charts/*/templates``). ``*`` and ``?``
stay within one path segment, ``**`` crosses segments.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from archform.spec.errors import UsageError
from archform.spec.files import MAX_BYTES
from archform.spec.loader import MODELS, expand_paths

# Like ruff's default `exclude`: tool and dependency folders that never hold a user's
# blueprints. `exclude` in the config replaces the list, `extend-exclude` adds to it.
DEFAULT_EXCLUDE: tuple[str, ...] = (
    ".git",
    ".hg",
    ".svn",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    "node_modules",
    "__pycache__",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    "site-packages",
)

_DOC_START = re.compile(r"^(?:---|\.\.\.)(?:[ \t].*)?$", re.MULTILINE)
_KIND = re.compile(r"""^kind:[ \t]*(["']?)([A-Za-z][\w.-]*)\1[ \t]*(?:#.*)?$""", re.MULTILINE)
_API_VERSION = re.compile(r"^apiVersion[ \t]*:", re.MULTILINE)


def _is_blueprint_kind(kind: str) -> bool:
    if kind in MODELS:
        return True
    lowered = [k.lower() for k in MODELS]
    return bool(difflib.get_close_matches(kind.lower(), lowered, n=1, cutoff=0.8))


def is_blueprint_text(text: str) -> bool:
    """Some document of this YAML text carries a blueprint's `kind:` and no `apiVersion:`.

    A file a peer reader recognises (spec.peers: ParallelCluster, ...) counts too.
    """
    from archform.spec.peers import sniff

    if sniff(text):
        return True
    for document in _DOC_START.split(text):
        if _API_VERSION.search(document):
            continue
        if any(_is_blueprint_kind(m.group(2)) for m in _KIND.finditer(document)):
            return True
    return False


def is_blueprint_file(path: Path) -> bool:
    """Classify a file by its first MAX_BYTES; unreadable files count as blueprints.

    Counting them keeps the loader's own error (a FIFO, a permission problem) in front of
    the user instead of a silent skip.
    """
    try:
        if not path.is_file():
            return True
        with path.open("rb") as handle:
            head = handle.read(MAX_BYTES)
    except OSError:
        return True
    return is_blueprint_text(head.decode("utf-8", errors="replace").removeprefix("\ufeff"))


def _segment_regex(pattern: str) -> re.Pattern[str]:
    out = ""
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("**", i):
            out += ".*"
            i += 2
            if i < len(pattern) and pattern[i] == "/":
                out = out[:-2] + "(?:.*/)?"
                i += 1
            continue
        if char == "*":
            out += "[^/]*"
        elif char == "?":
            out += "[^/]"
        elif char == "[":
            end = pattern.find("]", i + 1)
            if end == -1:
                out += re.escape(char)
            else:
                body = pattern[i + 1 : end].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                out += f"[{body}]"
                i = end
        else:
            out += re.escape(char)
        i += 1
    return re.compile(out + r"\Z")


@dataclass(frozen=True)
class Excluder:
    """Exclude patterns anchored at a project root."""

    patterns: tuple[str, ...]
    root: Path
    _compiled: tuple[tuple[bool, re.Pattern[str]], ...] = field(
        init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        compiled = []
        for raw in self.patterns:
            pattern = raw.strip().removeprefix("./").rstrip("/")
            if pattern:
                compiled.append(("/" in pattern, _segment_regex(pattern)))
        object.__setattr__(self, "_compiled", tuple(compiled))

    def excluded(self, path: Path, below: Path | None = None) -> bool:
        """The file, or a folder above it (but below `below`, if given), matches a pattern.

        `below` is a folder named on the command line: what it is itself does not count,
        as ruff reads a path it is given.
        """
        absolute = _absolute(path)
        try:
            parts = absolute.relative_to(self.root.resolve()).parts
        except ValueError:
            parts = absolute.parts[1:]
        skip = 0
        if below is not None and absolute.is_relative_to(_absolute(below)):
            skip = len(parts) - len(absolute.relative_to(_absolute(below)).parts)
        prefixes = ["/".join(parts[: i + 1]) for i in range(skip, len(parts))]
        for anchored, regex in self._compiled:
            if anchored:
                if any(regex.match(prefix) for prefix in prefixes):
                    return True
            elif any(regex.match(part) for part in parts[skip:]):
                return True
        return False


def _absolute(path: Path) -> Path:
    """The path from the root of the file system: its folder resolved, its own name kept."""
    full = path.absolute()
    return full.parent.resolve() / full.name


@dataclass
class Selection:
    """The blueprint files to load, and what was left out."""

    files: list[Path] = field(default_factory=list)
    non_blueprints: list[Path] = field(default_factory=list)
    excluded: list[Path] = field(default_factory=list)


def select_files(
    paths: Iterable[Path], excluder: Excluder, *, force_exclude: bool = False
) -> Selection:
    """Blueprint files among `paths` (folders expanded), in the order given, each once."""
    out = Selection()
    seen: dict[Path, bool] = {}  # file -> taken

    def take(path: Path, folder: Path | None) -> bool:
        key = _absolute(path)
        if key not in seen:
            seen[key] = _keep(path, folder)
        return seen[key]

    def _keep(path: Path, folder: Path | None) -> bool:
        filtered = folder is not None or force_exclude
        if filtered and excluder.excluded(path, None if force_exclude else folder):
            out.excluded.append(path)
            return False
        if filtered and not is_blueprint_file(path):
            out.non_blueprints.append(path)
            return False
        out.files.append(path)
        return True

    for item in paths:
        path = Path(item)
        if not path.is_dir():
            take(path, None)
            continue
        if force_exclude and excluder.excluded(path):
            out.excluded.append(path)
            continue
        before = len(out.non_blueprints)
        inside = expand_paths(
            [path], prune=partial(excluder.excluded, below=path), allow_empty=True
        )
        if not inside:
            expand_paths([path])  # raises: no YAML file at all
        found = [take(f, path) for f in inside]
        if not any(found):
            skipped = len(out.non_blueprints) - before
            raise UsageError(
                f"{path}: no blueprint in this folder"
                + (f" (skipped {_files(skipped)} without a blueprint `kind:`)" if skipped else "")
                + "; nothing was checked",
                "pass the folder that holds the blueprints; a blueprint has a top-level "
                "`kind: " + "|".join(MODELS) + "`",
            )
    return out


def _files(n: int) -> str:
    return f"{n} YAML file" + ("" if n == 1 else "s")


def skipped_note(selection: Selection) -> str | None:
    """The stderr line naming what was skipped, or None when nothing was."""
    n = len(selection.non_blueprints)
    if not n:
        return None
    return f"skipped {n} non-blueprint YAML file{'' if n == 1 else 's'}"
