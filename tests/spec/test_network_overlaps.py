"""validate refuses every pair of overlapping ranges, at the field that determined the second.

Each case is a real blueprint whose `placement.network` (or deployer, or Platform tier) makes
one pair of archform's carved ranges overlap; the line marked `# <-` is where the error must
land, and the message must name the other range's field. Ranges carved from a parent (the
GCP system subnet and PSA halves of `cidr`, the GPU/RDMA subnets of `gpu_cidr`/`rdma_cidr`,
each fleet region's /16 of `cidr`) are reported at that parent field.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from archform.spec import SpecError, load_paths, load_text
from support import BLUEPRINTS, run_cli

GCP = """\
version: 1
kind: TrainingCluster
name: t
placement:
  provider: gcp
  region: us-central1
  zones: [us-central1-b]
  network:
{network}
compute: {{nodes: 2, instance_type: {machine}}}
"""

FLEET = """\
version: 1
kind: InferenceFleet
name: f
placement:
  provider: {provider}
  regions: [{regions}]
  network:
{network}
model: {{name: m, params: 8e9, source: "{source}"{account}}}
server: {{kind: vllm}}
gpu_pool: {{instance_type: {gpu}, min_nodes_per_region: 1, max_nodes_per_region: 2}}
{extra}"""

FLEETS = {
    "aws": dict(regions="us-east-1", source="s3://b/m/v1/", gpu="g5.12xlarge", account=""),
    "gcp": dict(
        regions="us-central1, europe-west4", source="gs://b/m/v1/", gpu="g2-standard-24", account=""
    ),
    "azure": dict(
        regions="eastus",
        source="https://acct.blob.core.windows.net/b/m/v1/",
        account=", source_account_id: /subscriptions/00000000-0000-0000-0000-000000000000"
        "/resourceGroups/m/providers/Microsoft.Storage/storageAccounts/acct",
        gpu="Standard_NV72ads_A10_v5",
    ),
}


def gcp(network: str, machine: str = "a3-megagpu-8g") -> str:
    return GCP.format(network=network, machine=machine)


def fleet(provider: str, network: str, extra: str = "") -> str:
    return FLEET.format(provider=provider, network=network, extra=extra, **FLEETS[provider])


ULTRA = "a3-ultragpu-8g"  # RoCE: 2 gVNIC GPU VPCs and an RDMA VPC with 8 subnets
DEPLOYER = """\
kubernetes:
  api_access_cidrs: [10.0.0.0/8]
  deployer:
    network: tgw-0a1b2c3d4e5f60718
    cidrs: [{cidr}]  # <-
