"""The Platform's registry program, run in-process under Pulumi mocks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import support
from archform.render.generate import build_files
from archform.render.writer import write_tree
from archform.spec import load_paths
from support.iam import allows, decision, statements

pytestmark = pytest.mark.integration

PLATFORM = support.BLUEPRINTS / "platform-two-tier.yaml"
BUCKET = "arn:aws:s3:::sivaro-models"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Any:
    support.require_module("pulumi", "pulumi_aws")
    from archform.verify.pulumi_mock import run_program

    out = tmp_path_factory.mktemp("platform")
    write_tree(out, build_files(load_paths([PLATFORM])))
    return run_program(out / "sivaro" / "pulumi")


def _one(run: Any, token: str) -> dict[str, Any]:
    found = run.of_type(token)
    assert len(found) == 1, f"{token}: {len(found)} resources"
    return dict(found[0].inputs)


def test_bucket_is_in_the_registry_region_with_the_blueprint_name(run: Any) -> None:
    bucket = _one(run, "aws:s3/bucket:Bucket")
    assert bucket["bucket"] == "sivaro-models"
    assert bucket["region"] == "us-east-1"
    assert bucket["forceDestroy"] is False
    assert run.outputs["bucket"] == "sivaro-models"


def test_versioning_is_enabled(run: Any) -> None:
    versioning = _one(run, "aws:s3/bucketVersioning:BucketVersioning")
    assert versioning["versioningConfiguration"]["status"] == "Enabled"
    assert versioning["bucket"] == "registry-id"


def test_encryption_at_rest_is_on(run: Any) -> None:
    sse = _one(
        run,
        "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
    )
    default = sse["rules"][0]["applyServerSideEncryptionByDefault"]
    assert default["sseAlgorithm"] in {"AES256", "aws:kms"}


def test_every_public_access_setting_is_blocked(run: Any) -> None:
    block = _one(run, "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock")
    flags = ("blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets")
    assert {f: block[f] for f in flags} == dict.fromkeys(flags, True)
    owner = _one(run, "aws:s3/bucketOwnershipControls:BucketOwnershipControls")
    assert owner["rule"]["objectOwnership"] == "BucketOwnerEnforced"


def test_bucket_policy_denies_plain_http_and_grants_nothing(run: Any) -> None:
    policy = _one(run, "aws:s3/bucketPolicy:BucketPolicy")["policy"]
    sts = statements(policy)
    assert all(st["Effect"] == "Deny" for st in sts)
    deny = [
        st
        for st in sts
        if st.get("Condition", {}).get("Bool", {}).get("aws:SecureTransport") == "false"
    ]
    assert deny and deny[0]["Principal"] == "*"
    obj = f"{BUCKET}/sivaro-13b/v1/a.bin"
    assert decision(policy, "s3:GetObject", obj, {"aws:SecureTransport": "false"}) == "deny"
    assert decision(policy, "s3:GetObject", obj, {"aws:SecureTransport": "true"}) != "deny"


def test_release_pointers_may_only_be_written_conditionally(run: Any) -> None:
    """Issue 20 (releases as the registry's truth): the bucket policy refuses a PutObject of
    a release pointer that carries neither If-Match nor If-None-Match, so only a writer that
    read the pointer first (archform promote) can replace it. IAM ANDs the keys inside one
    Null condition: the Deny applies when both headers are absent."""
    policy = _one(run, "aws:s3/bucketPolicy:BucketPolicy")["policy"]
    (guard,) = [st for st in statements(policy) if "Null" in st.get("Condition", {})]
    assert guard["Effect"] == "Deny" and guard["Principal"] == "*"
    assert guard["Action"] == "s3:PutObject"
    assert guard["Condition"]["Null"] == {"s3:if-match": "true", "s3:if-none-match": "true"}
    only = {"Version": "2012-10-17", "Statement": [guard]}
    pointer = f"{BUCKET}/sivaro-13b/_releases/sivaro-serve.json"
    assert decision(only, "s3:PutObject", pointer, {}) == "deny"  # neither header sent
    assert decision(only, "s3:PutObject", pointer, {"s3:if-match": '"etag"'}) == "implicit-deny"
    # ...and it covers the pointers only: checkpoint uploads (multipart, no conditional
    # headers) are not affected.
    shard = f"{BUCKET}/sivaro-13b/v1/model-00001-of-00002.safetensors"
    assert decision(only, "s3:PutObject", shard) == "implicit-deny"
    assert run.outputs["release_prefix"] == "sivaro-13b/_releases/"


def test_lifecycle_expires_noncurrent_versions(run: Any) -> None:
    rules = _one(run, "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration")["rules"]
    assert rules[0]["status"] == "Enabled"
    assert 1 <= rules[0]["noncurrentVersionExpiration"]["noncurrentDays"] <= 365
    assert rules[0]["abortIncompleteMultipartUpload"]["daysAfterInitiation"] >= 1


def _policy(run: Any, name: str) -> str:
    found = [r for r in run.of_type("aws:iam/policy:Policy") if r.name == name]
    assert found, f"no IAM policy {name}"
    return str(found[0].inputs["policy"])


def _attached(run: Any, role: str) -> list[str]:
    return [
        r.inputs["policyArn"]
        for r in run.of_type("aws:iam/rolePolicyAttachment:RolePolicyAttachment")
        if r.inputs["role"] == role
    ]


def test_training_writer_can_put_the_model_prefix_only(run: Any) -> None:
    policy = _policy(run, "sivaro-train-registry-writer")
    obj = f"{BUCKET}/sivaro-13b/2026-11-30/model.safetensors"
    assert allows(policy, "s3:PutObject", obj)
    assert allows(policy, "s3:GetObject", obj)  # read back to verify
    assert not allows(policy, "s3:PutObject", f"{BUCKET}/other-model/v1/x")
    assert not allows(policy, "s3:DeleteObject", obj)
    assert not allows(policy, "s3:PutBucketPolicy", BUCKET)
    assert _attached(run, "sivaro-train-registry-writer") == [run.outputs["writer_policy_arn"]]


def test_the_writer_role_trusts_only_the_training_nodes(run: Any) -> None:
    roles = {
        r.name: json.loads(r.inputs["assumeRolePolicy"]) for r in run.of_type("aws:iam/role:Role")
    }
    writer = roles["sivaro-train-registry-writer"]["Statement"][0]
    assert writer["Condition"]["ArnLike"]["aws:PrincipalArn"].endswith(":role/sivaro-train-node-*")


def test_the_registry_creates_no_reader_the_fleet_reads_with_its_own_roles(
    tmp_path: Path, run: Any
) -> None:
    """Issue 20: the registry program made a reader role for the fleet's service account that
    no Pod Identity association ever named (the fleet program binds `model-reader` to its own
    per-region roles). It is gone; the fleet's own roles are what read the registry."""
    roles = {
        r.name: json.loads(r.inputs["assumeRolePolicy"]) for r in run.of_type("aws:iam/role:Role")
    }
    assert set(roles) == {"sivaro-train-registry-writer"}
    assert not any("pods.eks.amazonaws.com" in json.dumps(doc) for doc in roles.values())
    assert [p.name for p in run.of_type("aws:iam/policy:Policy")] == [
        "sivaro-train-registry-writer"
    ]
    assert not {k for k in run.outputs if k.startswith("reader")}

    from archform.verify.pulumi_mock import run_program

    out = tmp_path / "out"
    write_tree(out, build_files(load_paths([PLATFORM])))
    fleet = run_program(out / "sivaro-serve" / "pulumi")
    associations = {
        a.name: a for a in fleet.of_type("aws:eks/podIdentityAssociation:PodIdentityAssociation")
    }
    inline = {p.name: p.inputs["policy"] for p in fleet.of_type("aws:iam/rolePolicy:RolePolicy")}
    version = f"{BUCKET}/sivaro-13b/2026-11-01/model-00001-of-00002.safetensors"
    # Serving pods in the registry's region read it directly; every region's stage Job reads
    # it to copy (or check) the version.
    assert associations["useast1-model-reader"].inputs["serviceAccount"] == "model-reader"
    assert allows(inline["useast1-model-reader"], "s3:GetObject", version)
    for key in ("useast1", "euwest1", "apnortheast1"):
        assert associations[f"{key}-model-replicator"].inputs["namespace"] == "sivaro-serve"
        assert allows(inline[f"{key}-model-replicator"], "s3:GetObject", version), key
        assert not allows(inline[f"{key}-model-replicator"], "s3:PutObject", version), key


def test_promote_config_names_bucket_model_and_fleet_release(tmp_path: Path) -> None:
    files = {f.path: f.content for f in build_files(load_paths([PLATFORM]))}
    config = json.loads(files["sivaro/promote/promote.json"])
    assert config["registry"] == {
        "provider": "aws",
        "bucket": "sivaro-models",
        "region": "us-east-1",
    }
    assert config["model"] == "sivaro-13b"
    assert config["approval"] == "manual"
    # The served release lives in the registry beside the model; its copy sits in the
    # fleet's own generated folder.
    assert config["fleet"] == {
        "name": "sivaro-serve",
        "release_file": "../../sivaro-serve/release.json",
        "release_pointer": "s3://sivaro-models/sivaro-13b/_releases/sivaro-serve.json",
    }
    # What the fleet's vLLM loads, with the shape the blueprint declares for sivaro-13b.
    assert config["checkpoint"] == {
        "server": "vllm",
        "format": "huggingface",
        "layers": 40,
        "kv_heads": 40,
        "head_dim": 128,
    }
    assert "sivaro-serve/pulumi/__main__.py" in files
    readme = files["sivaro/promote/README.md"].decode()
    assert "archform promote promote.json" in readme and "--approve" in readme


def test_unsupported_registry_provider_is_refused_at_validate(tmp_path: Path) -> None:
    text = PLATFORM.read_text().replace(
        "registry:\n  provider: aws", "registry:\n  provider: azure"
    )
    assert "provider: azure" in text
    blueprint = tmp_path / "platform.yaml"
    blueprint.write_text(text)
    line = text.splitlines().index("  provider: azure") + 1
    for command in (["validate", str(blueprint)], ["generate", str(blueprint), "-o", "out"]):
        proc = support.run_cli(command, cwd=tmp_path)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.startswith(f"{blueprint}:{line}:13: error: registry.provider: "), proc
        assert "model registry on azure" in proc.stderr and "hint:" in proc.stderr
    assert not (tmp_path / "out").exists()


def test_platform_files_match_golden(update_goldens: bool) -> None:
    files = build_files(load_paths([PLATFORM]))
    mine = {f.path: f.content for f in files if f.path.startswith("sivaro/")}
    assert set(mine) >= {"sivaro/pulumi/__main__.py", "sivaro/promote/promote.json"}
    support.compare_tree(mine, support.GOLDENS / "platform" / "platform-two-tier", update_goldens)
    again = {f.path: f.content for f in build_files(load_paths([PLATFORM]))}
    assert {p: again[p] for p in mine} == mine


def test_gcp_registry_is_private_versioned_and_least_privilege(tmp_path: Path) -> None:
    support.require_module("pulumi", "pulumi_gcp")
    from archform.verify.pulumi_mock import run_program

    text = (
        PLATFORM.read_text()
        .replace(
            "registry:\n  provider: aws\n  region: us-east-1",
            "registry:\n  provider: gcp\n  region: us-central1",
        )
        # the fleet serves a version folder of the registry (checked at generate)
        .replace("source: s3://sivaro-models/", "source: gs://sivaro-models/")
    )
    assert "provider: gcp" in text and "gs://sivaro-models/sivaro-13b/" in text
    blueprint = tmp_path / "platform.yaml"
    blueprint.write_text(text)
    out = tmp_path / "out"
    write_tree(out, build_files(load_paths([blueprint])))
    assert not (out / "sivaro" / "promote").exists(), "promotion speaks S3 only"
    run = run_program(out / "sivaro" / "pulumi", config={"gcp:project": "proj-1"})
    bucket = _one(run, "gcp:storage/bucket:Bucket")
    assert bucket["name"] == "sivaro-models" and bucket["location"] == "US-CENTRAL1"
    assert bucket["versioning"] == {"enabled": True}
    assert bucket["uniformBucketLevelAccess"] is True
    assert bucket["publicAccessPrevention"] == "enforced"
    actions = {r["action"]["type"]: r["condition"] for r in bucket["lifecycleRules"]}
    assert actions["Delete"]["daysSinceNoncurrentTime"] >= 1
    assert actions["AbortIncompleteMultipartUpload"]["age"] >= 1

    accounts = {r.name: r.inputs for r in run.of_type("gcp:serviceaccount/account:Account")}
    # No reader account: the GKE fleet grants its Workload Identity principals directly.
    assert set(accounts) == {"writer"}
    assert accounts["writer"]["accountId"] == "sivaro-train-reg-writer"
    grants = {r.name: r.inputs for r in run.of_type("gcp:storage/bucketIAMMember:BucketIAMMember")}
    roles = {}
    for name, grant in grants.items():
        roles.setdefault(name.split("-")[0], set()).add(grant["role"])
        assert (
            'startsWith("projects/_/buckets/sivaro-models/objects/sivaro-13b/")'
            in grant["condition"]["expression"]
        ), name
    assert roles == {"writer": {"roles/storage.objectCreator", "roles/storage.objectViewer"}}
    assert not run.of_type("gcp:serviceaccount/iAMMember:IAMMember")


def test_service_account_ids_fit_gcp_limits() -> None:
    from archform.render.targets.platform.target import service_account_id

    long = "a" + "b" * 38
    ident = service_account_id(long, "reg-writer")
    assert 6 <= len(ident) <= 30 and ident.endswith("-reg-writer")
    assert ident != service_account_id(long[:-1] + "c", "reg-writer")
    assert service_account_id("train", "reg-writer") == "train-reg-writer"


def test_training_nodes_may_assume_the_writer_role(tmp_path: Path, run: Any) -> None:
    """The writer role trusts the account for roles named <training>-node-*; IAM then also
    needs an identity policy on the node role (the account as principal delegates to it)."""
    from archform.verify.pulumi_mock import run_program

    out = tmp_path / "out"
    write_tree(out, build_files(load_paths([PLATFORM])))
    training = run_program(
        out / "sivaro-train" / "pulumi", {"gpuCapacityReservationId": "cr-0123456789abcdef0"}
    )
    (node_role,) = [
        r for r in training.of_type("aws:iam/role:Role") if r.name == "sivaro-train-node"
    ]
    assert "ec2.amazonaws.com" in node_role.inputs["assumeRolePolicy"]
    policies = {p.name: p.inputs for p in training.of_type("aws:iam/rolePolicy:RolePolicy")}
    policy = policies["sivaro-train-node-registry-writer"]["policy"]
    writer_arn = "arn:aws:iam::000000000000:role/sivaro-train-registry-writer"
    assert allows(policy, "sts:AssumeRole", writer_arn)
    assert not allows(policy, "sts:AssumeRole", "arn:aws:iam::000000000000:role/admin")
    assert not allows(policy, "s3:PutObject", f"{BUCKET}/sivaro-13b/x")
    # ...and the writer role's trust names the role Pulumi creates (auto-named <name>-<suffix>).
    trust = json.loads(
        next(
            r for r in run.of_type("aws:iam/role:Role") if r.name == "sivaro-train-registry-writer"
        ).inputs["assumeRolePolicy"]
    )["Statement"][0]
    pattern = trust["Condition"]["ArnLike"]["aws:PrincipalArn"].rsplit("/", 1)[1]
    import fnmatch

    assert fnmatch.fnmatchcase("sivaro-train-node-1a2b3c4", pattern)
    # A training cluster outside any Platform gets no such permission.
    alone = tmp_path / "alone"
    write_tree(alone, build_files(load_paths([support.BLUEPRINTS / "aws-p5-efa-fsx.yaml"])))
    text = (alone / "pulumi" / "settings.py").read_text()
    assert "REGISTRY_WRITER_ROLES = []" in text
