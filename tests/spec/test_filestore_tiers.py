"""Filestore tier: any of Google's six tiers, its capacity range checked at the line, and the
tier reaching the generated Pulumi program (issue 21 item 8).

Expected ranges are Google's published table (cloud.google.com/filestore/docs/service-tiers,
read 2026-12-02), not archform's data file: Basic HDD 1-63.9 TiB, Basic SSD 2.5-63.9 TiB,
Zonal and Regional 1-9.75 TiB and 10-100 TiB, Enterprise 1-10 TiB; High Scale SSD (the tier
Zonal 10-100 TiB replaces) 10-100 TiB. 63.9 TiB is 65,433.6 GiB and the page gives no GiB
figure, so archform stops at 65,433 GiB (63.89 TiB is the largest two-decimal size it takes).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from archform.render.generate import build_files
from archform.spec import SpecError, TrainingCluster, load_text
from support import run_cli

BASE = """\
version: 1
kind: TrainingCluster
name: t
placement: {{provider: {provider}, region: {region}}}
compute: {{nodes: 2, instance_type: {itype}}}
storage:
  - {{name: home, kind: nfs, purpose: home, mount: /home, capacity_tib: {tib}{tier}}}
"""
GCP = {"provider": "gcp", "region": "us-central1", "itype": "a3-megagpu-8g"}

FITS = [
    ("BASIC_HDD", 1), ("BASIC_HDD", 63.89), ("BASIC_SSD", 2.5), ("BASIC_SSD", 63.89),
    ("ZONAL", 1), ("ZONAL", 9.75), ("ZONAL", 10), ("ZONAL", 100),
    ("REGIONAL", 1), ("REGIONAL", 100), ("ENTERPRISE", 1), ("ENTERPRISE", 10),
    ("HIGH_SCALE_SSD", 10), ("HIGH_SCALE_SSD", 100),
]  # fmt: skip
REFUSED = [
    ("BASIC_HDD", 0.5), ("BASIC_HDD", 64), ("BASIC_SSD", 2), ("ZONAL", 9.9), ("ZONAL", 101),
    ("REGIONAL", 0.5), ("ENTERPRISE", 10.5), ("HIGH_SCALE_SSD", 9.75), ("HIGH_SCALE_SSD", 120),
]  # fmt: skip


def _text(tier: str | None, tib: float, **where: str) -> str:
    fields = {**GCP, **where}
    return BASE.format(tib=tib, tier=f", filestore_tier: {tier}" if tier else "", **fields)


def _nfs_settings(text: str) -> list[dict[str, object]]:
    files = {f.path: f.content.decode() for f in build_files(load_text(text, "bp.yaml"))}
    tree = ast.parse(files["pulumi/settings.py"])
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "NFS":
            value: list[dict[str, object]] = ast.literal_eval(node.value)
            return value
    raise AssertionError("settings.py has no NFS")


@pytest.mark.parametrize(("tier", "tib"), FITS)
def test_sizes_inside_googles_range_load(tier: str, tib: float) -> None:
    model = load_text(_text(tier, tib), "bp.yaml").documents[0].model
    assert isinstance(model, TrainingCluster)
    assert model.storage[0].filestore_tier == tier


@pytest.mark.parametrize(("tier", "tib"), REFUSED)
def test_sizes_outside_googles_range_are_refused_at_capacity(tier: str, tib: float) -> None:
    with pytest.raises(SpecError) as err:
        load_text(_text(tier, tib), "bp.yaml")
    [problem] = err.value.problems
    assert problem.path == "storage[0].capacity_tib" and problem.line == 7
    assert f"Filestore {tier} takes" in problem.message


def test_default_tier_is_basic_ssd_and_shown_in_the_resolved_blueprint() -> None:
    text = _text(None, 2.5)
    assert _nfs_settings(text)[0]["tier"] == "BASIC_SSD"
    files = {f.path: f.content.decode() for f in build_files(load_text(text, "bp.yaml"))}
    assert "filestore_tier: BASIC_SSD" in files["resolved-blueprint.yaml"]
    with pytest.raises(SpecError):  # below Basic SSD's 2.5 TiB: refused, no silent bump
        load_text(_text(None, 1), "bp.yaml")


def test_tier_reaches_the_program_regional_tiers_in_the_region() -> None:
    [zonal] = _nfs_settings(_text("HIGH_SCALE_SSD", 10))
    assert (zonal["tier"], zonal["regional"], zonal["capacity_gib"]) == (
        "HIGH_SCALE_SSD", False, 10240,
    )  # fmt: skip
    [regional] = _nfs_settings(_text("ENTERPRISE", 1.1))
    # 1.1 TiB = 1126.4 GiB, rounded up to Enterprise's 256 GiB unit.
    assert (regional["tier"], regional["regional"], regional["capacity_gib"]) == (
        "ENTERPRISE", True, 1280,
    )  # fmt: skip
    files = {f.path: f.content.decode() for f in build_files(load_text(_text("ZONAL", 1), "b"))}
    program = files["pulumi/storage.py"]
    assert 'tier=entry["tier"]' in program
    assert 'location=s.REGION if entry["regional"] else s.ZONE' in program


def test_filestore_tier_elsewhere_is_refused_at_the_line() -> None:
    aws = _text("ZONAL", 1, provider="aws", region="us-east-1", itype="p5.48xlarge")
    with pytest.raises(SpecError) as err:
        load_text(aws, "bp.yaml")
    [problem] = err.value.problems
    assert problem.path == "storage[0].filestore_tier" and "on aws" in problem.message
    lustre = _text("ZONAL", 36).replace("kind: nfs", "kind: lustre")
    with pytest.raises(SpecError) as err:
        load_text(lustre, "bp.yaml")
    assert "only nfs storage is a Filestore" in str(err.value)


def test_diff_calls_a_tier_change_a_new_instance(tmp_path: Path) -> None:
    old, new = tmp_path / "old.yaml", tmp_path / "new.yaml"
    old.write_text(_text(None, 10))
    new.write_text(_text("ZONAL", 10))
    proc = run_cli(["diff", str(old), str(new)], cwd=tmp_path)
    assert "storage[home].filestore_tier: BASIC_SSD -> ZONAL" in proc.stdout
    assert "DATA LOSS RISK" in proc.stdout and "cannot change tier" in proc.stdout
