"""TRN010 (training state larger than GPU memory): every figure of the message, worked by hand.

The blueprints below give model_params, layers and hidden_size, so each number follows from
the formulas the rule's doc cites, not from a reference model:

- model states (Rajbhandari et al. 2020, ZeRO, section 3.1): 16 bytes per parameter (2 of
  bf16 weights, 2 of gradients, 12 of fp32 Adam state), divided by TP x PP; stage 0 shards
  none of it, stage 1 the 12 bytes of optimizer state over the data-parallel degree
  N = GPUs / (TP x PP x CP): (4 + 12 / N) bytes per parameter;
- activations with full recomputation, assumed when activation_checkpointing is not written
  (Korthikanti et al. 2022, section 4): 2 x sequence x micro-batch x hidden bytes per layer / TP;
  here 2 x 4096 x 1 x 4096 x 32 layers = 1,073,741,824 bytes (1.1 GB) at TP 1;
- GPU memory: p5.48xlarge has 8 H100 GPUs of 80 GB HBM3
  (https://aws.amazon.com/ec2/instance-types/p5/), 80 GiB = 85,899,345,920 bytes (85.9 GB).

Memory is shown in GB (1e9 bytes) to 0.1, from 1e12 bytes in TB to 0.01; the warning's "the
state is ... per GPU" figures are those `archform estimate` prints: GB rounded to 0.01, then
shown to 0.1.
"""

from __future__ import annotations

from rulecase import findings

ACTIVATIONS = 2 * 4096 * 1 * 4096 * 32  # bytes, full recomputation, TP 1


def _cluster(nodes: int, training: str, name: str = "t") -> str:
    return (
        "version: 1\n"
        "kind: TrainingCluster\n"
        f"name: {name}\n"
        "placement: {provider: aws, region: us-east-1}\n"
        f"compute: {{nodes: {nodes}, instance_type: p5.48xlarge}}\n"
        "training:\n"
        f"{training}"
        "  layers: 32\n"
        "  hidden_size: 4096\n"
    )


def _ddp(params: int | float, nodes: int = 4) -> str:
    return _cluster(nodes, f"  framework: pytorch_ddp\n  model_params: {params}\n")


def test_ddp_message_in_full() -> None:
    # 16 x 6,296,875,000 = 100,750,000,000 bytes of state on each of the 32 GPUs (4 nodes x 8),
    # 101,823,741,824 with the activations
    assert 16 * 6_296_875_000 + ACTIVATIONS == 101_823_741_824
    (hit,) = findings("TRN010", _ddp(6_296_875_000))
    assert hit.severity == "error"
    assert hit.line == 7  # training.framework (zero_stage is not written)
    assert hit.message == (
        "pytorch_ddp (ZeRO stage 0, TP 1 x PP 1, data parallel 32) of 6.29688B-parameter model "
        "needs 101.8 GB per GPU: 100.8 GB weights, gradients and Adam state (16 bytes per "
        "parameter, ZeRO paper) + 1.1 GB activations (full recomputation, not written: the "
        "least, 4096 tokens x micro-batch 1); threshold: 85.9 GB (80 GiB) per H100"
    )
    assert hit.hint == (
        "shard the state: pytorch_fsdp (FULL_SHARD) or zero_stage 3 divides it by the 32 "
        "data-parallel GPUs"
    )


def test_gigabytes_are_1e9_bytes() -> None:
    # 16 x 6,265,625,000 = 100,250,000,000 bytes: exactly 100.25 GB, shown to 0.1 (half to even)
    (hit,) = findings("TRN010", _ddp(6_265_625_000))
    assert "needs 101.3 GB per GPU: 100.2 GB weights, gradients and Adam state" in hit.message


def test_a_terabyte_is_1e12_bytes() -> None:
    # 16 x 62.5e9 = 1e12 bytes exactly: shown in TB from there
    (hit,) = findings("TRN010", _ddp(62_500_000_000))
    assert "needs 1.00 TB per GPU: 1.00 TB weights, gradients and Adam state" in hit.message


