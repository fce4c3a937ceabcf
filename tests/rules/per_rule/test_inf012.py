"""INF012 (served context longer than the model was trained for): boundary, RoPE, every fleet.

Expected numbers are the models' config.json values:
- Llama 3.1 8B: max_position_embeddings 131072, rope_scaling {rope_type: llama3, factor: 8.0,
  original_max_position_embeddings: 8192}
  (https://huggingface.co/meta-llama/Llama-3.1-8B/blob/main/config.json).
- Llama 2 13B: max_position_embeddings 4096, no rope_scaling
  (https://huggingface.co/meta-llama/Llama-2-13b-hf/blob/main/config.json).
vLLM refuses a max_model_len above the derived maximum and accepts one equal to it
(`_get_and_verify_max_len`, https://github.com/vllm-project/vllm/blob/main/vllm/config/model.py).
"""

from __future__ import annotations

import pytest
from rulecase import findings

FLEET = """\
version: 1
kind: InferenceFleet
name: {name}
placement: {{provider: aws, regions: [us-east-1]}}
model:
  name: chat
  base: {base}
  max_context_tokens: {tokens}
  source: "s3://models/chat/"
server: {{image: "vllm/vllm-openai:v0.6.3", tensor_parallel: 4}}
gpu_pool: {{instance_type: p5.48xlarge, min_nodes_per_region: 1, max_nodes_per_region: 2}}
"""


@pytest.mark.parametrize(("base", "trained"), [("llama-3.1-8b", 131072), ("llama-2-13b", 4096)])
def test_the_trained_maximum_itself_is_allowed(base: str, trained: int) -> None:
    assert findings("INF012", FLEET.format(name="a", base=base, tokens=trained)) == []
    (hit,) = findings("INF012", FLEET.format(name="a", base=base, tokens=trained + 1))
    assert hit.line == 8
    assert f"threshold: {trained} " in hit.message
    assert hit.hint.startswith(f"set max_context_tokens: {trained} or less")


def test_message_names_the_rope_scaling_only_when_the_model_has_one() -> None:
    (llama31,) = findings("INF012", FLEET.format(name="a", base="llama-3.1-8b", tokens=262144))
    assert "(max_position_embeddings, RoPE scaling llama3 x8 from 8192, https://" in (
        llama31.message
    )
    (llama2,) = findings("INF012", FLEET.format(name="a", base="llama-2-13b", tokens=8192))
    assert "(max_position_embeddings, https://huggingface.co/meta-llama/Llama-2-13b-hf/" in (
        llama2.message
    )
    assert "RoPE" not in llama2.message


def test_every_fleet_is_checked_after_one_that_passes() -> None:
    within = FLEET.format(name="first", base="llama-3.1-8b", tokens=32768)
    over = FLEET.format(name="second", base="llama-2-13b", tokens=32768)
    got = findings("INF012", within + "---\n" + over)
    # the second document starts after the first's 11 lines and the `---` line
    assert [(f.line, f.rule) for f in got] == [(12 + 8, "INF012")]


def test_loading_the_rule_leaves_the_fleet_models_unloaded() -> None:
    # a lint without a fleet does not import the fleet models (tests/lint/test_startup.py);
    # this module names InferenceFleet for the type checker only
    import subprocess
    import sys

    probe = (
        "import sys, archform.lint.rules.inf.inf012_context_beyond_trained_maximum\n"
        "print('archform.spec.models.inference' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "False"
