"""Kubernetes minor-version lifecycle per managed service (spec/data/kubernetes.yaml).

`support(provider, version, today)` says where a version stands on a date: standard
support, the provider's extended support (EKS extended support, AKS LTS) or out of support,
with the days left in the current phase. The date is always an argument so nothing that
reads this table depends on the day it runs.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from archform.spec.datafile import load_data

Phase = Literal["standard", "extended", "unsupported"]


@dataclass(frozen=True, slots=True)
class VersionLife:
    """One minor version on one managed service."""

    version: str
    released: dt.date
    standard_end: dt.date
    extended_end: dt.date | None
    source: str


@dataclass(frozen=True, slots=True)
class ProviderCalendar:
    """A provider's calendar: its service name, the published page and its rows."""

    provider: str
    service: str
    calendar: str
    extended_name: str
    versions: dict[str, VersionLife]

    @property
    def newest(self) -> str:
        """The newest minor version in the table."""
        return max(self.versions, key=minor)

    def supported(self, today: dt.date) -> list[str]:
        """Versions in standard support on `today`, oldest first."""
        return sorted(
            (v for v, life in self.versions.items() if life.released <= today <= life.standard_end),
            key=minor,
        )


@dataclass(frozen=True, slots=True)
class Support:
    """Where a version stands on a date."""

    phase: Phase
    ends: dt.date | None  # end of the current phase (None: unsupported, or unknown end)
    days_left: int | None
    life: VersionLife


def minor(version: str) -> int:
    """`"1.30"` -> 30."""
    return int(version.split(".")[1])


def _date(value: Any) -> dt.date:
    return value if isinstance(value, dt.date) else dt.date.fromisoformat(str(value))


@cache
def load_calendars() -> dict[str, ProviderCalendar]:
    """The bundled table, by provider (aws, gcp, azure)."""
    data: dict[str, Any] = load_data("kubernetes.yaml")
    out: dict[str, ProviderCalendar] = {}
    for provider, raw in data["providers"].items():
        rows = {
            str(version): VersionLife(
                str(version),
                _date(row["released"]),
                _date(row["standard_end"]),
                None if row.get("extended_end") is None else _date(row["extended_end"]),
                str(row.get("source") or raw["calendar"]),
            )
            for version, row in raw["versions"].items()
        }
        out[str(provider)] = ProviderCalendar(
            str(provider),
            str(raw["service"]),
            str(raw["calendar"]),
            str(raw["extended_name"]),
            rows,
        )
    return out


def calendar(provider: str) -> ProviderCalendar | None:
    """The calendar of one provider, or None (on-prem has none)."""
    return load_calendars().get(provider)


def support(provider: str, version: str, today: dt.date) -> Support | None:
    """The support phase of `version` on `provider` at `today`; None when the table has no row."""
    cal = calendar(provider)
    life = cal.versions.get(version) if cal else None
    if life is None:
        return None
    if today <= life.standard_end:
        return Support("standard", life.standard_end, (life.standard_end - today).days, life)
    if life.extended_end is not None and today <= life.extended_end:
        return Support("extended", life.extended_end, (life.extended_end - today).days, life)
    return Support("unsupported", None, None, life)