def test_just_under_a_terabyte_is_shown_in_gigabytes() -> None:
    # model_params takes any positive number: 16 x 62,499,999,999.96875 = 999,999,999,999.5
    # bytes, half a byte under 1e12, so still GB (1000.0 after rounding to 0.1)
    (hit,) = findings("TRN010", _ddp(62_499_999_999.96875))
    assert ": 1000.0 GB weights, gradients and Adam state" in hit.message


def test_model_parallel_layout_and_data_parallel_degree() -> None:
    # 32 nodes x 8 = 256 GPUs, TP 8 x PP 4: N = 256 / 32 = 8; 1e12 parameters at stage 1 hold
    # 1e12 / 32 x (4 + 12 / 8) = 171.875e9 bytes per GPU
    work = (
        "  framework: megatron\n  zero_stage: 1\n  model_params: 1e12\n"
        "  tensor_parallel: 8\n  pipeline_parallel: 4\n"
    )
    (hit,) = findings("TRN010", _cluster(32, work))
    assert hit.line == 8  # training.zero_stage, written
    assert hit.message.startswith(
        "megatron (ZeRO stage 1, TP 8 x PP 4, data parallel 8) of 1000B-parameter model needs "
    )
    assert "171.9 GB weights, gradients and Adam state" in hit.message
    assert hit.hint.endswith("divides it by the 8 data-parallel GPUs")


def test_context_parallel_joins_the_layout() -> None:
    # CP 2 as well: N = 256 / (8 x 4 x 2) = 4
    work = (
        "  framework: megatron\n  zero_stage: 1\n  model_params: 1e12\n"
        "  tensor_parallel: 8\n  pipeline_parallel: 4\n  context_parallel: 2\n"
    )
    (hit,) = findings("TRN010", _cluster(32, work))
    assert hit.message.startswith("megatron (ZeRO stage 1, TP 8 x PP 4 x CP 2, data parallel 4) ")
    assert hit.hint.endswith("divides it by the 4 data-parallel GPUs")


def test_one_data_parallel_replica() -> None:
    # one node, TP 8: all 8 GPUs hold one replica, N = 1; 16 x 1e12 / 8 = 2e12 bytes each
    work = "  framework: megatron\n  zero_stage: 0\n  model_params: 1e12\n  tensor_parallel: 8\n"
    (hit,) = findings("TRN010", _cluster(1, work))
    assert hit.message.startswith("megatron (ZeRO stage 0, TP 8 x PP 1, data parallel 1) ")
    assert "2.00 TB weights, gradients and Adam state" in hit.message
    assert hit.hint.endswith("divides it by the 1 data-parallel GPUs")


def test_warning_figures_round_as_the_estimate_prints_them() -> None:
    # deepspeed without zero_stage: its default, stage 0 (DeepSpeed config docs), so a warning.
    # 16 x 6,210,766,136 + 1,073,741,824 = 100,446,000,000 bytes: 100.446 GB rounded to 0.01 is
    # 100.45, shown to 0.1 as 100.5 (rounded once to 0.1 it would read 100.4)
    assert 16 * 6_210_766_136 + ACTIVATIONS == 100_446_000_000
    text = _cluster(1, "  framework: deepspeed\n  model_params: 6210766136\n")
    (hit,) = findings("TRN010", text)
    assert hit.severity == "warning"
    assert "the state is 100.5 GB per GPU of 85.9 GB: deepspeed (ZeRO stage 0, TP 1 x PP 1, " in (
        hit.message
    )
    assert "data parallel 8) of 6.21077B-parameter model holds 99.4 GB weights" in hit.message
    assert hit.hint.startswith(
        "write training.zero_stage as the framework's configuration sets it (3 shards weights, "
        "gradients and Adam state over the 8 data-parallel GPUs)"
    )


