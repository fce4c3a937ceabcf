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
