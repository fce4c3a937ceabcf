"""INF013 (tensor parallelism that splits attention heads): the rules of vLLM and Megatron.

Head counts are the models' config.json values (num_attention_heads, num_key_value_heads):
- Qwen2.5-7B 28 and 4 (https://huggingface.co/Qwen/Qwen2.5-7B/blob/main/config.json)
- Llama 3.1 8B 32 and 8 (https://huggingface.co/meta-llama/Llama-3.1-8B/blob/main/config.json)
- Llama 2 13B 40 and 40 (https://huggingface.co/meta-llama/Llama-2-13b-hf/blob/main/config.json)
- Mixtral 8x22B 48 and 8 (https://huggingface.co/mistralai/Mixtral-8x22B-v0.1/blob/main/config.json)
- Gemma 2 27B 32 and 16 (https://huggingface.co/google/gemma-2-27b/blob/main/config.json)

vLLM (vllm/config/model.py verify_with_parallel_config, and the QKV layer's KV-head split in
vllm/model_executor/layers/linear.py) needs TP to divide the attention heads and, for the KV
heads, either TP divides them or (TP above them) they divide TP, the heads being replicated.
Megatron-LM (megatron/core/transformer/attention.py) divides both heads and query groups by
TP. The hint lists the divisors up to 16 (the tensor-parallel sizes of one or two 8-GPU nodes).
"""

from __future__ import annotations

import pytest
from rulecase import findings

from archform.lint.rules.inf.inf013_tensor_parallel_splits_heads import _divisors

FLEET = """\
version: 1
kind: InferenceFleet
name: {name}
placement: {{provider: aws, regions: [us-east-1]}}
model:
  name: m
  base: {base}
  source: "s3://models/m/"
server: {{image: "vllm/vllm-openai:v0.6.3", tensor_parallel: {tp}}}
gpu_pool: {{instance_type: p5.48xlarge, min_nodes_per_region: 1, max_nodes_per_region: 2}}
"""

CLUSTER = """\
version: 1
kind: TrainingCluster
name: {name}
placement: {{provider: aws, region: us-east-1}}
compute: {{nodes: 24, instance_type: p5.48xlarge}}
training:
  framework: {framework}
  model: {model}
  tensor_parallel: {tp}
"""


def _fleet(base: str, tp: int, name: str = "f") -> str:
    return FLEET.format(name=name, base=base, tp=tp)


def _cluster(model: str, tp: int, framework: str = "megatron", name: str = "c") -> str:
    return CLUSTER.format(name=name, model=model, tp=tp, framework=framework)


@pytest.mark.parametrize(
    ("base", "tp", "divisors"),
    [
        ("qwen2.5-7b", 8, "28: 1, 2, 4, 7, 14"),
        ("llama-3.1-8b", 3, "32: 1, 2, 4, 8, 16"),  # 16 is inside the hint's range
    ],
)
def test_serving_hint_lists_the_head_divisors_up_to_16(base: str, tp: int, divisors: str) -> None:
    (hit,) = findings("INF013", _fleet(base, tp))
    assert hit.line == 9
    assert "attention heads; threshold: each rank takes whole heads" in hit.message
    assert hit.hint == f"use a tensor_parallel that divides {divisors}"


@pytest.mark.parametrize(
    ("base", "tp", "kv"),
    [
        ("qwen2.5-7b", 7, 4),  # 7 divides 28 heads; 4 KV heads: 4 % 7 and 7 % 4 are not 0
        ("mixtral-8x22b", 3, 8),  # 3 divides 48 heads; 8 KV heads: neither divides the other
        ("mixtral-8x22b", 6, 8),
    ],
)
def test_serving_kv_heads_neither_divided_nor_replicated(base: str, tp: int, kv: int) -> None:
    (hit,) = findings("INF013", _fleet(base, tp))
    assert f"does not divide {base}'s {kv} KV heads (nor is TP a multiple of them)" in hit.message


@pytest.mark.parametrize(
    ("base", "tp"),
    [
        ("llama-2-13b", 8),  # 40 heads and 40 KV heads, 5 each
        ("llama-2-13b", 5),
        ("llama-3.1-8b", 8),  # 8 KV heads, one per rank
        ("llama-3.1-8b", 4),
    ],
)
def test_serving_tp_dividing_heads_and_kv_heads_passes(base: str, tp: int) -> None:
    assert findings("INF013", _fleet(base, tp)) == []


