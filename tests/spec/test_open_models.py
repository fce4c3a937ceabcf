"""The open-model table: sourced entries, named models fill a blueprint's shape."""

from __future__ import annotations

import re

import pytest

from archform.spec import SpecError, load_text
from archform.spec.catalog import load_catalog
from archform.spec.errors import UsageError
from archform.spec.models import InferenceFleet, TrainingCluster
from archform.spec.open_models import open_model, open_models, parse_table

ENTRY = {
    "source": "https://huggingface.co/x/y/blob/main/config.json",
    "params_source": "https://huggingface.co/x/y",
    "layers": 2,
    "hidden_size": 64,
    "attention_heads": 4,
    "kv_heads": 2,
    "head_dim": 16,
    "intermediate_size": 128,
    "vocab_size": 100,
    "max_context": 512,
    "dtype": "bfloat16",
    "params": 1e6,
}


def test_every_entry_cites_its_config() -> None:
    for model in open_models().values():
        assert model.source.startswith("https://huggingface.co/")
        assert model.source.endswith("/config.json")
        assert model.params_source.startswith("https://")


@pytest.mark.parametrize("missing", ["source", "params_source"])
def test_loader_refuses_an_entry_without_a_source(missing: str) -> None:
    entry = {k: v for k, v in ENTRY.items() if k != missing}
    with pytest.raises(UsageError, match="has no"):
        parse_table({"models": {"m": entry}})


def test_loader_refuses_an_entry_without_its_shape() -> None:
    entry = {k: v for k, v in ENTRY.items() if k != "kv_heads"}
    with pytest.raises(UsageError, match="lacks 'kv_heads'"):
        parse_table({"models": {"m": entry}})


def test_published_shapes() -> None:
    # Llama 3.1 405B config.json: 126 layers, 128 heads, 8 KV heads, 131072 positions
    # (https://huggingface.co/meta-llama/Llama-3.1-405B/blob/main/config.json).
    big = open_model("llama-3.1-405b")
    assert big is not None
    assert (big.layers, big.attention_heads, big.kv_heads, big.max_context) == (126, 128, 8, 131072)
    # Llama 2 was trained for 4,096 tokens (https://arxiv.org/abs/2307.09288, section 2.2).
    assert open_model("Llama-2-70B") is not None
    assert open_model("llama-2-70b").max_context == 4096  # type: ignore[union-attr]
    # DeepSeek-V3 caches the 512-wide latent plus the 64-wide RoPE key per layer (MLA).
    v3 = open_model("deepseek-v3")
    assert v3 is not None and v3.kv_elements_per_token == 61 * (512 + 64)


FLEET = """\
version: 1
kind: InferenceFleet
name: demo
placement: {provider: aws, regions: [us-east-1]}
model:
  name: my-finetune
  base: llama-3.1-70b
  source: "s3://models/ft/"
%s
server: {image: "vllm/vllm-openai:v0.6.3", tensor_parallel: 4}
gpu_pool: {instance_type: p5.48xlarge, min_nodes_per_region: 1, max_nodes_per_region: 2}
"""


def test_a_named_model_fills_the_shape() -> None:
    (doc,) = load_text(FLEET % "", "f.yaml").documents
    assert isinstance(doc.model, InferenceFleet)
    m = doc.model.model
    assert (m.params, m.layers, m.kv_heads, m.head_dim) == (70.6e9, 80, 8, 128)


def test_rounded_params_of_the_named_model_are_accepted() -> None:
    (doc,) = load_text(FLEET % "  params: 70e9", "f.yaml").documents
    assert isinstance(doc.model, InferenceFleet)
    assert doc.model.model.params == 70e9


@pytest.mark.parametrize(
    ("line", "where"),
    [("  layers: 32", "f.yaml:9:3"), ("  params: 8e9", "f.yaml:9:3")],
)
def test_a_shape_contradicting_the_named_model_is_an_error_at_its_line(
    line: str, where: str
) -> None:
    with pytest.raises(SpecError) as info:
        load_text(FLEET % line, "f.yaml")
    text = info.value.problems[0].render()
    assert text.startswith(where), text
    assert "contradicts llama-3.1-70b" in text


