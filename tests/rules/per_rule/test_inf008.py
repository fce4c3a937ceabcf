"""INF008 (the model does not fit the replica's GPU memory): the hint's search and its option.

Expected instance types and degrees are worked from the catalog's sourced GPU memory
(spec/data/catalog.yaml: A10/A10G and L4 24 GB, A100 80 GB, H100 80 GB, H200 141 GB,
B200 180 GB, MI300X 192 GB; usable 22.49 GiB for the 24 GB cards, 79.65 GiB for H100, the
whole 80 GiB for A100 80GB, per estimate/inference.py USABLE_GIB) and the models' published
sizes (open_models.yaml: Llama 3.1 405B, 8B, Qwen2.5 32B), at the default
gpu_memory_utilization 0.9 (vLLM's default, https://docs.vllm.ai/en/latest/configuration/engine_args.html).
The hint tries a tensor_parallel that divides the node's GPUs; else an instance type of the
same provider, the same GPU model first, then the fewest GPUs, the least memory, the name.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pydantic
import pytest
from rulecase import FIXTURES, findings

from archform.lint.rule import load_rules

FLEET = """\
version: 1
kind: InferenceFleet
name: {name}
placement: {{provider: {provider}, regions: [{region}]}}
model:
{model}
  max_context_tokens: {context}
  source: "s3://models/m/"