def test_every_fleet_is_checked_after_one_that_passes() -> None:
    text = _fleet("llama-3.1-8b", 8, name="a") + "---\n" + _fleet("qwen2.5-7b", 8, name="b")
    # the second document starts on line 12, after the first's 10 lines and `---`
    assert [(f.line, f.rule) for f in findings("INF013", text)] == [(11 + 9, "INF013")]


def test_divisors_up_to_the_limit() -> None:
    assert _divisors(28, 16) == "1, 2, 4, 7, 14"
    assert _divisors(16, 16) == "1, 2, 4, 8, 16"
    assert _divisors(34, 16) == "1, 2"  # 17 is above the limit
    assert _divisors(17, 16) == "1"


@pytest.mark.parametrize(
    ("model", "tp", "flagged"),
    [
        ("llama-3.1-8b", 8, False),  # 32 heads, 8 query groups: one per rank
        ("llama-3.1-8b", 4, False),
        ("llama-3.1-8b", 2, False),
        ("llama-2-13b", 8, False),  # 40 and 40: 5 each
        ("qwen2.5-7b", 8, True),  # 28 heads split over 8 ranks
        ("mixtral-8x22b", 3, True),  # 48 heads divide by 3, 8 query groups do not
    ],
)
def test_megatron_needs_both_counts_divided(model: str, tp: int, flagged: bool) -> None:
    got = findings("INF013", _cluster(model, tp))
    assert [(f.line, f.rule) for f in got] == ([(9, "INF013")] if flagged else [])


def test_megatron_hint_divides_both_counts() -> None:
    # Gemma 2 27B: 32 heads, 16 query groups; TP 3 divides neither
    (hit,) = findings("INF013", _cluster("gemma-2-27b", 3))
    assert "32 attention heads and 16 query groups" in hit.message
    assert hit.hint == "use a tensor_parallel that divides both: 1, 2, 4, 8, 16"


@pytest.mark.parametrize("framework", ["pytorch_fsdp", "deepspeed", "jax"])
def test_only_megatron_and_nemo_training_is_checked(framework: str) -> None:
    assert findings("INF013", _cluster("qwen2.5-7b", 8, framework=framework)) == []
    assert findings("INF013", _cluster("qwen2.5-7b", 8, framework="nemo")) != []


def test_training_without_a_model_or_a_training_section_is_skipped() -> None:
    no_model = _cluster("qwen2.5-7b", 8).replace("  model: qwen2.5-7b\n", "")
    no_training = _cluster("qwen2.5-7b", 8).split("training:")[0]
    assert findings("INF013", no_model) == []
    assert findings("INF013", no_training) == []


@pytest.mark.parametrize(
    "first",
    [
        "no training section",
        "pytorch_fsdp",
        "passing megatron",
    ],
)
def test_every_cluster_is_checked_after_a_skipped_one(first: str) -> None:
    if first == "no training section":
        head = _cluster("qwen2.5-7b", 8, name="a").split("training:")[0]
    elif first == "pytorch_fsdp":
        head = _cluster("qwen2.5-7b", 8, framework="pytorch_fsdp", name="a")
    else:
        head = _cluster("llama-3.1-8b", 8, name="a")
    text = head + "---\n" + _cluster("qwen2.5-7b", 8, name="b")
    offset = head.count("\n") + 1
    assert [(f.line, f.rule) for f in findings("INF013", text)] == [(offset + 9, "INF013")]


def test_no_bundled_model_has_a_head_count_divisible_by_17() -> None:
    # bench/mutation-equivalents.toml explains the hint-limit mutants 16 -> 17 by this and by
    # every model's KV heads dividing its attention heads (GQA groups whole query heads)
    from archform.spec.open_models import open_models

    for model in open_models().values():
        assert model.attention_heads % 17, model.name
        assert min(model.attention_heads, model.kv_heads) % 17, model.name
        assert model.attention_heads % model.kv_heads == 0, model.name
