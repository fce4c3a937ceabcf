"""Regions, zones and instance-type offerings of each cloud, checked at the blueprint line.

The facts are data: ``data/places.json``, written by ``scripts/refresh_places.py`` from the
providers' published tables (each source named in the file's ``sources``). A misspelt
region, a zone of another region and an instance type the region (or, on GCP, the zone)
does not offer are refused here at load time, so validate, lint and generate agree.

What the data cannot say is not refused: a catalog type without offering data for its
cloud (``known_types``) is not checked, and AWS and Azure zone names map to physical zones
per account or subscription, so their per-zone offerings are not checked by name.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from archform.spec.errors import SpecProblem
from archform.spec.paths import Loc, format_path
from archform.spec.provider import names_where, spec_of
from archform.spec.source import SourceMap

_SHOWN = 6  # names listed in a hint before "..."


@dataclass(frozen=True, slots=True)
class CloudPlaces:
    """One cloud's regions (with zones and offered types) and per-zone offerings."""

    regions: dict[str, tuple[frozenset[str], frozenset[str]]]  # region -> (zones, types)
    zone_types: dict[str, frozenset[str]]
    known_types: frozenset[str]

    def region_of_zone(self, zone: str) -> str | None:
        """The region a zone name belongs to, or None."""
        return next((r for r, (zones, _) in self.regions.items() if zone in zones), None)

    def regions_offering(self, itype: str) -> list[str]:
        """Regions whose data lists the instance type."""
        return sorted(r for r, (_, types) in self.regions.items() if itype in types)


@cache
def load_places() -> dict[str, CloudPlaces]:
    """The bundled place data, loaded once (only when a document names a cloud region)."""
    text = resources.files("archform.spec").joinpath("data/places.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return {
        cloud: CloudPlaces(
            regions={
                name: (frozenset(raw["zones"]), frozenset(raw["types"]))
                for name, raw in data[cloud]["regions"].items()
            },
            zone_types={z: frozenset(t) for z, t in (data[cloud].get("zone_types") or {}).items()},
            known_types=frozenset(data[cloud]["known_types"]),
        )
        for cloud in names_where(lambda p: p.cloud)
        if cloud in data
    }


class _Places:
    def __init__(self, file: str, source: SourceMap) -> None:
        self.file = file
        self.source = source
        self.problems: list[SpecProblem] = []

    def add(self, loc: Loc, message: str, hint: str) -> None:
        pos = self.source.locate(loc, prefer="value")
        path = format_path(loc)
        text = f"{path}: {message}" if path else message
        self.problems.append(SpecProblem(self.file, pos.line, pos.column, text, hint, path))

    def region(self, cloud: str, loc: Loc, region: str) -> bool:
        """Refuse a region the cloud does not have; True when the region is known."""
        places = load_places()[cloud]
        if region in places.regions:
            return True
        close = _closest(region, list(places.regions))
        hint = (
            f"did you mean {close!r}?"
            if close
            else f"{spec_of(cloud).label} regions include {_names(sorted(places.regions))}"
        )
        spec = spec_of(cloud)
        self.add(loc, f"{region!r} is not {spec.article} {spec.label} region", hint)
        return False

    def zones(self, cloud: str, region: str, loc: Loc, zones: list[str]) -> None:
        places = load_places()[cloud]
        own = sorted(places.regions[region][0])
        for i, zone in enumerate(zones):
            if zone in own or not zone:  # "": not this region's to check
                continue
            where = (*loc, i)
            if not own:
                self.add(
                    where,
                    f"{region} has no availability zones",
                    "remove `zones:`, or choose a region with zones",
                )
                continue
            other = places.region_of_zone(zone)
            if other is not None:
                self.add(
                    where,
                    f"{zone} is a zone of {other}, not of {region}",
                    f"use a zone of {region}: {_names(own)}",
                )
                continue
            close = _closest(zone, own)
            hint = f"did you mean {close!r}?" if close else f"zones of {region}: {_names(own)}"
            self.add(where, f"{zone!r} is not a zone of {region}", hint)

    def offered(self, cloud: str, region: str, loc: Loc, itype: str) -> None:
        """Refuse an instance type the data says the region does not offer."""
        places = load_places()[cloud]
        if itype not in places.known_types or itype in places.regions[region][1]:
            return
        elsewhere = places.regions_offering(itype)
        hint = (
            f"regions that offer it: {_names(elsewhere)}"
            if elsewhere
            else "no region lists it; choose another instance type"
        )
        self.add(loc, f"{itype} is not offered in {region}", hint)

    def zone_offered(self, cloud: str, region: str, loc: Loc, zones: list[str], itype: str) -> None:
        """GCP publishes offerings per zone: refuse a zone that lacks the machine type."""
        places = load_places()[cloud]
        if itype not in places.known_types or itype not in places.regions[region][1]:
            return
        for i, zone in enumerate(zones):
            have = places.zone_types.get(zone)
            if have is None or itype in have or zone not in places.regions[region][0]:
                continue
            ok = sorted(
                z for z in places.regions[region][0] if itype in places.zone_types.get(z, ())
            )
            self.add(
                (*loc, i),
                f"{itype} is not offered in zone {zone}",
                f"zones of {region} that offer it: {_names(ok)}",
            )