def test_training_names_a_model() -> None:
    text = """\
version: 1
kind: TrainingCluster
name: demo
placement: {provider: aws, region: us-east-1}
compute: {nodes: 2, instance_type: p5.48xlarge}
training: {framework: pytorch_fsdp, model: qwen2.5-72b}
"""
    (doc,) = load_text(text, "t.yaml").documents
    assert isinstance(doc.model, TrainingCluster)
    work = doc.model.training
    assert work is not None
    assert (work.model_params, work.layers, work.hidden_size) == (72.7e9, 80, 8192)


def test_an_unknown_model_name_is_an_error_naming_the_table() -> None:
    with pytest.raises(SpecError, match="not a model in archform's table"):
        load_text((FLEET % "").replace("llama-3.1-70b", "llama-9-9000b"), "f.yaml")


def test_gpu_precisions_follow_the_architecture_whitepapers() -> None:
    cat = load_catalog()
    for name in ("V100", "T4"):  # Volta and Turing tensor cores have FP16, no BF16
        gpu = cat.gpu(name)
        assert gpu is not None and not gpu.supports("bf16") and gpu.supports("fp16")
    for name in ("A100", "A10G", "A10"):  # Ampere adds BF16, no FP8
        gpu = cat.gpu(name)
        assert gpu is not None and gpu.supports("bf16") and not gpu.supports("fp8")
    for name in ("L4", "L40S", "H100", "H200", "B200"):  # Ada and Hopper add FP8
        gpu = cat.gpu(name)
        assert gpu is not None and gpu.supports("fp8")
    for gpu in cat.gpus.values():
        assert gpu.precisions and gpu.precisions_source.startswith("https://"), gpu.name


def test_an_mla_base_fills_the_cache_equivalent_shape() -> None:
    # DeepSeek-V3 caches kv_lora_rank 512 + qk_rope_head_dim 64 = 576 elements per layer
    # (https://arxiv.org/abs/2412.19437, section 2.1.1), not 2 x 128 heads x 192.
    text = (FLEET % "  precision: fp8").replace("llama-3.1-70b", "deepseek-v3")
    (doc,) = load_text(text, "f.yaml").documents
    assert isinstance(doc.model, InferenceFleet)
    m = doc.model.model
    assert m.layers is not None and m.kv_heads is not None and m.head_dim is not None
    assert 2 * m.layers * m.kv_heads * m.head_dim == 61 * 576


def _raw_table() -> dict[str, dict[str, object]]:
    from archform.spec.datafile import load_data

    data: dict[str, dict[str, dict[str, object]]] = load_data("open_models.yaml")
    return data["models"]


def test_every_entry_says_what_its_publisher_confirmed() -> None:
    # Issue 22: each entry records where it was checked against the publisher's own files
    # (a repository pinned at a commit, or a model card / report in one), or says it was not.
    for name, raw in _raw_table().items():
        note = str(raw.get("publisher_check", ""))
        assert note, name
        if not note.startswith("not checked"):
            assert re.search(r"github\.com/[^ ]+/blob/[0-9a-f]{40}/|\([0-9a-f]{8}\)", note), name


def test_llama2_7b_13b_are_multi_head_as_their_model_card_says() -> None:
    # meta-llama/llama-models models/llama2/MODEL_CARD.md: GQA only for 70B; the FFN width is
    # Llama 2's rule, 256 x ceil(2/3 x 4 x hidden / 256) (11008, 13824).
    for name in ("llama-2-7b", "llama-2-13b"):
        m = open_model(name)
        assert m is not None
        assert m.kv_heads == m.attention_heads
        assert m.intermediate_size == 256 * -(-int(2 * 4 * m.hidden_size / 3) // 256)
    big = open_model("llama-2-70b")
    assert big is not None and big.kv_heads < big.attention_heads
