"""The paths a generated configuration file names, per its syntax (data/paths.yaml configs).

Each function takes the file's text and its ConfigSpec and returns Needs: (what, path, key)
where `key` is the PathKey the value came from (None for fstab sources and plugstack entries).
"""

from __future__ import annotations

import fnmatch
import posixpath
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from archform.spec.provided_paths import ConfigSpec, PathKey


class Host(Protocol):
    """What the verdict needs of a walked host: its kind, what it has, and who provides a path."""

    kind: str
    provided: dict[str, str]

    def has(self, path: str) -> str | None: ...


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


def unprovided(
    need: Need, made: list[str], host: Host, device: Callable[[str], bool], image: str
) -> str | None:
    """Why nothing provides what the configuration names on this host (None: provided).

    `made` are the paths the services of the same file create with `mkdir -p` (a per-user
    path above one of them exists as soon as the service ran).
    """
    path, key = need.path, need.key
    if need.glob:
        if any(fnmatch.fnmatchcase(p, path) for p in host.provided):
            return None
        return f"matches nothing on {host.kind} nodes (Slurm then loads no plugin from it)"
    if key is not None and key.created_by:
        if key.per_user and "${" in path:
            fixed = path.split("${", 1)[0].rstrip("/")
            if fixed and host.has(fixed) is None:
                return (
                    f"{key.created_by} creates it as the job's user, but nothing creates "
                    f"{fixed} on {host.kind} nodes"
                )
            return None
        if key.parents:
            return None
        parent = posixpath.dirname(path)
        return None if host.has(parent) else f"{key.created_by} needs {parent} to exist"
    if "${" in path:
        if any(m == path or m.startswith(path.rstrip("/") + "/") for m in made):
            return None
        return "a per-user path that no service creates (nothing makes it for each user)"
    if host.has(path) is not None or device(path):
        return None
    return (
        f"nothing provides it on {host.kind} nodes (not shipped by image {image}, "
        "made by no task of site.yml)"
    )
