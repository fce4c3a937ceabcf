"""Shared by the SEC rules: which allow-lists admit too much of the public internet.

A list is judged by address arithmetic (`archform.spec.addresses`), never by comparing
strings: `[0.0.0.0/1, 128.0.0.0/1]` and `2000::/3` are the whole internet as much as
`0.0.0.0/0` and `::/0` are.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from archform.spec.addresses import Exposure, exposure, percent, public_addresses


@dataclass(frozen=True, slots=True)
class OpenRange:
    """One address family of an allow-list that admits more public space than allowed."""

    index: int  # the list entry to point at: the one admitting the most public addresses
    exposure: Exposure

    def describe(self, limit_percent: float) -> str:
        """'50% of the public IPv4 internet (0.0.0.0/1, 128.0.0.0/1); threshold: 0.1%'."""
        e = self.exposure
        whole = " (the whole internet)" if e.public == e.total else ""
        return (
            f"{percent(e.share)} of the public {e.family} internet{whole} "
            f"through {', '.join(e.ranges)}; threshold: {limit_percent:g}%"
        )


def open_ranges(cidrs: Sequence[str], limit_percent: float) -> Iterator[OpenRange]:
    """Per family, the ranges of `cidrs` whose union covers more than `limit_percent`."""
    for exp in exposure(cidrs):
        if exp.share * 100 <= limit_percent:
            continue
        same = [
            i
            for i, c in enumerate(cidrs)
            if ipaddress.ip_network(c, strict=False).version == exp.version
        ]
        index = max(same, key=lambda i: (public_addresses(cidrs[i]), -i))
        yield OpenRange(index, exp)
