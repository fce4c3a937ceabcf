"""A Platform's `training` and `inference` must name documents of the right kind, in process.

tests/spec/test_broken_corpus.py checks the same files through the CLI (one process per file,
minutes); these load them in process, so the mutation target `loader-checks` can run them per
mutant. The expected positions are the corpus files' own `# error-at:` lines, written by hand.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from archform.spec import SpecError, load_text

BROKEN = Path(__file__).parent / "broken"

CLUSTER = """\
version: 1
kind: TrainingCluster
name: tc
placement: {provider: aws, region: us-east-1}
compute:
  nodes: 2
  instance_type: p5.48xlarge
"""
FLEET = """\
version: 1
kind: InferenceFleet
name: fleet
placement: {provider: aws, region: us-east-1}
model: {name: llama-8b, params: 8e9, source: "s3://corp-models/llama-8b/v1/"}
server: {image: "vllm/vllm-openai:v0.6.3"}
gpu_pool: {instance_type: g5.12xlarge, min_nodes_per_region: 1, max_nodes_per_region: 4}
"""


def _platform(training: str, inference: str) -> str:
    return (
        f"version: 1\nkind: Platform\nname: plat\ntraining: {training}\ninference: {inference}\n"
        "registry: {provider: aws, region: us-east-1, bucket: corp-models}\n"
    )


def _problems(text: str) -> list[tuple[int, int, str, str]]:
    with pytest.raises(SpecError) as info:
        load_text(text, "bp.yaml")
    return [(p.line, p.column, p.message, p.hint) for p in info.value.problems]


def _at(text: str, key: str) -> tuple[int, int]:
    """1-based line and column of the value of the first `key:` line in `text`."""
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith(f"{key}: "):
            return n, len(key) + 3
    raise AssertionError(key)


def _corpus(name: str) -> tuple[str, tuple[int, int]]:
    text = (BROKEN / name).read_text("utf-8")
    match = re.match(r"# error-at: (\d+):(\d+)", text)
    assert match, name
    return text, (int(match[1]), int(match[2]))


def test_the_cluster_fleet_and_platform_load_as_written() -> None:
    # the documents below are sound: each failure that follows is the reference alone
    text = CLUSTER + "---\n" + FLEET + "---\n" + _platform("tc", "fleet")
    assert [d.kind for d in load_text(text, "bp.yaml").documents] == [
        "TrainingCluster",
        "InferenceFleet",
        "Platform",
    ]


def test_training_naming_a_fleet_is_located_at_the_name() -> None:
    text, at = _corpus("platform-training-is-fleet.yaml")
    # the file's fleet also serves from outside the registry: that is reported after it
    line, col, message, hint = _problems(text)[0]
    assert (line, col) == at
    assert message == "training: 'fleet' is not a TrainingCluster but an InferenceFleet"
    assert "TrainingCluster" in hint


def test_training_naming_the_platform_is_refused() -> None:
    text = CLUSTER + "---\n" + FLEET + "---\n" + _platform("plat", "fleet")
    ((line, col, message, _),) = _problems(text)
    assert (line, col) == _at(text, "training")
    assert message == "training: 'plat' is not a TrainingCluster but a Platform"


def test_inference_naming_the_platform_is_refused() -> None:
    text = CLUSTER + "---\n" + FLEET + "---\n" + _platform("tc", "plat")
    ((line, col, message, hint),) = _problems(text)
    assert (line, col) == _at(text, "inference")
    assert message == "inference: 'plat' is not an InferenceFleet but a Platform"
    assert "InferenceFleet" in hint


def test_an_unknown_inference_name_is_located_and_says_what_to_pass() -> None:
    text, at = _corpus("platform-inference-unknown.yaml")
    ((line, col, message, hint),) = _problems(text)
    assert (line, col) == at
    assert message == "inference: no document named 'serving' among the files given"
    assert "pass the file holding the InferenceFleet" in hint


def test_a_near_miss_gets_the_name_it_resembles() -> None:
    text = CLUSTER + "---\n" + FLEET + "---\n" + _platform("tc", "fleets")
    ((_, _, message, hint),) = _problems(text)
    assert "no document named 'fleets'" in message
    assert hint == "did you mean 'fleet'?"


def test_both_references_wrong_gives_both_problems_in_field_order() -> None:
    text = CLUSTER + "---\n" + FLEET + "---\n" + _platform("fleet", "plat")
    found = _problems(text)
    assert [(line, col) for line, col, _, _ in found] == [
        _at(text, "training"),
        _at(text, "inference"),
    ]
    assert "is not a TrainingCluster" in found[0][2]
    assert "is not an InferenceFleet" in found[1][2]


def _fleet_network(network: str) -> str:
    placement = "placement: {provider: aws, region: us-east-1}"
    return FLEET.replace(placement, placement[:-1] + f", network: {network}}}")


def test_a_fleet_network_over_the_clusters_vpc_is_refused() -> None:
    # the tiers are connected (through the deployer's network and the registry): the fleet's
    # first region is the first /16 of its cidr, 10.42.0.0/16, the cluster's default VPC
    fleet = _fleet_network("{cidr: 10.42.0.0/15}")
    text = CLUSTER + "---\n" + fleet + "---\n" + _platform("tc", "fleet")
    ((line, _, message, _),) = _problems(text)
    assert line == text.splitlines().index(fleet.splitlines()[3]) + 1
    assert "10.42.0.0/16 overlaps the cluster VPC 10.42.0.0/16" in message


def test_a_fleet_service_range_may_reuse_the_clusters_vpc_range() -> None:
    # a Service range is virtual, answered on each node (kubernetes.io/docs/concepts/
    # services-networking/service/, "Virtual IP addressing mechanism"), so no connected network
    # routes to it: only routable ranges are compared across the tiers (spec/networks.py)
    fleet = _fleet_network("{cidr: 10.40.0.0/14, service_cidr: 10.42.0.0/16}")
    text = CLUSTER + "---\n" + fleet + "---\n" + _platform("tc", "fleet")
    assert [d.kind for d in load_text(text, "bp.yaml").documents][-1] == "Platform"


@pytest.mark.parametrize("bucket", ["a-models", "zeta-models", "corp-models-eu"])
def test_a_fleet_serving_outside_the_registry_is_refused_whatever_the_bucket(bucket: str) -> None:
    # the fleet must serve <registry bucket>/<model name>/<version>/ (promote writes there);
    # any other bucket is outside, whether its name sorts before or after the registry's
    fleet = FLEET.replace("s3://corp-models/", f"s3://{bucket}/")
    text = CLUSTER + "---\n" + fleet + "---\n" + _platform("tc", "fleet")
    ((line, _, message, _),) = _problems(text)
    assert line == text.splitlines().index(fleet.splitlines()[4]) + 1
    assert "not a version folder of the registry s3://corp-models/llama-8b/" in message
