from __future__ import annotations

import textwrap

import pytest

from archform.spec import (
    InferenceFleet,
    Platform,
    SpecError,
    TrainingCluster,
    load_paths,
    load_text,
)
from support import BLUEPRINTS, bundled_blueprints

MINIMAL = textwrap.dedent(
    """\
    version: 1
    kind: TrainingCluster
    name: t
    placement: {provider: aws, region: us-east-1, zones: [us-east-1a]}
    compute:
      nodes: 2
      instance_type: p5.48xlarge
    """
)


def load_one(text: str) -> TrainingCluster | InferenceFleet | Platform:
    return load_text(text, "bp.yaml").documents[0].model


def problems(text: str) -> list[tuple[int, int, str, str]]:
    with pytest.raises(SpecError) as info:
        load_text(text, "bp.yaml")
    return [(p.line, p.column, p.message, p.hint) for p in info.value.problems]


def test_every_bundled_blueprint_loads_together() -> None:
    loaded = load_paths([BLUEPRINTS])
    assert len(loaded.documents) >= 10
    kinds = {d.kind for d in loaded.documents}
    assert kinds == {"TrainingCluster", "InferenceFleet", "Platform"}
    assert len(bundled_blueprints()) >= 8


def test_catalog_fills_gpu_cpu_memory_and_fabric() -> None:
    model = load_one(MINIMAL)
    assert isinstance(model, TrainingCluster)
    assert model.compute.gpu is not None
    assert (model.compute.gpu.model, model.compute.gpu.per_node) == ("H100", 8)
    assert model.compute.cpu is not None and model.compute.memory_gib == 2048
    assert (model.fabric.kind, model.fabric.gbps_per_node) == ("efa", 3200)


def test_declared_fabric_that_differs_is_kept_for_the_linter() -> None:
    model = load_one(MINIMAL + "fabric: {kind: ethernet, gbps_per_node: 100}\n")
    assert isinstance(model, TrainingCluster)
    assert model.fabric.kind == "ethernet" and model.fabric.gbps_per_node == 100


def test_gpu_count_disagreeing_with_instance_is_located() -> None:
    text = MINIMAL + "  gpu: {model: H100, per_node: 4}\n"
    found = problems(text)
    assert found[0][:2] == (8, 32)
    assert "8 GPUs per node" in found[0][2] and "says 4" in found[0][2]


def test_unknown_gpu_instance_type_gets_did_you_mean() -> None:
    found = problems(MINIMAL.replace("p5.48xlarge", "p5.48xlarg"))
    assert found[0][:2] == (7, 18)
    assert "'p5.48xlarge'" in found[0][3]


def test_unknown_gpu_instance_type_accepted_with_explicit_gpu() -> None:
    text = MINIMAL.replace("p5.48xlarge", "p9.96xlarge") + (
        "  gpu: {model: H100, per_node: 8}\n"
        "  cpu: {sockets: 2, cores_per_socket: 48, threads_per_core: 2}\n"
        "  memory_gib: 2048\n"
        "fabric: {kind: efa, gbps_per_node: 3200}\n"
    )
    model = load_one(text)
    assert isinstance(model, TrainingCluster) and model.compute.instance_type == "p9.96xlarge"


def test_cpu_types_are_accepted_as_written() -> None:
    fleet = textwrap.dedent(
        """\
        version: 1
        kind: InferenceFleet
        name: f
        placement: {provider: aws, regions: [us-east-1]}
        model: {name: m, params: 8B, source: "s3://b/m/"}
        server: {image: "vllm/vllm-openai:v0.6.3"}
        gpu_pool: {instance_type: g5.12xlarge, min_nodes_per_region: 2, max_nodes_per_region: 4}
        system_pool: {instance_type: m5.large}
        """
    )
    model = load_one(fleet)
    assert isinstance(model, InferenceFleet)
    assert model.model.params == 8e9
    assert model.system_pool is not None and model.system_pool.instance_type == "m5.large"
    assert model.gpu_pool.gpu is not None and model.gpu_pool.gpu.model == "A10G"


def test_unknown_key_points_at_key_with_hint() -> None:
    found = problems(MINIMAL.replace("  nodes: 2", "  nodez: 2"))
    first = found[0]
    assert first[:2] == (6, 3)
    assert "unknown key 'nodez'" in first[2]
    assert "did you mean 'nodes'" in first[3]


def test_bad_enum_points_at_value_with_hint() -> None:
    found = problems(MINIMAL.replace("provider: aws", "provider: awz"))
    assert found[0][:2] == (4, 23)
    assert "'aws'" in found[0][3]


