"""INF011 (Kubernetes version past or near the end of support): phases, dates, hints, position.

Dates are the providers' published calendars as bundled in spec/data/kubernetes.yaml:
- EKS (https://docs.aws.amazon.com/eks/latest/userguide/kubernetes-versions.html):
  1.30 standard to 2025-07-23, extended to 2026-07-23; 1.33 standard to 2026-07-29;
  1.34 to 2026-12-02; 1.35 to 2027-03-27; 1.36 released 2026-06-02, standard to 2027-08-02,
  extended to 2028-08-02; 1.29 is the oldest row.
- GKE (https://cloud.google.com/kubernetes-engine/docs/release-schedule): 1.33 standard to
  2026-08-03, no published extended end.
The rule's doc: an error past every phase, a warning on extended support, a warning when
standard support ends within `near_days` (default 90); the hint names the newest version in
standard support.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re

import pydantic
import pytest

from archform.lint.engine import lint
from archform.lint.finding import Finding
from archform.lint.rule import load_rules
from archform.spec import load_text

EKS = "https://docs.aws.amazon.com/eks/latest/userguide/kubernetes-versions.html"
HEAD = """\
version: 1
kind: InferenceFleet
name: {name}
model: {{name: llama-3.1-8b, params: 8e9, source: "s3://models/llama/"}}
server: {{image: "vllm/vllm-openai:v0.6.3"}}
"""
AWS = """\
placement: {provider: aws, regions: [us-east-1, eu-west-2]}
gpu_pool: {instance_type: g6.xlarge, min_nodes_per_region: 2, max_nodes_per_region: 8}
"""
GCP = """\
placement: {provider: gcp, regions: [us-central1, europe-west4]}
gpu_pool: {instance_type: g2-standard-4, min_nodes_per_region: 2, max_nodes_per_region: 8}
"""


def _fleet(version: str | None, name: str = "f", cloud: str = AWS) -> str:
    # the version on line 9, in block style so its line differs from `kubernetes:` (line 8)
    tail = "" if version is None else f'kubernetes:\n  version: "{version}"\n'
    return HEAD.format(name=name) + cloud + tail


def _findings(text: str, today: dt.date, near_days: int | None = None) -> list[Finding]:
    rule = load_rules().get("INF011")
    assert rule is not None
    options = {} if near_days is None else {"INF011": rule.options(near_days=near_days)}
    blueprints = load_text(text, "t.yaml")
    return list(lint(blueprints, rules=[rule], options=options, today=today).findings)


# EKS 1.35 leaves standard support on 2027-03-27: 90 days before is 2026-12-27
@pytest.mark.parametrize(
    ("today", "flagged"),
    [(dt.date(2026, 12, 26), False), (dt.date(2026, 12, 27), True), (dt.date(2027, 1, 1), True)],
)
def test_default_near_days_is_90_inclusive(today: dt.date, flagged: bool) -> None:
    got = _findings(_fleet("1.35"), today)
    assert [(f.line, f.severity) for f in got] == ([(9, "warning")] if flagged else [])
    if flagged:
        days = (dt.date(2027, 3, 27) - today).days
        assert got[0].message.startswith(
            f"Kubernetes 1.35 leaves EKS standard support on 2027-03-27, in {days} days; "
            "threshold: 90 days"
        )


def test_near_days_option_moves_the_threshold() -> None:
    today = dt.date(2026, 12, 27)  # 90 days left on 1.35
    assert _findings(_fleet("1.35"), today, near_days=89) == []
    assert len(_findings(_fleet("1.35"), today, near_days=90)) == 1


def test_hint_names_the_newest_version_in_standard_support() -> None:
    # on 2026-07-01 EKS has 1.33, 1.34, 1.35 and 1.36 in standard support; 1.33 has 28 days
    (hit,) = _findings(_fleet("1.33"), dt.date(2026, 7, 1))
    assert "in 28 days" in hit.message
    assert hit.hint == (
        "upgrade to 1.36 (in standard support on EKS until 2027-08-02), one minor version at a time"
    )


def test_hint_when_nothing_is_in_standard_support() -> None:
    # past every row's standard end (the newest, 1.36, ends 2027-08-02; extended 2028-08-02)
    (hit,) = _findings(_fleet("1.36"), dt.date(2030, 1, 1))
    assert hit.severity == "error"
    assert hit.message.startswith("Kubernetes 1.36 reached the end of EKS support on 2028-08-02")
    assert hit.hint == f"upgrade to a version in standard support; see {EKS}"


def test_unsupported_names_the_end_of_extended_support_else_of_standard() -> None:
    (eks,) = _findings(_fleet("1.30"), dt.date(2026, 11, 30))
    assert eks.message.startswith("Kubernetes 1.30 reached the end of EKS support on 2026-07-23 ")
    (gke,) = _findings(_fleet("1.33", cloud=GCP), dt.date(2026, 11, 30))
    assert gke.message.startswith("Kubernetes 1.33 reached the end of GKE support on 2026-08-03 ")


@pytest.fixture
def trimmed(monkeypatch: pytest.MonkeyPatch) -> None:
    """EKS's calendar without its oldest (1.29) and newest (1.36) rows.

    The loader accepts exactly the versions of the add-on table (spec/data/addons.yaml,
    1.29-1.36, today the same as every calendar); a calendar drops a row past extended support
    and gains one after the add-on table does, and then a fleet's version is not in it.
    """
    from archform.spec import kubernetes

    real = kubernetes.load_calendars()
    eks = real["aws"]
    rows = {v: life for v, life in eks.versions.items() if v not in ("1.29", "1.36")}
    patched = {**real, "aws": dataclasses.replace(eks, versions=rows)}
    monkeypatch.setattr(kubernetes, "load_calendars", lambda: patched)


@pytest.mark.usefixtures("trimmed")
def test_version_older_than_the_calendar_is_an_error() -> None:
    (hit,) = _findings(_fleet("1.29"), dt.date(2026, 11, 30))
    assert (hit.line, hit.severity) == (9, "error")
    assert hit.message.startswith(
        "Kubernetes 1.29 is older than every version EKS supports (oldest in its calendar: 1.30)"
    )


@pytest.mark.usefixtures("trimmed")
def test_version_newer_than_the_calendar_is_not_judged() -> None:
    # a release the calendar does not list yet: no date says it is out of support
    assert _findings(_fleet("1.36"), dt.date(2026, 11, 30)) == []


@pytest.mark.usefixtures("trimmed")
def test_every_fleet_is_checked_after_an_unlisted_version() -> None:
    first = _fleet("1.36", name="a")
    text = first + "---\n" + _fleet("1.29", name="b")
    got = _findings(text, dt.date(2026, 11, 30))
    assert [f.line for f in got] == [first.count("\n") + 1 + 9]


def test_every_calendar_lists_every_version_the_loader_accepts() -> None:
    # why the fixture above trims a calendar: with the bundled tables the versions agree
    from archform.spec.addons import known_minors
    from archform.spec.kubernetes import load_calendars

    for cal in load_calendars().values():
        assert set(known_minors()) <= set(cal.versions), cal.provider
        # "1." and two digits, like KubernetesSettings.version: one string per minor
        assert all(re.fullmatch(r"1\.\d{2}", v) for v in cal.versions), cal.provider


def test_finding_sits_on_the_version_when_written_else_on_the_kind() -> None:
    today = dt.date(2030, 1, 1)  # the default 1.36 is past its extended end
    (written,) = _findings(_fleet("1.36"), today)
    assert written.line == 9
    (default,) = _findings(_fleet(None), today)
    assert default.line == 2  # no kubernetes block: the document's `kind:`


def test_near_days_range() -> None:
    rule = load_rules().get("INF011")
    assert rule is not None

    def accepted(value: int) -> bool:
        try:
            rule.options(near_days=value)
        except pydantic.ValidationError:
            return False
        return True

    # a number of days from 0 (only the last day) to two years, longer than any version's
    # standard support (EKS: 14 months)
    cases = {-1: False, 0: True, 1: True, 729: True, 730: True, 731: False}
    assert {v: accepted(v) for v in cases} == cases


def test_every_provider_that_serves_fleets_has_a_calendar() -> None:
    # bench/mutation-equivalents.toml explains the `calendar is None` guard by this
    from archform.spec.kubernetes import calendar
    from archform.spec.provider import names_where

    fleet_providers = names_where(lambda p: p.fleets)
    assert set(fleet_providers) == {"aws", "gcp", "azure"}
    assert all(calendar(p) is not None for p in fleet_providers)
