from __future__ import annotations

import pytest
from ruamel.yaml import YAML

from archform.spec.catalog import catalog_data, catalog_json, load_catalog
from support import ROOT

DATA = ROOT / "src" / "archform" / "spec" / "data"


def test_json_twin_matches_the_yaml_source() -> None:
    source = YAML(typ="safe").load((DATA / "catalog.yaml").read_text())
    assert catalog_data() == source, "run scripts/gen-catalog-json"


def test_json_twin_is_exactly_what_the_generator_writes() -> None:
    """Regenerated from catalog.yaml, byte for byte: the twin is never edited by hand."""
    regenerated = catalog_json((DATA / "catalog.yaml").read_text("utf-8"))
    assert (DATA / "catalog.json").read_text("utf-8") == regenerated, "run scripts/gen-catalog-json"


def test_every_gpu_instance_names_a_known_gpu_and_consistent_cpu() -> None:
    catalog = load_catalog()
    assert len(catalog.instances) >= 40
    for info in catalog.instances.values():
        assert info.vcpus == info.sockets * info.cores_per_socket * info.threads_per_core, info.name
        assert info.source.startswith("https://"), info.name
        if info.is_gpu:
            assert info.gpu_model in catalog.gpus and info.gpu_count >= 1, info.name


def test_reference_facts() -> None:
    catalog = load_catalog()
    p5 = catalog.instance("p5.48xlarge")
    assert p5 is not None
    assert (p5.gpu_model, p5.gpu_count, p5.fabric_kind, p5.fabric_gbps, p5.fabric_interfaces) == (
        "H100",
        8,
        "efa",
        3200,
        32,
    )
    nd = catalog.instance("Standard_ND96isr_H100_v5")
    assert nd is not None and (nd.fabric_kind, nd.fabric_gbps, nd.vcpus) == ("infiniband", 3200, 96)
    mega = catalog.instance("a3-megagpu-8g")
    assert (
        mega is not None and mega.fabric_kind == "gpudirect_tcpxo" and mega.fabric_interfaces == 8
    )
    assert catalog.gpu("a100-80gb") is catalog.gpu("A100")


def _sources(data: dict) -> list[tuple[str, str]]:
    """(entry, source) for every catalog entry: GPUs, families, instances, services."""
    out = []
    for section in ("gpus", "families", "instances"):
        for name, entry in data.get(section, {}).items():
            out.append((f"{section}.{name}", str(entry.get("source", ""))))
    services = data["services"]
    out.append(("services.azure_scale_set", services["azure_scale_set"].get("source", "")))
    for provider, entry in services["lustre"].items():
        out.append((f"services.lustre.{provider}", entry.get("source", "")))
    out += [("naming", url) for url in data["naming"]["sources"]]
    return out


def test_every_catalog_entry_has_a_public_source() -> None:
    data = YAML(typ="safe").load((DATA / "catalog.yaml").read_text())
    found = _sources(data)
    assert len(found) > 100
    for entry, source in found:
        assert source.startswith("https://"), f"{entry} has no https source"
        assert "shared/" not in source and "reference/" not in source, entry


def test_an_entry_without_a_source_is_caught(tmp_path) -> None:
    data = YAML(typ="safe").load((DATA / "catalog.yaml").read_text())
    del data["instances"]["p5.48xlarge"]["source"]
    assert ("instances.p5.48xlarge", "") in _sources(data)


def test_family_facts_are_inherited_and_entries_win() -> None:
    catalog = load_catalog()
    ultra = catalog.instance("a3-ultragpu-8g")
    assert ultra is not None and ultra.family == "a3-ultragpu"
    # cluster-toolkit a3-ultragpu-8g blueprint: 8 RDMA subnets, MTU 8896, hyperdisk boot disk
    assert (ultra.rdma_subnets, ultra.gpu_vpcs, ultra.mtu) == (8, 1, 8896)
    assert ultra.boot_disk_type == "hyperdisk-balanced"
    p4d = catalog.instance("p4d.24xlarge")
    assert p4d is not None and p4d.efa_layout == "per_card"
    nd = catalog.instance("Standard_ND96isr_H100_v5")
    assert nd is not None and nd.nccl_topo_file == "/opt/microsoft/ndv5-topo.xml"
    # GKE accelerator names, cloud.google.com/compute/docs/gpus
    assert catalog.gke_accelerator("a3-megagpu-8g", "H100") == "nvidia-h100-mega-80gb"
    assert catalog.gke_accelerator("a3-highgpu-8g", "H100") == "nvidia-h100-80gb"
    assert catalog.gke_accelerator("g2-standard-24", "L4") == "nvidia-l4"
    assert catalog.gke_accelerator("n1-standard-8", "T4") == "nvidia-tesla-t4"


