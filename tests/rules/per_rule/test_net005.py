"""NET005 (fabric-not-on-instance): messages, severities and the catalog's Ethernet speed.

Expected text is worked from the blueprint and the catalog's sourced entries: p5.48xlarge has
3,200 Gbps of EFA (https://aws.amazon.com/ec2/instance-types/p5/), p4d.24xlarge 400 Gbps of EFA
(https://aws.amazon.com/ec2/instance-types/p4/), p3.16xlarge 25 Gbps Ethernet and no EFA
(https://aws.amazon.com/ec2/instance-types/p3/).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from ruamel.yaml import YAML
from rulecase import FIXTURES, findings

import archform.spec

CATALOG = Path(archform.spec.__file__).parent / "data" / "catalog.yaml"


def test_a_kind_the_instance_lacks_is_an_error_naming_what_it_has() -> None:
    (f,) = findings("NET005", path=FIXTURES / "NET005" / "fail_doc_example.yaml")
    assert f.severity == "error"
    assert f.message == "p5.48xlarge has no infiniband fabric (it has efa at 3200 Gbps per node)"
    assert f.hint == "use kind: efa, or remove `fabric:` to take it from the catalog"


def test_more_bandwidth_than_the_instance_names_its_own() -> None:
    (f,) = findings("NET005", path=FIXTURES / "NET005" / "fail_more_bandwidth_than_instance.yaml")
    assert f.message == "fabric declares 3200 Gbps per node but p4d.24xlarge has 400 Gbps of efa"
    assert f.hint == "set gbps_per_node: 400 or choose a larger instance type"


def test_idle_rdma_is_a_warning() -> None:
    (f,) = findings("NET005", path=FIXTURES / "NET005" / "fail_rdma_left_unused.yaml")
    assert f.severity == "warning"
    assert f.message == (
        "p5.48xlarge has efa at 3200 Gbps per node but the blueprint uses plain ethernet; "
        "the RDMA fabric is paid for and idle"
    )


def test_fleet_message_names_the_instance_fabric() -> None:
    (f,) = findings(
        "NET005", path=FIXTURES / "NET005" / "fail_fleet_efa_after_a_passing_fleet.yaml"
    )
    assert f.message == "g6.xlarge has no efa fabric (it has ethernet)"
    assert f.document == "efa-serve"


def test_an_ethernet_type_is_judged_by_its_ethernet_speed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A catalog entry may leave `fabric:` out (the catalog's default: Ethernet, no RDMA
    # bandwidth); its speed is then `ethernet_gbps` (p3.16xlarge: 25 Gbps), which is what the
    # blueprint gets and what NET005 compares against.
    data = YAML(typ="safe").load(CATALOG.read_text("utf-8"))
    del data["instances"]["p3.16xlarge"]["fabric"]
    path = tmp_path / "catalog.yaml"
    YAML(typ="safe").dump(data, path)
    monkeypatch.setenv("ARCHFORM_CATALOG", str(path))
    head = (
        "version: 1\nkind: TrainingCluster\nname: v100\n"
        "placement: {provider: aws, region: us-east-1, zones: [us-east-1a]}\n"
        "compute: {nodes: 2, instance_type: p3.16xlarge}\n"
    )
    assert findings("NET005", head) == []
    assert findings("NET005", head + "fabric: {kind: ethernet, gbps_per_node: 25}\n") == []
    (f,) = findings("NET005", head + "fabric: {kind: ethernet, gbps_per_node: 50}\n")
    assert f.message == "fabric declares 50 Gbps per node but p3.16xlarge has 25 Gbps of ethernet"