def test_every_cluster_of_a_set_is_checked() -> None:
    # one that fits (FULL_SHARD of 1e9 parameters over 8 GPUs: 2 GB), one warning, one error
    fits = _cluster(1, "  framework: pytorch_fsdp\n  model_params: 1e9\n", name="fits")
    warn = _cluster(1, "  framework: deepspeed\n  model_params: 6210766136\n", name="warn")
    error = _ddp(6_296_875_000).replace("name: t\n", "name: err\n")
    got = findings("TRN010", "---\n".join([fits, warn, error]))
    assert [(f.severity, f.message.split(" ")[0]) for f in got] == [
        ("warning", "zero_stage"),
        ("error", "pytorch_ddp"),
    ]


def test_stage_2_is_told_to_shard_further() -> None:
    # ZeRO stage 2 shards gradients and optimizer state but not the weights: (2 + 14 / N)
    # bytes per parameter, so the hint is still stage 3 (or FSDP FULL_SHARD), which also shards
    # the weights. 2e11 parameters over 8 GPUs: 2e11 x (2 + 14 / 8) = 750 GB each
    text = _cluster(1, "  framework: deepspeed\n  zero_stage: 2\n  model_params: 2e11\n")
    (hit,) = findings("TRN010", text)
    assert hit.severity == "error"
    assert "(ZeRO stage 2, TP 1 x PP 1, data parallel 8)" in hit.message
    assert "750.0 GB weights, gradients and Adam state" in hit.message
    assert hit.hint == (
        "shard the state: pytorch_fsdp (FULL_SHARD) or zero_stage 3 divides it by the 8 "
        "data-parallel GPUs"
    )


def test_stage_3_is_told_to_add_gpus() -> None:
    # stage 3 already shards everything: 16 x 1e12 / 8 = 2 TB per GPU; more GPUs or model
    # parallelism is what is left
    text = _cluster(1, "  framework: deepspeed\n  zero_stage: 3\n  model_params: 1e12\n")
    (hit,) = findings("TRN010", text)
    assert "2.00 TB weights, gradients and Adam state" in hit.message
    assert hit.hint == "add GPUs, tensor/pipeline parallelism, or full activation recomputation"


def test_terabytes_are_1e12_bytes_to_the_hundredth() -> None:
    # 16 x 70.3125e9 = 1.125e12 and 16 x 85.9375e9 = 1.375e12 bytes: exactly halfway between
    # two hundredths of a TB, shown half to even
    (low,) = findings("TRN010", _ddp(70_312_500_000))
    assert "1.12 TB weights, gradients and Adam state" in low.message
    (high,) = findings("TRN010", _ddp(85_937_500_000))
    assert "1.38 TB weights, gradients and Adam state" in high.message


def test_parameter_count_in_billions() -> None:
    # 100,000,499,950 parameters are 100.00049995 billion: "100" to six significant digits
    (hit,) = findings("TRN010", _ddp(100_000_499_950))
    assert " of 100B-parameter model needs " in hit.message


def test_threshold_names_gib_of_a_gpu_the_catalog_does_not_know() -> None:
    # 47.5 GiB = 47.5 x 2**30 = 51,002,736,640 bytes (51.0 GB)
    text = (
        "version: 1\n"
        "kind: TrainingCluster\n"
        "name: lab\n"
        "placement: {provider: onprem, region: lab}\n"
        "compute:\n"
        "  nodes: 1\n"
        "  gpu: {model: lab-accel-2, per_node: 8, memory_gib: 47.5}\n"
        "fabric: {kind: infiniband, gbps_per_node: 400}\n"
        "training:\n"
        "  framework: pytorch_ddp\n"
        "  model_params: 6296875000\n"
        "  layers: 32\n"
        "  hidden_size: 4096\n"
    )
    (hit,) = findings("TRN010", text)
    assert hit.message.endswith("; threshold: 51.0 GB (47.5 GiB) per lab-accel-2")