def test_unquoted_version_number_gets_quote_hint() -> None:
    found = problems(MINIMAL + "scheduler: {version: 23.10}\n")
    assert found[0][:2] == (8, 22)
    assert "quote" in found[0][3]


def test_platform_references_resolve_across_files(tmp_path) -> None:
    platform = tmp_path / "platform.yaml"
    platform.write_text(
        "version: 1\nkind: Platform\nname: p\ntraining: llm-pretrain\ninference: h100-serve\n"
        "registry: {provider: aws, region: eu-west-1, bucket: corp-models-eu}\n"
    )
    with pytest.raises(SpecError) as info:
        load_paths([platform])
    assert info.value.problems[0].line == 4
    assert "no document named 'llm-pretrain'" in info.value.problems[0].message
    # The fleet serves a version folder of the Platform's registry (<bucket>/<model name>/).
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(
        (BLUEPRINTS / "inference-h100-single-region.yaml")
        .read_text()
        .replace(
            "s3://corp-models-eu/llama-3.1-70b/", "s3://corp-models-eu/llama-3.1-70b-instruct/"
        )
    )
    loaded = load_paths([platform, BLUEPRINTS / "onprem-h100-ib-lustre.yaml", fleet])
    assert [d.kind for d in loaded.documents][-1] == "InferenceFleet"


def test_platform_fleet_must_serve_a_version_of_the_registry(tmp_path) -> None:
    """A Platform whose fleet reads weights outside its registry cannot close the loop."""
    platform = tmp_path / "platform.yaml"
    platform.write_text(
        "version: 1\nkind: Platform\nname: p\ntraining: llm-pretrain\ninference: h100-serve\n"
        "registry: {provider: aws, region: eu-west-1, bucket: other-models}\n"
    )
    fleet = BLUEPRINTS / "inference-h100-single-region.yaml"
    with pytest.raises(SpecError) as info:
        load_paths([platform, BLUEPRINTS / "onprem-h100-ib-lustre.yaml", fleet])
    (problem,) = info.value.problems
    assert problem.file == str(fleet)
    source_line = next(
        n for n, line in enumerate(fleet.read_text().splitlines(), 1) if "source: s3://" in line
    )
    assert problem.line == source_line
    assert "not a version folder of the registry s3://other-models/" in problem.message


def test_platform_inference_may_name_a_training_cluster() -> None:
    text = MINIMAL + (
        "---\nversion: 1\nkind: Platform\nname: p\ntraining: t\ninference: t\n"
        "registry: {provider: aws, region: us-east-1, bucket: models}\n"
    )
    loaded = load_text(text, "bp.yaml")
    assert loaded.documents[1].kind == "Platform"


def test_errors_are_reported_for_every_document(tmp_path) -> None:
    text = (
        MINIMAL.replace("nodes: 2", "nodes: two")
        + "---\n"
        + MINIMAL.replace("name: t", "name: u").replace("region: us-east-1,", "region: US,")
    )
    found = problems(text)
    assert [f[0] for f in found] == [6, 12]


def test_duplicate_document_names_are_rejected() -> None:
    found = problems(MINIMAL + "---\n" + MINIMAL)
    assert found[0][0] == 11 and "already used" in found[0][2]


def test_aliases_and_merge_keys_work_within_budget() -> None:
    text = textwrap.dedent(
        """\
        version: 1
        kind: TrainingCluster
        name: t
        placement: &p {provider: aws, region: us-east-1, zones: [us-east-1a]}
        compute:
          nodes: 2
          instance_type: p5.48xlarge
        """
    )
    assert isinstance(load_one(text), TrainingCluster)


def test_resolved_yaml_roundtrips_to_the_same_model() -> None:
    from archform.spec.resolve import resolved_yaml

    loaded = load_paths([BLUEPRINTS / "aws-p5-efa-fsx.yaml"])
    text = resolved_yaml(loaded)
    again = load_text(text, "resolved.yaml")
    assert again.documents[0].model == loaded.documents[0].model


@pytest.mark.parametrize(
    ("written", "kind"),
    [
        # Each provider package's products (Amazon FSx for Lustre, Azure Files over NFS 4.1,
        # Google Cloud Storage) and a product of no one provider (DDN EXAScaler: Lustre).
        ("fsx", "lustre"),
        ("azure_files", "nfs"),
        ("gcs", "object"),
        ("exascaler", "lustre"),
    ],
)
def test_a_product_name_for_a_storage_kind_names_the_kind(written: str, kind: str) -> None:
    text = MINIMAL + f"storage:\n  - {{name: s, kind: {written}, mount: /s}}\n"
    hints = [hint for _, _, message, hint in problems(text) if repr(written) in message]
    assert hints == [f"{written} is kind {kind!r} here"]
