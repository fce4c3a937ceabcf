"""What provides a path on a node, as data (data/paths.yaml): configurations, services, programs.

`load_provided_paths` reads the table once. Every entry must name its source (a public URL);
the loader refuses one without. Image contents are the `paths` of each image in images.yaml.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from archform.spec.datafile import load_data

SYNTAXES = ("keyvalue", "words", "env", "fstab", "plugstack")
KINDS = ("controller", "login", "compute")


@dataclass(frozen=True, slots=True)
class PathKey:
    """A configuration key whose value is a path."""

    name: str
    on: tuple[str, ...] | None  # host kinds that use it; None: every host the file is on
    dir: bool  # the value is a file the service creates; its folder must exist
    absolute_only: bool
    created_by: str | None
    parents: bool
    per_user: bool


@dataclass(frozen=True, slots=True)
class ConfigSpec:
    """A generated configuration file and the keys of it that name paths."""

    name: str
    dest: tuple[str, ...]
    syntax: str
    on: tuple[str, ...] | None
    keys: dict[str, PathKey]
    source: str

    def matches(self, dest: str) -> bool:
        """True when a file installed at `dest` is this configuration."""
        return any(fnmatch.fnmatchcase(dest, pattern) for pattern in self.dest)


@dataclass(frozen=True, slots=True)
class Program:
    """A command that writes known files."""

    match: str
    chdir: str | None
    vars: dict[str, tuple[str, str]]  # name -> (regex with one group, default)
    provides: tuple[str, ...]
    source: str
    trees: tuple[str, ...] = ()  # folders it fills whole (Jinja over the role's variables)

    def written_by(self, command: str, chdir: str | None) -> list[str] | None:
        """The paths this program writes when `command` (in `chdir`) runs it, else None."""
        if not fnmatch.fnmatchcase(command, self.match):
            return None
        if self.chdir is not None and not fnmatch.fnmatchcase(chdir or "", self.chdir):
            return None
        values = {}
        for name, (pattern, default) in self.vars.items():
            found = re.search(pattern, command)
            values[name] = found.group(1) if found else default
        return [path.format(**values) for path in self.provides]


@dataclass(frozen=True, slots=True)
class Archive:
    """An archive a role packs on one node and unpacks on others: the folders it holds whole."""

    src: str  # fnmatch pattern over the rendered unarchive src
    trees: tuple[str, ...]  # Jinja over the role's variables
    source: str


@dataclass(frozen=True, slots=True)
class Device:
    """A path the kernel or udev creates at boot on compute nodes."""

    path: str  # fnmatch pattern
    fabrics: tuple[str, ...]  # made by the driver of these fabric kinds
    gpus: bool  # only on GPU nodes
    after: str | None  # made once this file (a udev rule) is installed
    source: str


@dataclass(frozen=True, slots=True)
class ProvidedPaths:
    """The whole table."""

    configs: dict[str, ConfigSpec]
    programs: tuple[Program, ...]
    packages: dict[str, tuple[str, ...]]
    module_path: str
    devices: tuple[Device, ...] = ()
    archives: tuple[Archive, ...] = ()
    package_trees: dict[str, tuple[str, ...]] = field(default_factory=dict)  # Jinja folders

    def config_for(self, dest: str) -> ConfigSpec | None:
        """The configuration a file installed at `dest` is, if archform knows it."""
        return next((c for c in self.configs.values() if c.matches(dest)), None)

    def module(self, name: str) -> str:
        """The sysfs folder of a loaded kernel module."""
        return self.module_path.format(name=name.replace("-", "_"))


def _source(where: str, raw: dict[str, Any]) -> str:
    source = str(raw.get("source") or "")
    if not source.startswith("https://"):
        raise ValueError(f"paths.yaml: {where} has no public source URL")
    return source


def _kinds(value: Any, where: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    kinds = tuple(str(v) for v in value)
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise ValueError(f"paths.yaml: {where}: unknown host kinds {unknown} (use {KINDS})")
    return kinds


def _key(name: str, raw: dict[str, Any], where: str) -> PathKey:
    return PathKey(
        name=name,
        on=_kinds(raw.get("on"), where),
        dir=bool(raw.get("dir", False)),
        absolute_only=bool(raw.get("absolute_only", False)),
        created_by=None if raw.get("created_by") is None else str(raw["created_by"]),
        parents=bool(raw.get("parents", False)),
        per_user=bool(raw.get("per_user", False)),
    )


def _config(name: str, raw: dict[str, Any]) -> ConfigSpec:
    syntax = str(raw["syntax"])
    if syntax not in SYNTAXES:
        raise ValueError(f"paths.yaml: configs.{name}: syntax {syntax!r} is not one of {SYNTAXES}")
    keys = raw.get("keys") or {}
    return ConfigSpec(
        name=name,
        dest=tuple(str(d) for d in raw["dest"]),
        syntax=syntax,
        on=_kinds(raw.get("on"), f"configs.{name}"),
        keys={str(k): _key(str(k), v or {}, f"configs.{name}.{k}") for k, v in keys.items()},
        source=_source(f"configs.{name}", raw),
    )


def _program(index: int, raw: dict[str, Any]) -> Program:
    return Program(
        match=str(raw["match"]),
        chdir=None if raw.get("chdir") is None else str(raw["chdir"]),
        vars={str(k): (str(v[0]), str(v[1])) for k, v in (raw.get("vars") or {}).items()},
        provides=tuple(str(p) for p in raw.get("provides") or ()),
        source=_source(f"programs[{index}]", raw),
        trees=tuple(str(t) for t in raw.get("trees") or ()),
    )


def parse_provided_paths(data: dict[str, Any]) -> ProvidedPaths:
    """The table from its raw data; every entry must carry a source URL."""
    packages, package_trees = {}, {}
    for name, raw in (data.get("packages") or {}).items():
        _source(f"packages.{name}", raw)
        packages[str(name)] = tuple(str(p) for p in raw.get("paths") or ())
        package_trees[str(name)] = tuple(str(t) for t in raw.get("trees") or ())
    modules = data["modules"]
    _source("modules", modules)
    devices = tuple(
        Device(
            path=str(raw["path"]),
            fabrics=tuple(str(f) for f in raw.get("fabrics") or ()),
            gpus=bool(raw.get("gpus", False)),
            after=None if raw.get("after") is None else str(raw["after"]),
            source=_source(f"devices[{i}]", raw),
        )
        for i, raw in enumerate(data.get("devices") or [])
    )
    archives = tuple(
        Archive(
            src=str(raw["src"]),
            trees=tuple(str(t) for t in raw["trees"]),
            source=_source(f"archives[{i}]", raw),
        )
        for i, raw in enumerate(data.get("archives") or [])
    )
    return ProvidedPaths(
        configs={str(k): _config(str(k), v) for k, v in data["configs"].items()},
        programs=tuple(_program(i, p) for i, p in enumerate(data.get("programs") or [])),
        packages=packages,
        module_path=str(modules["path"]),
        devices=devices,
        archives=archives,
        package_trees=package_trees,
    )


def provided_paths_data() -> dict[str, Any]:
    """The raw table from archform/spec/data/paths.yaml."""
    data: dict[str, Any] = load_data("paths.yaml")
    return data


@cache
def load_provided_paths() -> ProvidedPaths:
    """Load (once) the table."""
    return parse_provided_paths(provided_paths_data())
