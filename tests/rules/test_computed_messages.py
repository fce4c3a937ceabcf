"""Numbers in findings come from the blueprint, the catalog or a cited source (issue 22).

Expected figures here are worked from the sources, never copied from the code's output:
- AWS p5.48xlarge: 3,200 Gbps EFA for 8 H100 (https://aws.amazon.com/ec2/instance-types/p5/);
- ZeRO (https://arxiv.org/abs/1910.02054, section 3.1): 16 bytes per parameter of
  mixed-precision Adam state; Llama 3.1 70B has 70.6B parameters (its model card).
"""

from __future__ import annotations

from pathlib import Path

from archform.lint.engine import lint
from archform.lint.finding import Finding
from archform.lint.rule import load_rules
from archform.spec import load_paths, load_text

FIXTURES = Path(__file__).parent / "fixtures"


def _findings(code: str, path: Path | None = None, text: str | None = None) -> list[Finding]:
    rule = load_rules().get(code)
    assert rule is not None
    loaded = load_paths([path]) if path is not None else load_text(text or "", "t.yaml")
    return list(lint(loaded, rules=[rule]).findings)


ETHERNET = """\
version: 1
kind: TrainingCluster
name: demo
placement: {provider: onprem, region: lab}
compute:
  nodes: 4
  gpu: {model: H100, per_node: 8}
fabric:
  kind: ethernet
  gbps_per_node: %d
"""


def test_net001_states_the_nodes_own_bandwidth_ratio() -> None:
    # 3,200 / 100 = 32 and 3,200 / 25 = 128: the ratio follows the node, not a fixed "~20x".
    (at_100,) = _findings("NET001", text=ETHERNET % 100)
    (at_25,) = _findings("NET001", text=ETHERNET % 25)
    assert "p5.48xlarge (H100) carries 3200 Gbps" in at_100.message
    assert "32x this node's 100 Gbps" in at_100.message
    assert "128x this node's 25 Gbps" in at_25.message
    assert "20x" not in at_100.message + at_25.message


def test_net002_names_an_instance_type_when_the_cloud_fabric_is_fixed() -> None:
    (finding,) = _findings("NET002", FIXTURES / "NET002" / "fail_a3_high_fixed_fabric.yaml")
    # a3-megagpu-8g: 8 x 200 Gbps GPUDirect-TCPXO NICs for 8 H100
    # (https://cloud.google.com/compute/docs/gpus/gpu-network-bandwidth).
    assert "a3-megagpu-8g" in finding.hint
    assert "provision" not in finding.hint


def test_net002_on_prem_still_says_what_to_provision() -> None:
    (finding,) = _findings("NET002", FIXTURES / "NET002" / "fail_doc_example.yaml")
    assert "provision 800 Gbps per node" in finding.hint  # 100 Gbps x 8 GPUs


def test_inf008_never_suggests_more_tensor_parallel_than_the_instance_has() -> None:
    (finding,) = _findings("INF008", FIXTURES / "INF008" / "fail_70b_on_4_gpu_instance.yaml")
    # g5.48xlarge: 8 A10G (https://aws.amazon.com/ec2/instance-types/g5/).
    assert "use g5.48xlarge with server.tensor_parallel: 8" in finding.hint
    assert not finding.hint.startswith("set server.tensor_parallel")


def test_inf008_suggests_a_tp_dividing_the_nodes_gpus() -> None:
    (finding,) = _findings("INF008", FIXTURES / "INF008" / "fail_doc_example.yaml")
    assert "set server.tensor_parallel: 2 (of the 8 GPUs per node)" in finding.hint


def test_trn010_ddp_70b_gives_the_terabyte_figure() -> None:
    (finding,) = _findings("TRN010", FIXTURES / "TRN010" / "fail_ddp_70b_on_h100.yaml")
    # 16 bytes x 70.6e9 = 1.13e12 bytes of weights, gradients and Adam state per GPU.
    assert "1.13 TB weights, gradients and Adam state" in finding.message
    assert "85.9 GB (80 GiB) per H100" in finding.message
    assert "pytorch_fsdp" in finding.hint


def test_trn010_sharding_divides_the_state() -> None:
    # FULL_SHARD over 8 GPUs: 16 x 405.9e9 / 8 = 811.8 GB.
    (finding,) = _findings("TRN010", FIXTURES / "TRN010" / "fail_fsdp_405b_one_node.yaml")
    assert "811.8 GB weights, gradients and Adam state" in finding.message


