"""Address arithmetic on CIDR ranges: how much of the public internet a set of ranges admits.

The public space of a family is a universe (IPv4: all of it; IPv6: 2000::/3, the global
unicast space) minus the blocks IANA marks as not globally reachable (data/addresses.yaml,
with sources). Overlapping and adjacent ranges are merged first, so `[0.0.0.0/1,
128.0.0.0/1]` counts once as the whole internet and a range listed twice counts once.
"""

from __future__ import annotations

import ipaddress
import math
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from typing import Any

from archform.spec.datafile import load_data

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Interval = tuple[int, int]  # [first, last], inclusive


@dataclass(frozen=True, slots=True)
class Exposure:
    """The public addresses a set of ranges of one family admits."""

    version: int
    public: int  # public addresses covered
    total: int  # public addresses of the family
    ranges: tuple[str, ...]  # the given ranges that admit public addresses, as written

    @property
    def share(self) -> float:
        """Covered fraction of the family's public space, 0..1."""
        return self.public / self.total if self.total else 0.0

    @property
    def family(self) -> str:
        """'IPv4' or 'IPv6'."""
        return f"IPv{self.version}"


def _interval(net: Network) -> Interval:
    return int(net.network_address), int(net.broadcast_address)


def merge(intervals: Iterable[Interval]) -> list[Interval]:
    """Sorted, non-overlapping, non-adjacent intervals covering the same addresses."""
    out: list[Interval] = []
    for lo, hi in sorted(intervals):
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def _intersect(a: list[Interval], b: list[Interval]) -> list[Interval]:
    out: list[Interval] = []
    i = j = 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if lo <= hi:
            out.append((lo, hi))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def _subtract(a: list[Interval], b: list[Interval]) -> list[Interval]:
    out: list[Interval] = []
    for lo, hi in a:
        cur = lo
        for blo, bhi in b:
            if bhi < cur or blo > hi:
                continue
            if blo > cur:
                out.append((cur, blo - 1))
            cur = max(cur, bhi + 1)
            if cur > hi:
                break
        if cur <= hi:
            out.append((cur, hi))
    return out


def _size(intervals: Iterable[Interval]) -> int:
    return sum(hi - lo + 1 for lo, hi in intervals)


@cache
def _public_space(version: int) -> tuple[Interval, ...]:
    data: dict[str, Any] = load_data("addresses.yaml")[f"ipv{version}"]
    universe = [_interval(ipaddress.ip_network(data["universe"]))]
    blocked = merge(_interval(ipaddress.ip_network(c)) for c in data["not_public"])
    return tuple(_subtract(universe, blocked))


def public_addresses(cidr: str) -> int:
    """How many public addresses one range admits (0 for private or reserved ranges)."""
    net = ipaddress.ip_network(cidr, strict=False)
    return _size(_intersect([_interval(net)], list(_public_space(net.version))))


def exposure(cidrs: Iterable[str]) -> list[Exposure]:
    """Per address family present in `cidrs`, the public space the union of its ranges admits."""
    by_version: dict[int, list[str]] = {}
    for cidr in cidrs:
        by_version.setdefault(ipaddress.ip_network(cidr, strict=False).version, []).append(cidr)
    out: list[Exposure] = []
    for version, group in sorted(by_version.items()):
        space = list(_public_space(version))
        union = merge(_interval(ipaddress.ip_network(c, strict=False)) for c in group)
        out.append(
            Exposure(
                version=version,
                public=_size(_intersect(union, space)),
                total=_size(space),
                ranges=tuple(c for c in group if public_addresses(c)),
            )
        )
    return out


def percent(share: float) -> str:
    """A share as a percentage: three significant digits below 1%, never rounded to 0 or 100."""
    value = share * 100
    if value == 0 or value == 100:
        return f"{value:.0f}%"
    if value < 1:
        digits = max(1, 2 - math.floor(math.log10(value)))
        return f"{value:.{digits}f}%"
    for digits in range(1, 12):
        text = f"{value:.{digits}f}"
        if float(text) < 100:
            return f"{text}%"
    return f"{value:.3g}%"