def _closest(word: str, options: list[str]) -> str | None:
    """The closest option; ties go to the longer common prefix (us-eest-1 -> us-east-1)."""
    found = difflib.get_close_matches(word, options, n=5, cutoff=0.6)
    if not found:
        return None

    def rank(option: str) -> tuple[float, int]:
        ratio = difflib.SequenceMatcher(None, word, option).ratio()
        prefix = next(
            (i for i, (a, b) in enumerate(zip(word, option, strict=False)) if a != b), len(option)
        )
        return (-round(ratio, 6), -prefix)

    return min(found, key=rank)


def _names(names: list[str]) -> str:
    shown = ", ".join(names[:_SHOWN])
    return shown + (f" (+{len(names) - _SHOWN} more)" if len(names) > _SHOWN else "")


def place_problems(file: str, source: SourceMap, model: Any) -> list[SpecProblem]:
    """Regions, zones and offerings of one validated document."""
    check = _Places(file, source)
    kind = model.kind
    if kind == "TrainingCluster" and spec_of(model.placement.provider).cloud:
        _training(check, model)
    elif kind == "InferenceFleet":
        _fleet(check, model)
    elif kind == "Platform":
        check.region(model.registry.provider, ("registry", "region"), model.registry.region)
    return check.problems


def _training(check: _Places, cluster: Any) -> None:
    from archform.spec.buildable import group_loc

    placement = cluster.placement
    cloud = placement.provider
    if placement.region is not None:
        named: list[tuple[Loc, str]] = [(("placement", "region"), placement.region)]
    else:
        named = [(("placement", "regions", i), r) for i, r in enumerate(placement.regions or [])]
    known = [region for loc, region in named if check.region(cloud, loc, region)]
    if not known or len(known) != len(named):
        return
    region = known[0]
    # Several regions are accepted so that lint can report TRN001/TRN002: a zone of any
    # region named is then the linter's to judge, not a typo.
    zones = list(placement.zones)
    others = {z for r in known[1:] for z in load_places()[cloud].regions[r][0]}
    check.zones(
        cloud, region, ("placement", "zones"), [z if z not in others else "" for z in zones]
    )
    for i, group in enumerate(cluster.compute.groups):
        if group.instance_type is None:
            continue
        check.offered(cloud, region, (*group_loc(cluster, i), "instance_type"), group.instance_type)
        if spec_of(cloud).zones_per_instance:
            check.zone_offered(cloud, region, ("placement", "zones"), zones, group.instance_type)


def _fleet(check: _Places, fleet: Any) -> None:
    placement = fleet.placement
    cloud = placement.provider
    if placement.regions is not None:
        named: list[tuple[Loc, str]] = [
            (("placement", "regions", i), r) for i, r in enumerate(placement.regions)
        ]
    else:
        named = [(("placement", "region"), str(placement.region))]
    if fleet.model.source_region is not None:
        check.region(cloud, ("model", "source_region"), fleet.model.source_region)
    pools = [(("gpu_pool", "instance_type"), fleet.gpu_pool.instance_type)]
    if fleet.system_pool is not None:
        pools.append((("system_pool", "instance_type"), fleet.system_pool.instance_type))
    for loc, region in named:
        if not check.region(cloud, loc, region):
            continue
        for pool_loc, itype in pools:
            check.offered(cloud, region, pool_loc, itype)
