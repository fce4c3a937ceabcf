"""Contract defaults: server.image per server kind, capacity_tib optional for object storage
and defaulted to the managed Lustre minimum.

Expected values are the published facts, not what the catalog says: vLLM v0.11.0
(github.com/vllm-project/vllm/releases/tag/v0.11.0), TGI 3.3.4
(github.com/huggingface/text-generation-inference/releases/tag/v3.3.4), Triton 25.03 vLLM
flavour (docs.nvidia.com/deeplearning/triton-inference-server/release-notes/rel-25-03.html);
FSx for Lustre PERSISTENT_2 starts at 1.2 TiB = 1,200 GiB (docs.aws.amazon.com/fsx/latest/
LustreGuide/managing-storage-capacity.html), Azure Managed Lustre 250 MB/s/TiB at 8 TiB
(learn.microsoft.com/azure/azure-managed-lustre/amlfs-overview), Google Managed Lustre
250 MB/s/TiB at 36,000 GiB (cloud.google.com/managed-lustre/docs/increase-capacity).
"""

from __future__ import annotations

import pytest
from ruamel.yaml import YAML

from archform.render.generate import RESOLVED, build_files
from archform.spec import InferenceFleet, SpecError, TrainingCluster, load_paths, load_text
from support import ROOT

CONTRACT = ROOT / "tests" / "spec" / "contract_v1" / "contract-examples.yaml"

FLEET = """\
version: 1
kind: InferenceFleet
name: f
placement: {provider: aws, regions: [us-east-1]}
model: {name: m, params: 8B, source: "s3://b/m/"}
server: {kind: KIND}
gpu_pool: {instance_type: g5.12xlarge, min_nodes_per_region: 1, max_nodes_per_region: 2}
edge: {auth: none}  # archform sets an API key for vllm only
"""

LUSTRE = """\
version: 1
kind: TrainingCluster
name: t
placement: {provider: PROVIDER, region: REGION}
compute: {nodes: 2, instance_type: TYPE}
storage:
  - {name: data, kind: lustre, purpose: training_data, mount: /lustre}
"""


def test_v1_contract_examples_without_image_and_capacity_load_and_generate() -> None:
    loaded = load_paths([CONTRACT])
    assert [d.kind for d in loaded.documents] == ["TrainingCluster", "InferenceFleet", "Platform"]
    fleet = loaded.documents[1].model
    assert isinstance(fleet, InferenceFleet)
    assert fleet.server.image == "vllm/vllm-openai:v0.11.0"
    cluster = loaded.documents[0].model
    assert isinstance(cluster, TrainingCluster)
    sizes = {s.name: s.capacity_tib for s in cluster.storage}
    assert sizes["raw-corpus"] is None
    assert sizes["checkpoints"] == pytest.approx(1200 / 1024)
    assert sizes["datasets"] == 240  # written values are kept
    files = {f.path: f.content for f in build_files(loaded)}
    resolved = list(YAML(typ="safe").load_all(files[RESOLVED].decode()))
    assert resolved[1]["server"]["image"] == "vllm/vllm-openai:v0.11.0"
    storage = {s["name"]: s for s in resolved[0]["storage"]}
    assert storage["raw-corpus"]["capacity_tib"] is None
    assert storage["checkpoints"]["capacity_tib"] == pytest.approx(1.171875)
    settings = files["llm-pretrain/pulumi/settings.py"].decode()
    assert "'storage_capacity_gib': 1200" in settings or '"storage_capacity_gib": 1200' in settings


@pytest.mark.parametrize(
    ("kind", "image"),
    [
        ("vllm", "vllm/vllm-openai:v0.11.0"),
        ("tgi", "ghcr.io/huggingface/text-generation-inference:3.3.4"),
        ("triton", "nvcr.io/nvidia/tritonserver:25.03-vllm-python-py3"),
    ],
)
def test_server_image_defaults_per_kind(kind: str, image: str) -> None:
    fleet = load_text(FLEET.replace("KIND", kind)).documents[0].model
    assert isinstance(fleet, InferenceFleet) and fleet.server.image == image


def test_a_written_image_wins() -> None:
    text = FLEET.replace("{kind: KIND}", '{kind: tgi, image: "corp/tgi:1.0"}')
    fleet = load_text(text).documents[0].model
    assert isinstance(fleet, InferenceFleet) and fleet.server.image == "corp/tgi:1.0"


@pytest.mark.parametrize(
    ("provider", "region", "itype", "gib"),
    [
        ("aws", "us-east-1", "p5.48xlarge", 1200),
        ("azure", "eastus", "Standard_ND96isr_H100_v5", 8 * 1024),
        ("gcp", "us-central1", "a3-megagpu-8g", 36000),
    ],
)
def test_lustre_capacity_defaults_to_the_service_minimum(
    provider: str, region: str, itype: str, gib: int
) -> None:
    text = LUSTRE.replace("PROVIDER", provider).replace("REGION", region).replace("TYPE", itype)
    loaded = load_text(text)
    cluster = loaded.documents[0].model
    assert isinstance(cluster, TrainingCluster)
    assert cluster.storage[0].capacity_tib == pytest.approx(gib / 1024)
    build_files(loaded)


def test_onprem_lustre_still_needs_a_size() -> None:
    text = (
        LUSTRE.replace("PROVIDER", "onprem")
        .replace("REGION", "lab")
        .replace("instance_type: TYPE", "gpu: {model: H100, per_node: 8}")
        + "fabric: {kind: infiniband, gbps_per_node: 3200}\n"
    )
    with pytest.raises(SpecError, match="needs capacity_tib"):
        load_text(text)
