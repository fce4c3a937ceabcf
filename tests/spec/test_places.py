"""Regions, zones and offered instance types are refused at the line (spec/places.py).

Each case edits one line of a bundled blueprint and runs `archform validate` on it: exit 2
and one located error with its hint, as the data (spec/data/places.json) says.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import support
from archform.spec import load_paths

AWS = support.BLUEPRINTS / "aws-p5-efa-fsx.yaml"
GCP = support.BLUEPRINTS / "gcp-a3-mega-tcpxo.yaml"
A10 = support.BLUEPRINTS / "inference-3region-a10.yaml"
H100 = support.BLUEPRINTS / "inference-h100-single-region.yaml"
PLATFORM = support.BLUEPRINTS / "platform-two-tier.yaml"


def _edited(tmp_path: Path, source: Path, old: str, new: str) -> Path:
    text = source.read_text("utf-8")
    assert text.count(old) == 1, old
    path = tmp_path / source.name
    path.write_text(text.replace(old, new), "utf-8")
    return path


def _refused(path: Path) -> list[str]:
    proc = support.run_cli(["validate", str(path)])
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    return [line for line in proc.stderr.splitlines() if ": error: " in line]


def test_misspelt_region_is_refused_with_did_you_mean(tmp_path: Path) -> None:
    path = _edited(tmp_path, AWS, "  region: us-east-1\n", "  region: us-eest-1\n")
    assert _refused(path) == [
        f"{path}:14:11: error: placement.region: 'us-eest-1' is not an AWS region "
        "(hint: did you mean 'us-east-1'?)"
    ]


def test_zone_of_another_region_is_refused(tmp_path: Path) -> None:
    path = _edited(tmp_path, AWS, "  region: us-east-1\n", "  region: us-west-2\n")
    assert _refused(path) == [
        f"{path}:15:11: error: placement.zones[0]: us-east-1a is a zone of us-east-1, not of "
        "us-west-2 (hint: use a zone of us-west-2: us-west-2a, us-west-2b, us-west-2c, us-west-2d)"
    ]


def test_misspelt_zone_is_refused_with_did_you_mean(tmp_path: Path) -> None:
    path = _edited(tmp_path, GCP, "zones: [us-central1-a]", "zones: [us-centrall-a]")
    assert _refused(path) == [
        f"{path}:14:11: error: placement.zones[0]: 'us-centrall-a' is not a zone of "
        "us-central1 (hint: did you mean 'us-central1-a'?)"
    ]


def test_gpu_type_the_region_lacks_is_refused_at_the_instance_type(tmp_path: Path) -> None:
    from archform.spec.places import load_places  # absent before issue 21

    # p5.48xlarge is not offered in eu-central-1 (EC2 DescribeInstanceTypeOfferings).
    path = _edited(tmp_path, H100, "regions: [eu-north-1]", "regions: [eu-central-1]")
    (line,) = _refused(path)
    assert line.startswith(
        f"{path}:30:18: error: gpu_pool.instance_type: p5.48xlarge is not offered in "
        "eu-central-1 (hint: regions that offer it: "
    )
    assert "eu-north-1" in load_places()["aws"].regions_offering("p5.48xlarge")


def test_every_fleet_region_is_checked(tmp_path: Path) -> None:
    # The third region of the Azure A10 fleet: Australia Southeast sells no NVadsA10 v5.
    old = "[eastus, westeurope, southeastasia]"
    path = _edited(tmp_path, A10, old, old.replace("southeastasia", "australiasoutheast"))
    (line,) = _refused(path)
    at = next(
        i
        for i, text in enumerate(path.read_text("utf-8").splitlines(), 1)
        if "instance_type: Standard_NV72" in text
    )
    assert line.startswith(
        f"{path}:{at}:18: error: gpu_pool.instance_type: Standard_NV72ads_A10_v5 is not offered "
        "in australiasoutheast (hint: regions that offer it: "
    )


def test_gcp_zone_without_the_machine_type_is_refused(tmp_path: Path) -> None:
    # A3 Mega is in us-central1-a, -b and -c, not -f (skypilot-catalog v8 gcp/vms.csv).
    path = _edited(tmp_path, GCP, "zones: [us-central1-a]", "zones: [us-central1-f]")
    assert _refused(path) == [
        f"{path}:14:11: error: placement.zones[0]: a3-megagpu-8g is not offered in zone "
        "us-central1-f (hint: zones of us-central1 that offer it: us-central1-a, "
        "us-central1-b, us-central1-c)"
    ]


def test_azure_zone_in_a_region_without_zones_is_refused(tmp_path: Path) -> None:
    source = support.BLUEPRINTS / "azure-nd-h100-v5.yaml"
    path = _edited(tmp_path, source, "  region: eastus\n", "  region: westus\n")
    lines = _refused(path)
    assert lines[0] == (
        f"{path}:15:11: error: placement.zones[0]: westus has no availability zones "
        "(hint: remove `zones:`, or choose a region with zones)"
    ), lines


def test_platform_registry_region_is_checked(tmp_path: Path) -> None:
    old = "  region: us-east-1\n  bucket: sivaro-models"
    path = _edited(tmp_path, PLATFORM, old, old.replace("us-east-1", "us-easst-1"))
    lines = _refused(path)
    assert any(
        line.startswith(f"{path}:")
        and "registry.region: 'us-easst-1' is not an AWS region (hint: did you mean 'us-east-1'?)"
        in line
        for line in lines
    ), lines


@pytest.mark.parametrize("blueprint", support.bundled_blueprints(), ids=lambda p: p.name)
def test_bundled_blueprints_name_places_that_exist(blueprint: Path) -> None:
    assert load_paths([blueprint]).documents


def test_place_data_is_sourced_and_covers_every_cloud() -> None:
    import json

    from archform.spec.datafile import read_data
    from archform.spec.places import load_places  # absent before issue 21

    data = json.loads(read_data("places.json"))
    for cloud in ("aws", "gcp", "azure"):
        assert data["sources"][cloud], cloud
        assert len(data[cloud]["regions"]) >= 25, cloud
    places = load_places()
    zones = {"us-west-2a", "us-west-2b", "us-west-2c", "us-west-2d"}
    assert places["aws"].regions["us-west-2"][0] == zones
    assert places["azure"].regions["eastus"][0] == {"1", "2", "3"}
