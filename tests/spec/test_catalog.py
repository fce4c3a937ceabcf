from __future__ import annotations

from ruamel.yaml import YAML

from archform.spec.catalog import catalog_data, load_catalog
from support import ROOT

DATA = ROOT / "src" / "archform" / "spec" / "data"


def test_json_twin_matches_the_yaml_source() -> None:
    source = YAML(typ="safe").load((DATA / "catalog.yaml").read_text())
    assert catalog_data() == source, "run scripts/gen-catalog-json"


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
    """(entry, source) for every catalog entry: GPUs, families, instances, servers, services."""
    out = []
    for section in ("gpus", "families", "instances", "servers"):
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
