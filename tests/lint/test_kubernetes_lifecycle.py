"""Kubernetes version lifecycle: the dated calendar data and lint rule INF011.

The rule's date is an input (`--today`, `ARCHFORM_TODAY`), so every test here names the day
it judges at and none of them changes verdict as the calendar moves on.
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
from pathlib import Path

import pytest

from archform.spec.kubernetes import load_calendars, minor, support
from archform.spec.models.inference import KubernetesSettings
from support import BLUEPRINTS, bundled_blueprints, run_cli

FLEETS = [
    "inference-3region-a10.yaml",
    "inference-h100-single-region.yaml",
    "platform-two-tier.yaml",
]


def _months_later(day: dt.date, months: int) -> dt.date:
    year, month = divmod(day.month - 1 + months, 12)
    return day.replace(year=day.year + year, month=month + 1, day=min(day.day, 28))


def _lint(paths: list[Path], *extra: str, env: dict[str, str] | None = None) -> dict[str, object]:
    proc = run_cli(
        ["lint", *map(str, paths), "--select", "INF011", "--format", "json", "--exit-zero", *extra],
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    result: dict[str, object] = json.loads(proc.stdout)
    return result


def _as_130(tmp_path: Path, name: str) -> Path:
    text = (BLUEPRINTS / name).read_text("utf-8")
    assert 'version: "1.36"' in text
    out = tmp_path / name
    out.write_text(text.replace('version: "1.36"', 'version: "1.30"'), "utf-8")
    return out


@pytest.mark.parametrize("name", FLEETS)
def test_fires_on_130_at_2026_12_01(tmp_path: Path, name: str) -> None:
    """The issue's finding: "1.30" is past the end of EKS extended support (July 2026)."""
    findings = _lint([_as_130(tmp_path, name)], "--today", "2026-12-01")["findings"]
    assert isinstance(findings, list) and len(findings) == 1
    assert findings[0]["rule"] == "INF011" and findings[0]["severity"] == "error"
    assert "2026-07-23" in findings[0]["message"] or "2026-07-31" in findings[0]["message"]


def test_the_date_is_an_input(tmp_path: Path) -> None:
    path = _as_130(tmp_path, "platform-two-tier.yaml")
    # 2025-01-01: 1.30 was in EKS standard support (until 2025-07-23), more than 90 days left.
    assert _lint([path], "--today", "2025-01-01")["findings"] == []
    # 2025-06-01: 52 days before the end of standard support -> near (warning).
    near = _lint([path], "--today", "2025-06-01")["findings"]
    assert [f["severity"] for f in near] == ["warning"]  # type: ignore[union-attr,index]
    # 2026-01-01: in paid extended support -> warning naming it.
    ext = _lint([path], env={"ARCHFORM_TODAY": "2026-01-01"})["findings"]
    assert [f["severity"] for f in ext] == ["warning"]  # type: ignore[union-attr,index]
    assert "extended support" in ext[0]["message"]  # type: ignore[index]


def test_bad_today_is_a_usage_error(tmp_path: Path) -> None:
    proc = run_cli(["lint", str(BLUEPRINTS / "platform-two-tier.yaml"), "--today", "tomorrow"])
    assert proc.returncode == 2 and "--today='tomorrow' is not a date" in proc.stderr


def test_bundled_blueprints_are_supported_at_2026_12_01() -> None:
    assert _lint(bundled_blueprints(), "--today", "2026-12-01")["findings"] == []


def test_default_version_is_in_standard_support_everywhere() -> None:
    default = KubernetesSettings().version
    cals = load_calendars()
    as_of = dt.date(2026, 12, 1)
    for provider in ("aws", "gcp", "azure"):
        state = support(provider, default, as_of)
        assert state is not None and state.phase == "standard", provider
        assert state.days_left is not None and state.days_left > 90, provider
        assert default in cals[provider].supported(as_of)


def test_calendar_rows_are_sourced_and_follow_the_published_policies() -> None:
    cals = load_calendars()
    assert set(cals) == {"aws", "gcp", "azure"}
    for provider, cal in cals.items():
        assert cal.calendar.startswith("https://")
        for version, life in cal.versions.items():
            assert life.source.startswith("https://"), (provider, version)
            assert life.released < life.standard_end, (provider, version)
            if life.extended_end is not None:
                assert life.standard_end < life.extended_end, (provider, version)
        ordered = sorted(cal.versions, key=minor)
        for older, newer in itertools.pairwise(ordered):
            assert cal.versions[older].standard_end <= cal.versions[newer].standard_end
    # EKS: 14 months of standard support from release, then 12 months of extended support
    # (https://docs.aws.amazon.com/eks/latest/userguide/kubernetes-versions.html).
    for version, life in cals["aws"].versions.items():
        assert abs((_months_later(life.released, 14) - life.standard_end).days) <= 10, version
        assert life.extended_end == life.standard_end.replace(year=life.standard_end.year + 1)
    # AKS LTS: about two years from GA (https://learn.microsoft.com/azure/aks/long-term-support).
    for version, life in cals["azure"].versions.items():
        assert life.extended_end is not None
        assert abs((_months_later(life.released, 24) - life.extended_end).days) <= 60, version
