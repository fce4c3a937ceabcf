"""`kind: local_nvme` takes its size from the instance catalog and may not ask for more than
the nodes have (issue 21 item 8).

Expected sizes are the providers' published figures, not the catalog's: p5.48xlarge has
8 x 3,840 GB instance store (aws.amazon.com/ec2/instance-types/p5/), 30,720 GB = 27.94 TiB;
Standard_ND96isr_H100_v5 has 8 NVMe disks, 28 TiB (learn.microsoft.com/azure/virtual-machines/
sizes/gpu-accelerated/ndh100v5-series); a3-megagpu-8g comes with 16 x 375 GiB Local SSD
(cloud.google.com/compute/docs/gpus, A3 Mega), 6,000 GiB.
"""

from __future__ import annotations

import pytest

from archform.spec import SpecError, TrainingCluster, load_text

CASES = {
    "aws": ("placement: {provider: aws, region: us-east-1, zones: [us-east-1a]}", "p5.48xlarge"),
    "gcp": ("placement: {provider: gcp, region: us-central1}", "a3-megagpu-8g"),
    "azure": ("placement: {provider: azure, region: eastus}", "Standard_ND96isr_H100_v5"),
}
EXPECTED_TIB = {"aws": 30720e9 / 2**40, "gcp": 6000 / 1024, "azure": 28.0}


def _text(provider: str, entry: str, itype: str | None = None) -> str:
    placement, default_type = CASES[provider]
    return (
        "version: 1\nkind: TrainingCluster\nname: t\n"
        f"{placement}\n"
        f"compute: {{nodes: 2, instance_type: {itype or default_type}}}\n"
        f"storage:\n  - {entry}\n"
    )


@pytest.mark.parametrize("provider", sorted(CASES))
def test_local_nvme_without_size_gets_the_instance_local_nvme(provider: str) -> None:
    text = _text(provider, "{name: scratch, kind: local_nvme, purpose: scratch, mount: /scratch}")
    model = load_text(text, "bp.yaml").documents[0].model
    assert isinstance(model, TrainingCluster)
    size = model.storage[0].capacity_tib
    assert size is not None
    assert size == pytest.approx(EXPECTED_TIB[provider], abs=0.001)
    assert size <= EXPECTED_TIB[provider]


def test_local_nvme_larger_than_the_instance_is_refused_at_the_line() -> None:
    text = _text(
        "aws", "{name: scratch, kind: local_nvme, purpose: scratch, capacity_tib: 40, mount: /s}"
    )
    with pytest.raises(SpecError) as err:
        load_text(text, "bp.yaml")
    problem = err.value.problems[0]
    assert (problem.line, problem.path) == (7, "storage[0].capacity_tib")
    assert "27.939 TiB of local NVMe of p5.48xlarge" in problem.message


def test_local_nvme_written_within_the_instance_is_kept() -> None:
    text = _text(
        "gcp", "{name: s, kind: local_nvme, purpose: scratch, capacity_tib: 5.859375, mount: /s}"
    )
    model = load_text(text, "bp.yaml").documents[0].model
    assert isinstance(model, TrainingCluster)
    assert model.storage[0].capacity_tib == 5.859375


def test_local_nvme_on_an_instance_without_it_is_refused_at_the_kind() -> None:
    text = _text("aws", "{name: s, kind: local_nvme, purpose: scratch}", "p4d.24xlarge")
    text_none = _text("gcp", "{name: s, kind: local_nvme, purpose: scratch}", "n2-standard-8")
    load_text(text, "bp.yaml")  # p4d has 8 x 1,000 GB NVMe: fine
    with pytest.raises(SpecError) as err:
        load_text(text_none, "bp.yaml")
    [problem] = [p for p in err.value.problems if p.path == "storage[0].kind"]
    assert problem.line == 7
    assert "n2-standard-8 has no local NVMe" in problem.message


def test_a_cpu_debug_group_without_local_nvme_does_not_shrink_the_gpu_nodes_size() -> None:
    text = (
        "version: 1\nkind: TrainingCluster\nname: t\n"
        "placement: {provider: gcp, region: us-central1}\n"
        "compute:\n  nodes: 2\n  instance_type: a3-megagpu-8g\n"
        "  extra_groups: [{name: debug, nodes: 2, instance_type: n2-standard-4}]\n"
        "storage:\n  - {name: s, kind: local_nvme, purpose: scratch}\n"
    )
    model = load_text(text, "bp.yaml").documents[0].model
    assert isinstance(model, TrainingCluster)
    assert model.storage[0].capacity_tib == pytest.approx(EXPECTED_TIB["gcp"], abs=0.001)
