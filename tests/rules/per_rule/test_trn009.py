"""TRN009 (a data type the GPUs cannot compute in): the generation each message names, and one
finding per cluster.

BF16 tensor cores arrived with Ampere (NVIDIA Ampere architecture whitepaper,
https://images.nvidia.com/aem-dam/en-zz/Solutions/data-center/nvidia-ampere-architecture-whitepaper.pdf)
and FP8 ones with Ada and Hopper (Hopper whitepaper,
https://resources.nvidia.com/en-us-tensor-core/gtc22-whitepaper-hopper); Volta has FP16 tensor
cores only (https://images.nvidia.com/content/volta-architecture/pdf/volta-architecture-whitepaper.pdf).
So bf16 on a V100 names Ampere as the threshold and fp8 on an A100 names Ada/Hopper, each with
the whitepaper of the GPU's own architecture (the catalog's precisions_source).
"""

from __future__ import annotations

from rulecase import FIXTURES, findings

VOLTA = "https://images.nvidia.com/content/volta-architecture/pdf/volta-architecture-whitepaper.pdf"
AMPERE = (
    "https://images.nvidia.com/aem-dam/en-zz/Solutions/data-center/"
    "nvidia-ampere-architecture-whitepaper.pdf"
)


def test_bf16_on_volta_names_ampere() -> None:
    (hit,) = findings("TRN009", path=FIXTURES / "TRN009" / "fail_bf16_on_v100.yaml")
    assert hit.message == (
        "node group 'gpu' trains in bf16 on V100 (Volta), which computes in fp32, fp16; "
        f"threshold: bf16 needs Ampere or newer ({VOLTA})"
    )
    assert hit.hint == (
        "use training.precision: fp16 (with loss scaling), or GPUs that have bf16 tensor cores"
    )


def test_fp8_on_ampere_names_ada_and_hopper() -> None:
    # p4d.24xlarge: 8 A100 40 GB (https://aws.amazon.com/ec2/instance-types/p4/)
    (hit,) = findings("TRN009", path=FIXTURES / "TRN009" / "fail_fp8_on_a100.yaml")
    assert hit.message == (
        "node group 'gpu' trains in fp8 on A100-40GB (Ampere), which computes in fp32, tf32, "
        f"fp16, bf16, int8; threshold: fp8 needs Ada, Hopper or newer ({AMPERE})"
    )
    assert hit.hint == "use training.precision: bf16, or GPUs that have fp8 tensor cores"


def test_fleet_bf16_on_turing_names_ampere() -> None:
    (hit,) = findings("TRN009", path=FIXTURES / "TRN009" / "fail_fleet_bf16_on_t4.yaml")
    assert hit.message.startswith("the fleet serves bf16 on T4 (Turing), which computes in ")
    assert "; threshold: bf16 needs Ampere or newer (" in hit.message


def test_one_finding_per_cluster_naming_the_first_group_that_lacks_it() -> None:
    # V100 (Volta) and T4 (Turing) both lack bf16: one finding at training.precision, for the
    # first such group, not one per group
    text = """\
version: 1
kind: TrainingCluster
name: old
placement: {provider: onprem, region: lab}
compute:
  nodes: 2
  gpu: {model: A100, per_node: 8}
  extra_groups:
    - name: volta
      nodes: 2
      gpu: {model: V100, per_node: 8}
    - name: turing
      nodes: 2
      gpu: {model: T4, per_node: 4}
fabric: {kind: infiniband, gbps_per_node: 100}
training: {framework: pytorch_fsdp, precision: bf16}
"""
    (hit,) = findings("TRN009", text)
    assert hit.line == 16
    assert hit.message.startswith("node group 'volta' trains in bf16 on V100 (Volta)")
