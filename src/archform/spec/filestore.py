"""Filestore service tiers and the capacities they accept (data/filestore.yaml).

`check_capacity` says why a size does not fit a tier, or None; `provisioned_gib` is the
size archform asks for (rounded up to the tier's step inside the band that holds it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

from archform.spec.datafile import load_data


@dataclass(frozen=True, slots=True)
class Band:
    """One capacity band of a tier, GiB, and the step capacity grows in."""

    min_gib: int
    max_gib: int
    step_gib: int


@dataclass(frozen=True, slots=True)
class Tier:
    """One Filestore service tier."""

    name: str
    location: str  # "zone" or "region"
    bands: tuple[Band, ...]

    def band_for(self, gib: float) -> Band | None:
        """The band whose range holds `gib`, or None (the bands' maxima are on their steps)."""
        return next((b for b in self.bands if b.min_gib <= gib <= b.max_gib), None)

    @property
    def span(self) -> str:
        """'1024-9984 GiB in 256 GiB steps, 10240-102400 GiB in 2560 GiB steps'."""
        return ", ".join(
            f"{b.min_gib}-{b.max_gib} GiB in {b.step_gib} GiB steps" for b in self.bands
        )


@dataclass(frozen=True, slots=True)
class Filestore:
    """Every tier, the default one and the source."""

    default: str
    tiers: dict[str, Tier]
    source: str


@cache
def filestore() -> Filestore:
    """The tier table (bundled data)."""
    raw = load_data("filestore.yaml")
    tiers = {
        name: Tier(
            name=name,
            location=str(entry["location"]),
            bands=tuple(
                Band(int(b["min_gib"]), int(b["max_gib"]), int(b["step_gib"]))
                for b in entry["ranges"]
            ),
        )
        for name, entry in raw["tiers"].items()
    }
    if raw["default"] not in tiers:
        raise ValueError("data/filestore.yaml: default names no tier")
    return Filestore(default=str(raw["default"]), tiers=tiers, source=str(raw["source"]))


def capacity_gib(size_tib: float) -> float:
    """A blueprint's capacity_tib in GiB."""
    return size_tib * 1024


def check_capacity(tier_name: str, size_tib: float) -> str | None:
    """Why `size_tib` does not fit the tier, or None when it does."""
    tier = filestore().tiers[tier_name]
    gib = capacity_gib(size_tib)
    if tier.band_for(gib) is not None:
        return None
    return f"Filestore {tier_name} takes {tier.span}; capacity_tib {size_tib:g} is {gib:g} GiB"


def provisioned_gib(tier_name: str, size_tib: float) -> int:
    """The capacity archform provisions: the size rounded up to its band's step."""
    tier = filestore().tiers[tier_name]
    gib = capacity_gib(size_tib)
    band = tier.band_for(gib)
    assert band is not None, "checked by spec.buildable"
    return min(band.max_gib, math.ceil(gib / band.step_gib) * band.step_gib)