server: {{image: "vllm/vllm-openai:v0.6.3", tensor_parallel: {tp}}}
gpu_pool: {{instance_type: {itype}, min_nodes_per_region: 1, max_nodes_per_region: 2{gpu}}}
"""
REGION = {"aws": "us-east-1", "gcp": "us-central1", "azure": "eastus"}
L405 = "  name: m\n  base: llama-3.1-405b"
L8 = "  name: m\n  base: llama-3.1-8b"


def _fleet(
    provider: str,
    itype: str,
    model: str,
    tp: int,
    context: int = 4096,
    gpu: str = "",
    name: str = "f",
) -> str:
    return FLEET.format(
        name=name,
        provider=provider,
        region=REGION[provider],
        model=model,
        context=context,
        tp=tp,
        itype=itype,
        gpu=gpu,
    )


def _hint(text: str) -> str:
    (hit,) = findings("INF008", text)
    server = [n for n, line in enumerate(text.splitlines(), 1) if line.startswith("server:")]
    assert [hit.line] == server  # the written server.tensor_parallel
    return hit.hint


@pytest.mark.parametrize(
    ("provider", "itype", "bigger"),
    [
        # 405B in bf16 is ~756 GiB of weights: 8 H100s hold 8 x 79.65 x 0.9 = 573 GiB; 8 H200s
        # (141 GB) hold ~1,011 GiB, with less memory than B200 or MI300X: the provider's own
        # H200 instance (aws: p5e before p5en by name; gcp: a3-ultragpu-8g), never another
        # provider's (azure's Standard_ND96isr_H200_v5 would sort first by name)
        ("aws", "p5.48xlarge", "p5e.48xlarge"),
        ("gcp", "a3-highgpu-8g", "a3-ultragpu-8g"),
    ],
)
def test_larger_instance_is_of_the_fleets_provider(provider: str, itype: str, bigger: str) -> None:
    assert _hint(_fleet(provider, itype, L405, 8)).endswith(
        f"use {bigger} with server.tensor_parallel: 8"
    )


def test_larger_instance_may_have_a_single_gpu() -> None:
    # Qwen2.5 32B in bf16 (~61 GiB) on azure's 2 x A10 (2 x 22.49 x 0.9 = 40.5 GiB): no A10
    # size holds it; one A100 80GB does (72 GiB budget), and the smallest A100 size,
    # Standard_NC24ads_A100_v4 (1 GPU), sorts first by name among them
    hint = _hint(_fleet("azure", "Standard_NV72ads_A10_v5", "  name: m\n  base: qwen2.5-32b", 2))
    assert hint.endswith("use Standard_NC24ads_A100_v4 with server.tensor_parallel: 1")


def test_larger_instance_uses_the_fewest_gpus_that_hold_it() -> None:
    # Llama 3.1 8B at 131,072 tokens: ~15 GiB weights + 16 GiB KV (32 layers x 8 KV heads x
    # 128 x 2 bytes x 2 per token) = 31 GiB; one L4 holds 20.2 GiB, two 40.5 GiB: the
    # 4-GPU g6.12xlarge at TP 2, not TP 4
    hint = _hint(_fleet("aws", "g6.xlarge", L8, 1, context=131072))
    assert hint == (
        "no tensor_parallel on 1 GPUs of g6.xlarge holds it; "
        "use g6.12xlarge with server.tensor_parallel: 2"
    )


def test_needed_tp_may_be_every_gpu_of_the_node() -> None:
    # 405B in fp8, ~378 GiB: 4 H100s hold 286.7 GiB, 8 hold 573 GiB; 5, 6 or 7 do not divide
    # the node's 8 GPUs
    hint = _hint(_fleet("aws", "p5.48xlarge", L405 + "\n  precision: fp8", 4))
    assert hint == "set server.tensor_parallel: 8 (of the 8 GPUs per node)"


def test_needed_tp_on_an_odd_gpu_count() -> None:
    # an instance type the catalog does not know, declared with 3 L4s: 25B in bf16 (~46.6 GiB)
    # needs all three (3 x 20.2 = 60.7 GiB); 2 does not divide 3
    model = "  name: m\n  params: 25e9\n  layers: 48\n  kv_heads: 8\n  head_dim: 128"
    text = _fleet("aws", "custom-box", model, 1, gpu=", gpu: {model: L4, per_node: 3}")
    assert _hint(text) == "set server.tensor_parallel: 3 (of the 3 GPUs per node)"


def test_message_names_an_assumed_shape_only_when_assumed() -> None:
    # a model name outside the table and no layers: the shape is a reference model's
    (assumed,) = findings("INF008", _fleet("aws", "p5.48xlarge", "  name: c\n  params: 70e9", 1))
    assert "for 4096 tokens (shape of llama-3.1-70b)); threshold:" in assumed.message
    (known,) = findings("INF008", _fleet("aws", "p5.48xlarge", L405, 4))
    assert "for 4096 tokens); threshold:" in known.message


@pytest.mark.parametrize(
    "first",
    [
        # no GPU count (an instance type the catalog does not know, no `gpu:`): skipped
        _fleet("aws", "custom-box", L8, 1, name="a"),
        # fits: 8B at 4096 tokens on one L4
        _fleet("aws", "g6.xlarge", L8, 1, name="a"),
    ],
)
def test_every_fleet_is_checked_after_a_skipped_one(first: str) -> None:
    text = first + "---\n" + _fleet("aws", "g6.xlarge", L8, 1, context=131072, name="b")
    got = findings("INF008", text)
    assert [f.line for f in got] == [first.count("\n") + 1 + 10]


def test_an_instance_with_an_unknown_gpu_does_not_end_the_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ARCHFORM_CATALOG may add an instance type whose GPU the `gpus` table lacks: it is
    # skipped, and the types after it are still searched (the bundled answer stays)
    bundled = Path(sys.modules["archform.spec.catalog"].__file__ or "").parent
    data = json.loads((bundled / "data" / "catalog.json").read_text("utf-8"))
    odd = dict(data["instances"]["g5.48xlarge"], family=None, gpu={"count": 8, "model": "X9"})
    odd.pop("family")
    data["instances"] = {"aa-odd.48xlarge": odd, **data["instances"]}
    path = tmp_path / "catalog.json"
    path.write_text(json.dumps(data), "utf-8")
    monkeypatch.setenv("ARCHFORM_CATALOG", str(path))
    (hit,) = findings("INF008", path=FIXTURES / "INF008" / "fail_70b_on_4_gpu_instance.yaml")
    assert "use g5.48xlarge with server.tensor_parallel: 8" in hit.hint


def test_gpu_memory_utilization_is_a_fraction() -> None:
    # vLLM: "The fraction of GPU memory to be used for the model executor, which can range
    # from 0 to 1" (engine arguments, --gpu-memory-utilization); 0 leaves nothing
    rule = load_rules().get("INF008")
    assert rule is not None

    def accepted(value: float) -> bool:
        try:
            rule.options(gpu_memory_utilization=value)
        except pydantic.ValidationError:
            return False
        return True

    cases = {-0.5: False, 0.0: False, 0.05: True, 0.5: True, 1.0: True, 1.01: False, 1.5: False}
    assert {v: accepted(v) for v in cases} == cases


def test_loading_the_rule_leaves_the_fleet_models_unloaded() -> None:
    # a lint without a fleet does not import the fleet models (tests/lint/test_startup.py);
    # this module names InferenceFleet for the type checker only
    probe = (
        "import sys, archform.lint.rules.inf.inf008_model_does_not_fit\n"
        "print('archform.spec.models.inference' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "False"
