"""What enroot containers need from the node, as data (data/containers.yaml).

Two kinds of fact, both read from the vendors' files and recorded with their source:

- which of enroot's own paths enroot creates itself (its loader's ``mkdir -p``) and which it
  only uses, so that a generated ``enroot.conf`` can be checked to name no path that nothing
  creates (`uncreated_paths`);
- per fabric kind, the host devices and libraries a training container must see, so that the
  role can bind them in and `archform verify` can check that it does.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from archform.spec.datafile import load_data


@dataclass(frozen=True, slots=True)
class Enroot:
    """Facts about the enroot release the roles install."""

    version: str
    creates: tuple[str, ...]
    must_exist: tuple[str, ...]
    hooks: tuple[str, ...]
    restricted_dev_hook: str
    gpu_hook_needs: str
    source: str


@dataclass(frozen=True, slots=True)
class HostLibraries:
    """Host library folders bound into containers whose image lacks its own copy."""

    bind: tuple[str, ...]
    library_path: tuple[str, ...]
    unless_image_has: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class FabricNeeds:
    """What a container needs from the node for one fabric kind."""

    kind: str
    devices: tuple[str, ...]
    environ: tuple[tuple[str, str], ...]
    libraries: HostLibraries | None
    source: str


@dataclass(frozen=True, slots=True)
class ContainerTable:
    """The whole table."""

    enroot: Enroot
    fabrics: dict[str, FabricNeeds]

    def fabric(self, kind: str) -> FabricNeeds:
        """The needs of a fabric kind; a kind the table does not list needs nothing."""
        return self.fabrics.get(kind, FabricNeeds(kind, (), (), None, ""))


def _strings(raw: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in raw or ())


def _fabric(kind: str, raw: Mapping[str, Any]) -> FabricNeeds:
    libs = raw.get("libraries")
    return FabricNeeds(
        kind=kind,
        devices=_strings(raw.get("devices")),
        environ=tuple((str(k), str(v)) for k, v in (raw.get("environ") or {}).items()),
        libraries=HostLibraries(
            bind=_strings(libs.get("bind")),
            library_path=_strings(libs.get("library_path")),
            unless_image_has=_strings(libs.get("unless_image_has")),
        )
        if libs
        else None,
        source=str(raw["source"]),
    )


@cache
def load_containers() -> ContainerTable:
    """Load (once) the container table."""
    data: dict[str, Any] = load_data("containers.yaml")
    raw = data["enroot"]
    enroot = Enroot(
        version=str(raw["version"]),
        creates=_strings(raw["creates"]),
        must_exist=_strings(raw["must_exist"]),
        hooks=_strings(raw["hooks"]),
        restricted_dev_hook=str(raw["restricted_dev_hook"]),
        gpu_hook_needs=str(raw["gpu_hook_needs"]),
        source=str(raw["source"]),
    )
    fabrics = {str(k): _fabric(str(k), v or {}) for k, v in sorted(data["fabrics"].items())}
    return ContainerTable(enroot=enroot, fabrics=fabrics)


def created_by_enroot(values: Mapping[str, str]) -> set[str]:
    """Every folder enroot's own ``mkdir -p`` makes for resolved ENROOT_* path values.

    The folders named by `Enroot.creates` and all their parents (``mkdir -p``), as absolute,
    normalised paths.
    """
    made: set[str] = set()
    for key in load_containers().enroot.creates:
        path = values.get(key)
        if not path:
            continue
        path = posixpath.normpath(path)
        while path not in ("/", ""):
            made.add(path)
            path = posixpath.dirname(path)
    return made


def uncreated_paths(values: Mapping[str, str], existing: set[str]) -> list[tuple[str, str]]:
    """(key, path) of each path enroot uses without creating that neither exists nor is made.

    `values` are resolved ENROOT_* values (after enroot's loader evaluated them); `existing`
    holds folders something else guarantees (the image, a boot unit). A path passes only when
    it is one of those or one enroot creates itself (`created_by_enroot`): ``mktemp -d -p``
    needs the folder itself, a parent that exists is not enough.
    """
    made = created_by_enroot(values) | {posixpath.normpath(p) for p in existing}
    out = []
    for key in load_containers().enroot.must_exist:
        path = values.get(key)
        if path and posixpath.normpath(path) not in made:
            out.append((key, path))
    return out
