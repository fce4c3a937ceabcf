"""Add-on releases per Kubernetes minor (spec/data/addons.yaml), with their sources.

`addons_for(minor)` gives the cluster-autoscaler image and the KEDA chart a fleet on that
minor installs, or None when the table has no sourced release for it (validate refuses
such a blueprint, spec.buildable).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from archform.spec.datafile import load_data
from archform.spec.kubernetes import minor


@dataclass(frozen=True, slots=True)
class AddonRelease:
    """One add-on release chosen for a Kubernetes minor."""

    name: str
    chart: str
    chart_version: str
    repo: str
    version: str  # the add-on's own version (image tag without the leading v)
    released: str
    tested: bool  # inside the vendor's tested/compatible window for the minor
    basis: str  # why this release: the vendor's rule or matrix row, in words
    source: str


@dataclass(frozen=True, slots=True)
class Addons:
    """The add-on releases of one Kubernetes minor."""

    kubernetes: str
    cluster_autoscaler: AddonRelease
    cluster_autoscaler_image: str
    keda: AddonRelease


@cache
def _table() -> dict[str, Any]:
    data: dict[str, Any] = load_data("addons.yaml")
    return data


def known_minors() -> list[str]:
    """Minors with a sourced release of every add-on, oldest first."""
    return sorted((m for m in _table()["cluster_autoscaler"]["versions"] if _keda(m)), key=minor)


def _keda(version: str) -> AddonRelease | None:
    raw = _table()["keda"]
    releases = raw["releases"]
    want = minor(version)
    inside = [r for r in releases if minor(r["tested"][0]) <= want <= minor(r["tested"][1])]
    newest = max(releases, key=lambda r: minor(r["tested"][1]))
    if inside:
        pick, tested = max(inside, key=lambda r: minor(r["tested"][1])), True
        window = f"{pick['tested'][0]}-{pick['tested'][1]}"
        basis = f"KEDA {pick['version']} is tested on Kubernetes {window}"
    elif want == minor(newest["tested"][1]) + 1:
        # KEDA tests each release on N-2 minors; the next minor waits for the next release.
        pick, tested = newest, False
        basis = (
            f"no KEDA release is tested on Kubernetes {version} yet; KEDA {pick['version']} "
            f"(the newest) is tested on {pick['tested'][0]}-{pick['tested'][1]}"
        )
    else:
        return None
    return AddonRelease(
        "keda",
        str(raw["chart"]),
        str(pick["version"]),
        str(raw["repo"]),
        str(pick["version"]),
        str(pick["released"]),
        tested,
        basis,
        str(raw["source"]),
    )


def addons_for(version: str) -> Addons | None:
    """The add-on releases for Kubernetes `version` ("1.36"), or None without a sourced row."""
    raw = _table()["cluster_autoscaler"]
    row = raw["versions"].get(version)
    keda = _keda(version)
    if row is None or keda is None:
        return None
    ca = AddonRelease(
        "cluster-autoscaler",
        str(raw["chart"]),
        str(raw["chart_version"]),
        str(raw["repo"]),
        str(row["version"]),
        str(row["released"]),
        True,
        f"cluster-autoscaler {row['version']}: the newest release of the control plane's minor",
        str(raw["source"]),
    )
    return Addons(version, ca, f"{raw['image']}:v{row['version']}", keda)
