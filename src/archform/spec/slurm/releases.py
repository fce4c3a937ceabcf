"""Slurm version parsing and ordering, supported releases, feature gates, upgrade window."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache, total_ordering
from importlib import resources
from typing import Any

_VERSION = re.compile(r"^(\d{2})\.(\d{2})(?:\.(\d{1,2}))?$")


@total_ordering
@dataclass(frozen=True)
class SlurmVersion:
    """A Slurm version: release (major.minor, e.g. 24.11) and optional maintenance number."""

    major: int
    minor: int
    patch: int | None = None

    @property
    def release(self) -> str:
        """'24.11' (the release the option tables are keyed by)."""
        return f"{self.major:02d}.{self.minor:02d}"

    @property
    def release_tuple(self) -> tuple[int, int]:
        """(24, 11)."""
        return self.major, self.minor

    def _key(self) -> tuple[int, int, int]:
        return self.major, self.minor, -1 if self.patch is None else self.patch

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, SlurmVersion):
            return NotImplemented
        return self._key() < other._key()

    def __str__(self) -> str:
        return self.release if self.patch is None else f"{self.release}.{self.patch}"


def parse_version(text: str) -> SlurmVersion:
    """'24.11', '24.11.5' or 'slurm 24.11.5' (the output of `slurmctld -V`) -> SlurmVersion.

    Raises ValueError on anything else.
    """
    word = text.strip().split()[-1] if text.strip() else ""
    match = _VERSION.fullmatch(word)
    if not match:
        raise ValueError(f"not a Slurm version: {text!r} (expected e.g. 24.11 or 24.11.5)")
    major, minor, patch = match.groups()
    return SlurmVersion(int(major), int(minor), int(patch) if patch is not None else None)


def _data_dir() -> Any:
    return resources.files("archform.spec").joinpath("data/slurm")


@cache
def supported_releases() -> tuple[str, ...]:
    """Releases with an option table in data/slurm, oldest first ('22.05', ..., '26.05')."""
    names = [p.name[:-5] for p in _data_dir().iterdir() if _VERSION.fullmatch(p.name[:-5] or "-")]
    return tuple(sorted(names, key=lambda r: parse_version(r)))


@cache
def release_data(release: str) -> dict[str, Any]:
    """The option table of one release (data/slurm/<release>.json)."""
    if release not in supported_releases():
        raise KeyError(release)
    data: dict[str, Any] = json.loads(_data_dir().joinpath(f"{release}.json").read_text("utf-8"))
    return data


@cache
def _upgrades() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(_data_dir().joinpath("upgrades.json").read_text("utf-8"))
    return data


def default_version() -> str:
    """The version a blueprint gets when it declares none."""
    return str(_upgrades()["default_version"])


@dataclass(frozen=True)
class Release:
    """What archform knows about one supported release."""

    version: SlurmVersion
    tag: str
    tag_url: str


def release_info(version: SlurmVersion | str) -> Release:
    """The release a version belongs to, with the tag its table was read from."""
    v = parse_version(version) if isinstance(version, str) else version
    data = release_data(v.release)
    return Release(parse_version(v.release), str(data["tag"]), str(data["tag_url"]))


def is_supported(version: SlurmVersion | str) -> bool:
    """True when the version's release has an option table."""
    v = parse_version(version) if isinstance(version, str) else version
    return v.release in supported_releases()


def has_plugin(version: SlurmVersion, kind: str, name: str) -> bool:
    """True when src/plugins/<kind>/<name> exists in the release (e.g. topology, block)."""
    plugins: dict[str, list[str]] = release_data(version.release)["plugins"]
    return name in plugins.get(kind, [])


def feature(version: SlurmVersion, name: str) -> bool:
    """Feature gates, each read from the release's own tables.

    - topology_block: the topology/block plugin exists (23.11 on);
    - block_sizes: topology.conf accepts BlockSizes (24.05 on);
    - gres_autodetect_nvidia: gres.conf AutoDetect=nvidia has its gpu/nvidia plugin (24.11 on);
    - prolog_epilog_timeouts: slurm.conf has separate PrologTimeout and EpilogTimeout (25.05 on,
      SchedMD/slurm 60be338225 "Add PrologTimeout and EpilogTimeout slurm.conf config options";
      PrologEpilogTimeout, read since 15.08, is then only their fallback).
    """
    if name == "topology_block":
        return has_plugin(version, "topology", "block")
    if name == "block_sizes":
        topo = release_data(version.release)["files"]["topology.conf"]["options"]
        return "BlockSizes" in topo
    if name == "gres_autodetect_nvidia":
        return has_plugin(version, "gpu", "nvidia")
    if name == "prolog_epilog_timeouts":
        options = release_data(version.release)["files"]["slurm.conf"]["options"]
        return "PrologTimeout" in options and "EpilogTimeout" in options
    raise KeyError(name)


def flat_topology_plugin(version: SlurmVersion) -> str:
    """The TopologyPlugin that means 'no topology': none, then default (23.11), then flat."""
    for name in ("flat", "default", "none"):
        if has_plugin(version, "topology", name):
            return f"topology/{name}"
    raise KeyError(f"Slurm {version.release} has no flat topology plugin in its table")


def release_index(release: str) -> int:
    """Position of a release among the supported ones (for counting upgrade steps)."""
    return supported_releases().index(release)


def upgrade_window(target: SlurmVersion) -> int:
    """How many releases back `target` upgrades from (https://slurm.schedmd.com/upgrades.html)."""
    window = 0
    for step in _upgrades()["window"]:
        if target >= parse_version(str(step["from"])):
            window = int(step["releases_back"])
    return window


def nearest_releases(want: SlurmVersion, have: list[SlurmVersion]) -> list[SlurmVersion]:
    """The exact release when present, else the nearest older and the nearest newer."""
    same = [v for v in have if v.release == want.release]
    if same:
        return [max(same)]
    older = [v for v in have if v.release_tuple < want.release_tuple]
    newer = [v for v in have if v.release_tuple > want.release_tuple]
    return ([max(older)] if older else []) + ([min(newer)] if newer else [])


def max_nodes(version: SlurmVersion) -> int | None:
    """Most nodes slurmctld of the release accepts, None when only memory limits it.

    From 24.11, create_node_record_at() (src/common/node_conf.c) refuses records past
    MAX_SLURM_NODES = 65536 (slurm/slurm.h): "Attempting to create nodes past max node limit".
    """
    value = release_data(version.release)["limits"]["max_nodes"]
    return int(value) if value is not None else None


@cache
def hostlist_max_range() -> int:
    """Most hosts one hostlist range may name in every supported release.

    _parse_single_range() in src/common/hostlist.c refuses `pfx[lo-hi]` when
    hi - lo + 1 > MAX_RANGE ("Too many hosts in range"); MAX_RANGE is 64*1024 in every release.
    """
    return min(int(release_data(r)["limits"]["max_range"]) for r in supported_releases())


def build_version(version: SlurmVersion) -> str:
    """The full version to build: the declared one, or the patch release of the table's tag.

    'slurm-24-11-5-1' -> '24.11.5' (SchedMD tags are slurm-MM-mm-PATCH-BUILD).
    """
    if version.patch is not None:
        return str(version)
    tag = str(release_data(version.release)["tag"])
    major, minor, patch = tag.split("-")[1:4]
    return f"{major}.{minor}.{patch}"