def test_inf012_names_the_trained_maximum_and_its_source() -> None:
    (finding,) = _findings("INF012", FIXTURES / "INF012" / "fail_32k_on_llama2.yaml")
    assert "threshold: 4096" in finding.message
    assert "huggingface.co/meta-llama/Llama-2-13b-hf" in finding.message


def test_lnt001_names_the_owner_only_when_one_is_given() -> None:
    path = FIXTURES / "LNT001" / "fail_doc_example.yaml"
    (owned,) = _findings("LNT001", path)
    assert "suppression of INF001 (owner ml-platform) expired on 2020-01-31" in owned.message
    text = path.read_text("utf-8").replace("      owner: ml-platform\n", "")
    (anonymous,) = _findings("LNT001", text=text)
    assert "suppression of INF001 expired on 2020-01-31" in anonymous.message
    assert "owner" not in anonymous.message


def test_lnt003_reports_a_peer_file_loaded_after_a_blueprint() -> None:
    peer = FIXTURES / "LNT003" / "fail_doc_example.yaml"
    native = FIXTURES / "SEC003" / "pass_doc_example.yaml"
    rule = load_rules().get("LNT003")
    assert rule is not None
    loaded = load_paths([native, peer])
    assert [d.peer is None for d in loaded.documents] == [True, False]
    alone = [(f.file, f.line) for f in _findings("LNT003", peer)]
    both = [(f.file, f.line) for f in lint(loaded, rules=[rule]).findings]
    assert both == alone != []


def test_sec003_states_the_size_when_there_is_one() -> None:
    (sized,) = _findings("SEC003", FIXTURES / "SEC003" / "fail_doc_example.yaml")
    assert "storage 'ckpt' (checkpoints, 24 TiB) is not encrypted at rest" in sized.message
    bucket = """\
version: 1
kind: TrainingCluster
name: demo
placement: {provider: aws, region: us-east-1}
compute: {nodes: 2, instance_type: p5.48xlarge}
storage:
  - {name: raw, kind: object, purpose: training_data, encrypted: false}
"""
    (unsized,) = _findings("SEC003", text=bucket)
    assert "storage 'raw' (training_data) is not encrypted at rest" in unsized.message


def test_lnt002_says_whether_the_rule_exists() -> None:
    (unknown,) = _findings("LNT002", FIXTURES / "LNT002" / "fail_unknown_rule.yaml")
    assert "unused suppression: INF099 is not an archform rule" in unknown.message
    (unused,) = _findings("LNT002", FIXTURES / "LNT002" / "fail_doc_example.yaml")
    assert "reports nothing in" in unused.message
    assert "is not an archform rule" not in unused.message


def test_plt002_hint_names_the_first_training_region() -> None:
    text = (FIXTURES / "PLT002" / "fail_doc_example.yaml").read_text("utf-8")
    two = text.replace(
        "placement: {provider: aws, region: us-east-1}",
        "placement: {provider: aws, regions: [us-east-1, us-west-2]}",
        1,
    )
    assert two != text
    (finding,) = _findings("PLT002", text=two)
    assert "training 'train' in us-east-1, us-west-2" in finding.message
    assert finding.hint == "put the registry bucket in us-east-1"


def _public_percent_accepted(code: str, value: float) -> bool:
    import pydantic

    rule = load_rules().get(code)
    assert rule is not None and rule.options is not None
    try:
        rule.options(max_public_percent=value)
    except pydantic.ValidationError:
        return False
    return True


# a share of an address space, in percent: 0 to 100, a finite number
PERCENTS = [(0, True), (0.1, True), (100, True), (-0.5, False), (-1, False), (100.5, False)]
PERCENTS += [(101, False), (float("inf"), False), (float("nan"), False), (99.5, True)]


def test_sec001_max_public_percent_is_a_percentage() -> None:
    got = [(v, _public_percent_accepted("SEC001", v)) for v, _ in PERCENTS]
    assert [ok for _, ok in got] == [ok for _, ok in PERCENTS], got


def test_sec002_max_public_percent_is_a_percentage() -> None:
    got = [(v, _public_percent_accepted("SEC002", v)) for v, _ in PERCENTS]
    assert [ok for _, ok in got] == [ok for _, ok in PERCENTS], got


def test_trn002_hint_names_the_first_zone_listed() -> None:
    (finding,) = _findings("TRN002", FIXTURES / "TRN002" / "fail_doc_example.yaml")
    assert "training nodes span 2 zones (us-east-1a, us-east-1b)" in finding.message
    assert finding.hint == "place every node in one zone, e.g. zones: [us-east-1a]"