"""

# (id, blueprint text, field of the second range, field of the first range)
CASES = [
    # GCP training: system subnet / PSA (halves of cidr), GPU VPC and RDMA subnets
    ("system-vs-gpu", gcp("    cidr: 10.64.0.0/16  # <-"), "cidr", "gpu_cidr"),
    ("gpu-vs-system", gcp("    gpu_cidr: 10.42.0.0/16  # <-"), "gpu_cidr", "cidr"),
    ("gpu-vs-psa", gcp("    gpu_cidr: 10.42.128.0/17  # <-"), "gpu_cidr", "cidr"),
    ("psa-vs-system", gcp("    psa_cidr: 10.42.0.0/20  # <-"), "psa_cidr", "cidr"),
    ("psa-vs-gpu", gcp("    psa_cidr: 10.64.16.0/20  # <-"), "psa_cidr", "gpu_cidr"),
    ("rdma-vs-gpu", gcp("    rdma_cidr: 10.64.0.0/16  # <-", ULTRA), "rdma_cidr", "gpu_cidr"),
    ("rdma-vs-system", gcp("    rdma_cidr: 10.42.0.0/18  # <-", ULTRA), "rdma_cidr", "cidr"),
    ("psa-vs-rdma", gcp("    psa_cidr: 10.65.0.0/24  # <-", ULTRA), "psa_cidr", "rdma_cidr"),
    (
        "both-written-later-one-reported",
        gcp("    gpu_cidr: 172.16.0.0/16\n    cidr: 172.16.0.0/16  # <-"),
        "cidr",
        "gpu_cidr",
    ),
    # fleets: region blocks, GKE control planes, Service and pod ranges, the deployer
    (
        "gke-control-plane-vs-region",
        fleet("gcp", "    control_plane_cidr: 10.101.0.0/24  # <-"),
        "control_plane_cidr",
        "cidr",
    ),
    (
        "region-vs-gke-control-plane",
        fleet("gcp", "    cidr: 10.98.0.0/15  # <-"),
        "cidr",
        "control_plane_cidr",
    ),
    (
        "eks-services-vs-region",
        fleet("aws", "    service_cidr: 10.100.0.0/16  # <-"),
        "service_cidr",
        "cidr",
    ),
    (
        "region-vs-eks-services",
        fleet("aws", "    cidr: 172.20.0.0/14  # <-"),
        "cidr",
        "service_cidr",
    ),
    (
        "aks-pods-vs-region",
        fleet("azure", "    pod_cidr: 10.100.0.0/15  # <-"),
        "pod_cidr",
        "cidr",
    ),
    (
        "aks-services-vs-pods",
        fleet("azure", "    service_cidr: 172.31.0.0/16  # <-"),
        "service_cidr",
        "pod_cidr",
    ),
    (
        "aks-pods-vs-services",
        fleet("azure", "    service_cidr: 172.24.0.0/16\n    pod_cidr: 172.24.0.0/14  # <-"),
        "pod_cidr",
        "service_cidr",
    ),
    (
        "deployer-vs-region",
        fleet("aws", "    cidr: 10.100.0.0/16", DEPLOYER.format(cidr="10.100.8.0/24")),
        "kubernetes.deployer.cidrs[0]",
        "cidr",
    ),
]


def _expected(text: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if "# <-" in line)


def _path(field: str) -> str:
    return field if "." in field else f"placement.network.{field}"


@pytest.mark.parametrize(
    ("text", "second", "first"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_validate_refuses_overlapping_pair_at_its_line(text: str, second: str, first: str) -> None:
    with pytest.raises(SpecError) as info:
        load_text(text, "b.yaml")
    problems = info.value.problems
    assert len(problems) == 1, [p.render() for p in problems]
    p = problems[0]
    assert p.line == _expected(text), p.render()
    assert p.message.startswith(f"{_path(second)}: "), p.render()
    assert f"({_path(first)}" in p.message, p.render()
    assert "overlaps" in p.message and p.hint, p.render()


def test_validate_cli_refuses_overlap_one_line_exit_2(tmp_path: Path) -> None:
    text = CASES[0][1]
    path = tmp_path / "b.yaml"
    path.write_text(text, "utf-8")
    result = run_cli(["validate", str(path)])
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"{path}:{_expected(text)}:"), lines
    assert "(hint: " in lines[0] and "Traceback" not in result.stderr


PLATFORM = (BLUEPRINTS / "platform-two-tier.yaml").read_text("utf-8")
TRAIN_AT = "  zones: [us-east-1a]\n"
FLEET_AT = "  regions: [us-east-1, eu-west-1, ap-northeast-1]\n"


def _platform(train: str | None, fleet_cidr: str | None) -> str:
    text = PLATFORM
    if train:
        text = text.replace(TRAIN_AT, f"{TRAIN_AT}  network:\n    cidr: {train}\n", 1)
    if fleet_cidr:
        text = text.replace(FLEET_AT, f"{FLEET_AT}  network:\n    cidr: {fleet_cidr}\n", 1)
    return text


@pytest.mark.parametrize(
    ("train", "fleet_cidr", "at"),
    [
        ("10.101.0.0/16", None, "train"),  # the fleet's default: error at what was written
        (None, "10.40.0.0/14", "fleet"),  # the cluster's default 10.42.0.0/16
        ("10.102.0.0/16", "10.100.0.0/14", "fleet"),  # both written: the later one
    ],
    ids=["training-vs-fleet-default", "fleet-vs-training-default", "fleet-written-later"],
)
def test_validate_refuses_platform_tiers_that_overlap(
    train: str | None, fleet_cidr: str | None, at: str
) -> None:
    text = _platform(train, fleet_cidr)
    with pytest.raises(SpecError) as info:
        load_text(text, "p.yaml")
    problems = info.value.problems
    assert len(problems) == 1, [p.render() for p in problems]
    p = problems[0]
    value = train if at == "train" else fleet_cidr
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if ln == f"    cidr: {value}")
    assert (p.line, p.column) == (line, 11), p.render()
    assert "platform sivaro" in p.message and "(placement.network.cidr, " in p.message
    other = "sivaro-serve" if at == "train" else "sivaro-train"
    assert other in p.message, p.render()


@pytest.mark.parametrize(
    ("text", "field", "words"),
    [
        (
            fleet("aws", "    cidr: 10.100.0.0/24  # <-"),
            "cidr",
            "does not hold one /16 per region",
        ),
        (
            fleet("gcp", "    control_plane_cidr: 10.99.0.0/29  # <-"),
            "control_plane_cidr",
            "does not hold one /28",
        ),
        (fleet("aws", "    service_cidr: 172.20.0.0/25  # <-"), "service_cidr", "/24 to /12"),
        (fleet("aws", "    pod_cidr: 172.24.0.0/16  # <-"), "pod_cidr", "azure fleets only"),
        (fleet("gcp", "    service_cidr: 172.24.0.0/16  # <-"), "service_cidr", "aws and azure"),
        (
            fleet("azure", "    control_plane_cidr: 10.99.0.0/24  # <-"),
            "control_plane_cidr",
            "gcp fleets only",
        ),
        (gcp("    gpu_cidr: 10.64.0.0/27  # <-"), "gpu_cidr", "cannot hold 8 GPU VPC subnets"),
    ],
    ids=[
        "fleet-block-too-small",
        "gke-control-plane-too-small",
        "eks-services-too-small",
        "pod-cidr-on-eks",
        "service-cidr-on-gke",
        "control-plane-on-aks",
        "gpu-block-too-small",
    ],
)
def test_validate_refuses_unusable_range_field(text: str, field: str, words: str) -> None:
    with pytest.raises(SpecError) as info:
        load_text(text, "b.yaml")
    p = info.value.problems[0]
    assert p.line == _expected(text), p.render()
    assert p.message.startswith(f"placement.network.{field}: ") and words in p.message, p.render()
    assert p.hint


@pytest.mark.parametrize("cloud", ["aws", "azure"])
def test_validate_refuses_gcp_only_training_fields_elsewhere(cloud: str) -> None:
    stem = {"aws": "aws-p5-efa-fsx", "azure": "azure-nd-h100-v5"}[cloud]
    text = (BLUEPRINTS / f"{stem}.yaml").read_text("utf-8")
    marker = "placement:\n"
    head, tail = text.split(marker, 1)
    text = f"{head}{marker}  network:\n    gpu_cidr: 10.80.0.0/16\n{tail}"
    with pytest.raises(SpecError) as info:
        load_text(text, "b.yaml")
    p = info.value.problems[0]
    assert p.message.startswith("placement.network.gpu_cidr: applies to gcp clusters only")


def test_bundled_blueprints_validate_with_default_ranges() -> None:
    """Every bundled blueprint, with the defaults, loads: the defaults never overlap."""
    load_paths(sorted(BLUEPRINTS.glob("*.yaml")))


def test_resolved_defaults_of_other_providers_reload() -> None:
    """The resolved blueprint writes every default (gpu_cidr on AWS too): it loads again."""
    text = (BLUEPRINTS / "aws-p5-efa-fsx.yaml").read_text("utf-8")
    head, tail = text.split("placement:\n", 1)
    load_text(f"{head}placement:\n  network:\n    gpu_cidr: 10.64.0.0/16\n{tail}", "r.yaml")
