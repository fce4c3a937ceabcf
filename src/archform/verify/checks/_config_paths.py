"""The paths a generated configuration file names, per its syntax (data/paths.yaml configs).

Each function takes the file's text and its ConfigSpec and returns Needs: (what, path, key)
where `key` is the PathKey the value came from (None for fstab sources and plugstack entries).
"""

from __future__ import annotations

import posixpath
import shlex
from dataclasses import dataclass

from archform.spec.provided_paths import ConfigSpec, PathKey


@dataclass(frozen=True, slots=True)
class Need:
    """One path a configuration names."""

    what: str  # "TaskProlog", "include", "mount source", ...
    path: str
    key: PathKey | None
    glob: bool = False  # `include` pattern: something must match it


def _lines(text: str) -> list[str]:
    return [
        line.strip()
        for line in text.splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]


def _pairs(text: str, syntax: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for line in _lines(text):
        if syntax == "keyvalue":
            for word in line.split():
                key, sep, value = word.partition("=")
                if sep:
                    out.append((key, value))
        elif syntax == "words":
            key, _, value = line.partition(" ")
            out.append((key, value.strip()))
        else:  # env
            key, sep, value = line.removeprefix("export ").partition("=")
            if sep:
                out.append((key.strip(), value.strip().strip("\"'")))
    return out


def _keyed(text: str, spec: ConfigSpec) -> list[Need]:
    out: list[Need] = []
    for key, value in _pairs(text, spec.syntax):
        rule = spec.keys.get(key)
        if rule is None or not value:
            continue
        if rule.absolute_only and not value.startswith("/"):
            continue
        path = posixpath.dirname(value) if rule.dir else value
        out.append(Need(key, path, rule))
    return out


def _fstab(text: str) -> list[Need]:
    out: list[Need] = []
    for line in _lines(text):
        fields = line.split()
        if fields and fields[0].startswith("/"):
            out.append(Need("mount source", fields[0], None))
    return out


def _plugstack(text: str, source: str) -> list[Need]:
    out: list[Need] = []
    for line in _lines(text):
        words = shlex.split(line, comments=True)
        if len(words) >= 2 and words[0] == "include":
            pattern = words[1]
            if not pattern.startswith("/"):  # relative to the plugstack file's folder
                pattern = posixpath.join(posixpath.dirname(source), pattern)
            out.append(Need("include", posixpath.dirname(pattern), None))
            out.append(Need("include", pattern, None, glob=True))
        elif len(words) >= 2 and words[0] == "required" and words[1].startswith("/"):
            out.append(Need("required plugin", words[1], None))
    return out


def needs(text: str, spec: ConfigSpec, dest: str) -> list[Need]:
    """Every path the file (installed at `dest`) names, with the rule for it."""
    if spec.syntax == "fstab":
        return _fstab(text)
    if spec.syntax == "plugstack":
        return _plugstack(text, dest)
    return _keyed(text, spec)
