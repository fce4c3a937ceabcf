"""INF010 (weights pulled from the public internet or from another region): what it says.

- The message names where public weights come from: "Hugging Face" for `hf://`, else the
  URL's host (RFC 3986: the authority follows `https://`).
- `model.source_region` defaults to the fleet's first region (its field description in
  spec/models/inference.py, and docs/blueprint.md), and the message lists every serving
  region other than the source, in placement order.
"""

from __future__ import annotations

import pytest
from rulecase import findings

FLEET = """\
version: 1
kind: InferenceFleet
name: {name}
placement: {{provider: aws, regions: [{regions}]}}
model:
  name: llama-3.1-8b
  params: 8e9
  source: "{source}"
{extra}  replicate_to_regions: false
server: {{image: "vllm/vllm-openai:v0.6.3"}}
gpu_pool: {{instance_type: g6.xlarge, min_nodes_per_region: 2, max_nodes_per_region: 8}}
"""
THREE = "us-east-1, eu-west-2, ap-southeast-2"


def _fleet(
    source: str = "s3://models/llama/",
    regions: str = THREE,
    source_region: str | None = None,
    name: str = "f",
) -> str:
    extra = f"  source_region: {source_region}\n" if source_region else ""
    return FLEET.format(name=name, regions=regions, source=source, extra=extra)


@pytest.mark.parametrize(
    ("source", "host"),
    [
        ("hf://meta-llama/Llama-3.1-8B-Instruct", "Hugging Face"),
        ("https://models.example.com/llama/8b/", "models.example.com"),
    ],
)
def test_public_message_names_the_host(source: str, host: str) -> None:
    (hit,) = findings("INF010", _fleet(source=source))
    assert hit.line == 8
    assert hit.message.startswith(f"weights come from the public internet ({host}): ")


def test_source_region_defaults_to_the_first_region() -> None:
    (hit,) = findings("INF010", _fleet())
    assert hit.line == 9  # replicate_to_regions: false
    assert hit.message.startswith("pods in eu-west-2, ap-southeast-2 pull weights from us-east-1; ")


@pytest.mark.parametrize(
    ("source_region", "others"),
    [
        ("us-east-1", "eu-west-2, ap-southeast-2"),
        ("eu-west-2", "us-east-1, ap-southeast-2"),
        ("ap-southeast-2", "us-east-1, eu-west-2"),
    ],
)
def test_message_lists_every_other_region(source_region: str, others: str) -> None:
    (hit,) = findings("INF010", _fleet(source_region=source_region))
    assert hit.message.startswith(f"pods in {others} pull weights from {source_region}; ")


def test_every_fleet_is_checked_after_a_public_one() -> None:
    public = _fleet(source="hf://meta-llama/Llama-3.1-8B-Instruct", name="first")
    far = _fleet(name="second", regions="us-east-1, eu-west-2")
    got = findings("INF010", public + "---\n" + far)
    # the second document starts on line 13, after the first's 11 lines and `---`
    assert [(f.line, f.rule) for f in got] == [(8, "INF010"), (12 + 9, "INF010")]