SOLD_TODAY = [
    # AWS (docs.aws.amazon.com/ec2/latest/instancetypes/ac.html)
    *(f"g4dn.{s}" for s in ("xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge")),
    "g4dn.metal",
    *(f"g5.{s}" for s in ("xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge")),
    "g5.24xlarge",
    "g5.48xlarge",
    *(f"g6.{s}" for s in ("xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge")),
    "g6.24xlarge",
    "g6.48xlarge",
    *(f"g6e.{s}" for s in ("xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge")),
    "g6e.24xlarge",
    "g6e.48xlarge",
    "gr6.4xlarge",
    "gr6.8xlarge",
    "p4d.24xlarge",
    "p4de.24xlarge",
    "p5.4xlarge",
    "p5.48xlarge",
    "p5e.48xlarge",
    "p5en.48xlarge",
    "p6-b200.48xlarge",
    "p6e-gb200.36xlarge",
    # GCP (cloud.google.com/compute/docs/accelerator-optimized-machines)
    *(f"a2-highgpu-{n}g" for n in (1, 2, 4, 8)),
    "a2-megagpu-16g",
    *(f"a2-ultragpu-{n}g" for n in (1, 2, 4, 8)),
    *(f"a3-highgpu-{n}g" for n in (1, 2, 4, 8)),
    "a3-edgegpu-8g",
    "a3-megagpu-8g",
    "a3-ultragpu-8g",
    "a4-highgpu-8g",
    "a4x-highgpu-4g",
    *(f"g2-standard-{n}" for n in (4, 8, 12, 16, 24, 32, 48, 96)),
    # Azure (learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/)
    *(f"Standard_NC{n}as_T4_v3" for n in (4, 8, 16, 64)),
    *(f"Standard_NC{n}ads_A100_v4" for n in (24, 48, 96)),
    "Standard_NC40ads_H100_v5",
    "Standard_NC80adis_H100_v5",
    "Standard_NCC40ads_H100_v5",
    "Standard_ND96asr_v4",
    "Standard_ND96amsr_A100_v4",
    "Standard_ND96isr_H100_v5",
    "Standard_ND96isr_H200_v5",
    "Standard_ND96isr_MI300X_v5",
    "Standard_ND128isr_NDR_GB200_v6",
    "Standard_NV36ads_A10_v5",
    "Standard_NV36adms_A10_v5",
    "Standard_NV72ads_A10_v5",
]


def test_every_gpu_type_sold_today_is_in_the_catalog() -> None:
    catalog = load_catalog()
    missing = [name for name in SOLD_TODAY if catalog.instance(name) is None]
    assert not missing
    assert all((i := catalog.instance(n)) is not None and i.is_gpu for n in SOLD_TODAY)


@pytest.mark.parametrize(
    ("name", "gpus", "vcpus", "memory_gib", "efa"),
    [
        # meta-pytorch/torchx named_resources_aws.py (from aws.amazon.com/ec2/instance-types)
        ("g6e.48xlarge", 8, 192, 1536, 4),
        ("g6e.24xlarge", 4, 96, 768, 2),
        ("g4dn.metal", 8, 96, 384, 1),
        ("g5.24xlarge", 4, 96, 384, 1),
        # Google accelerator-optimized machine table
        ("a3-highgpu-4g", 4, 104, 936, 0),
        ("a2-megagpu-16g", 16, 96, 1360, 0),
        # AKS VM size list (microsoft/aspire AksNodeVmSizes.cs)
        ("Standard_ND128isr_NDR_GB200_v6", 4, 128, 864, 0),
        ("Standard_ND96isr_MI300X_v5", 8, 96, 1850, 0),
    ],
)
def test_published_sizes(name: str, gpus: int, vcpus: int, memory_gib: int, efa: int) -> None:
    info = load_catalog().instance(name)
    assert info is not None
    assert (info.gpu_count, info.vcpus, info.memory_gib) == (gpus, vcpus, memory_gib)
    assert (info.fabric_interfaces if info.fabric_kind == "efa" else 0) == efa
