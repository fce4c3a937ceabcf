"""NET002 (fabric-below-gpu-demand): option bounds, the hint's instance types, the message.

Expected text is worked from the blueprint and the catalog's sourced entries, per GPU =
fabric Gbps / GPUs:
- p5.48xlarge and p5e.48xlarge: 3,200 Gbps EFA for 8 GPUs = 400 per GPU
  (https://aws.amazon.com/ec2/instance-types/p5/); p5.4xlarge: 100 Gbps for 1 H100;
- p4de.24xlarge: 400 Gbps EFA for 8 A100 = 50 per GPU (https://aws.amazon.com/ec2/instance-types/p4/);
- g5 (https://aws.amazon.com/ec2/instance-types/g5/): g5.48xlarge 100 Gbps EFA for 8 A10G and
  g5.24xlarge 50 for 4 (12.5 per GPU), g5.12xlarge 40 for 4 (10 per GPU), g5.16xlarge,
  g5.8xlarge and g5.4xlarge 25 for 1.
No AWS GPU type in the catalog carries more than 400 Gbps per GPU.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError
from ruamel.yaml import YAML
from rulecase import FIXTURES, findings

import archform.spec
from archform.lint.engine import lint
from archform.lint.finding import Finding
from archform.lint.rule import load_rules
from archform.lint.rules.net.net002_fabric_below_gpu_demand import Net002Options
from archform.spec import load_text

CATALOG = Path(archform.spec.__file__).parent / "data" / "catalog.yaml"


def _with(text: str, **options: object) -> list[Finding]:
    rule = load_rules().get("NET002")
    assert rule is not None
    opts = {"NET002": Net002Options.model_validate(options)}
    return list(lint(load_text(text, "t.yaml"), rules=[rule], options=opts).findings)


def _aws(instance_type: str, nodes: int) -> str:
    return (
        "version: 1\nkind: TrainingCluster\nname: c\n"
        "placement: {provider: aws, region: us-east-1, zones: [us-east-1a]}\n"
        f"compute: {{nodes: {nodes}, instance_type: {instance_type}}}\n"
    )


@pytest.mark.parametrize(
    ("options", "ok"),
    [
        ({"min_gbps_per_gpu": 0}, False),
        ({"min_gbps_per_gpu": 0.5}, True),
        ({"min_gbps_per_gpu": 100_000}, True),
        ({"min_gbps_per_gpu": 100_000.5}, False),
        ({"min_gpus": 0}, False),
        ({"min_gpus": 1}, True),
        ({"min_gpus": 10_000_000}, True),
        ({"min_gpus": 10_000_001}, False),
    ],
)
def test_option_bounds(options: dict[str, float], ok: bool) -> None:
    if ok:
        Net002Options.model_validate(options)
    else:
        with pytest.raises(ValidationError):
            Net002Options.model_validate(options)


def test_defaults_are_the_documented_ones() -> None:
    # the rule doc: `min_gpus` (16), `min_gbps_per_gpu` (100)
    opts = Net002Options()
    assert (opts.min_gpus, opts.min_gbps_per_gpu) == (16, 100.0)


def test_no_faster_type_of_the_gpu_names_the_providers_fastest() -> None:
    (f,) = findings("NET002", path=FIXTURES / "NET002" / "fail_p4de_no_faster_a100.yaml")
    assert f.hint == (
        "the p4de.24xlarge fabric is fixed by the instance type; no aws A100 instance type "
        "in archform's catalog has 100 Gbps per GPU; p5.48xlarge (3200 Gbps efa for 8 H100) "
        "or p5e.48xlarge (3200 Gbps efa for 8 H200) do"
    )


def test_no_type_of_the_provider_meets_the_floor() -> None:
    # 16 x p5.4xlarge: 100 Gbps per GPU, floor 500: nothing on AWS carries 500 per GPU.
    (f,) = _with(_aws("p5.4xlarge", 16), min_gbps_per_gpu=500)
    assert f.hint == (
        "the p5.4xlarge fabric is fixed by the instance type; accept the slower allreduce "
        "or move to a provider with RDMA"
    )


def test_a_type_exactly_at_the_floor_is_offered_by_its_per_gpu_share() -> None:
    # 4 x g5.12xlarge: 10 Gbps per GPU; at a 12.5 floor g5.48xlarge and g5.24xlarge (12.5
    # each) qualify and carry the most per node.
    (f,) = _with(_aws("g5.12xlarge", 4), min_gbps_per_gpu=12.5)
    assert f.hint == (
        "the g5.12xlarge fabric is fixed by the instance type; use g5.48xlarge "
        "(100 Gbps efa for 8 A10G) or g5.24xlarge (50 Gbps efa for 4 A10G)"
    )


def test_on_prem_message_and_hint_at_a_fractional_floor() -> None:
    text = (FIXTURES / "NET002" / "fail_doc_example.yaml").read_text("utf-8")
    # 400 Gbps for 8 GPUs = 50 per GPU; floor 62.5 per GPU = 500 per node
    (f,) = _with(text, min_gbps_per_gpu=62.5)
    assert f.message.startswith(
        "fabric gives 50 Gbps per GPU (400 Gbps for 8 GPUs per node); threshold: >= 62.5 Gbps "
        "per GPU; archform estimate's step model gives "
    )
    assert "on 500 Gbps per node (62.5 per GPU)" in f.message
    assert f.hint == "provision 500 Gbps per node or more, ideally one NIC per GPU"
    assert f.line == 10  # gbps_per_node


@pytest.mark.parametrize(
    ("gpu", "fabric"),
    [
        ({"model": "A100"}, {"gbps": 3200, "interfaces": 32, "kind": "efa"}),
        ({"model": "A100", "count": -8}, {"gbps": -3200, "interfaces": 32, "kind": "efa"}),
    ],
)
def test_a_catalog_type_without_a_positive_gpu_count_is_never_offered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gpu: dict[str, object], fabric: object
) -> None:
    # A catalog entry may leave the GPU count out (the catalog reads it as 0) or give a
    # nonsensical one: there is no per-GPU share to compare (even where the signs of a
    # negative count and bandwidth would cancel), and the hint is the bundled catalog's.
    data = YAML(typ="safe").load(CATALOG.read_text("utf-8"))
    entry = dict(data["instances"]["p5.48xlarge"])
    entry["gpu"] = gpu
    entry["fabric"] = fabric
    data["instances"]["p5z.48xlarge"] = entry
    path = tmp_path / "catalog.yaml"
    YAML(typ="safe").dump(data, path)
    monkeypatch.setenv("ARCHFORM_CATALOG", str(path))
    (f,) = findings("NET002", path=FIXTURES / "NET002" / "fail_p4de_no_faster_a100.yaml")
    assert "p5z" not in f.hint
    assert f.hint.endswith(
        "p5.48xlarge (3200 Gbps efa for 8 H100) or p5e.48xlarge (3200 Gbps efa for 8 H200) do"
    )


def test_a_fractional_share_per_gpu_is_stated_exactly() -> None:
    # 100 Gbps for 8 GPUs = 12.5 Gbps per GPU
    text = (FIXTURES / "NET002" / "fail_doc_example.yaml").read_text("utf-8")
    (f,) = findings("NET002", text.replace("gbps_per_node: 400", "gbps_per_node: 100"))
    assert f.message.startswith(
        "fabric gives 12.5 Gbps per GPU (100 Gbps for 8 GPUs per node); threshold: >= 100 Gbps "
        "per GPU; "
    )


def test_single_gpu_types_are_offered() -> None:
    # at a 25 Gbps-per-GPU floor only the one-GPU g5 sizes qualify (25 Gbps for 1 A10G)
    (f,) = _with(_aws("g5.12xlarge", 4), min_gbps_per_gpu=25)
    assert f.hint == (
        "the g5.12xlarge fabric is fixed by the instance type; use g5.16xlarge "
        "(25 Gbps efa for 1 A10G) or g5.4xlarge (25 Gbps ethernet for 1 A10G)"
    )


def test_on_prem_nodes_shaped_like_an_instance_type_can_change_their_fabric() -> None:
    # on-prem, the instance type only fills the node's shape (8 A100, 400 Gbps): the fabric
    # is the site's to provision, 100 x 8 = 800 Gbps per node
    text = (
        "version: 1\nkind: TrainingCluster\nname: c\n"
        "placement: {provider: onprem, region: lab}\n"
        "compute: {nodes: 4, instance_type: p4de.24xlarge}\n"
    )
    (f,) = findings("NET002", text)
    assert f.hint == "provision 800 Gbps per node or more, ideally one NIC per GPU"
