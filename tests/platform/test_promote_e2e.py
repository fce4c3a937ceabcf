"""Promotion end to end: real CLI, real boto3, a real S3-compatible server (moto's
standalone server over HTTP), and the tree `archform generate` writes for the bundled
Platform (registry, promote.json and the fleet's program and manifests). Nothing of
archform's is mocked. After a promotion the tree is generated again and the fleet's
Pulumi program is run under mocks, its S3 invokes answered from the same server
(promote_support.s3_invokes, a stand-in for the provider): it must serve the promoted
version, and a program generated before the promotion, or in a fresh folder, must refuse
to run (no revert).
"""

from __future__ import annotations

import hashlib
import json
import shlex
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from promote_support import client, env, hf_checkpoint, moto_server, s3_invokes

import support
from archform.promote import PromoteError, load_config, promote
from archform.render.generate import generate
from archform.render.targets.fleet.view import replica_bucket
from archform.spec import InferenceFleet, UsageError, load_paths

pytestmark = [pytest.mark.integration, pytest.mark.slow]

PLATFORM = support.BLUEPRINTS / "platform-two-tier.yaml"
REGIONS = ("us-east-1", "eu-west-1", "ap-northeast-1")
INITIAL = "s3://sivaro-models/sivaro-13b/2026-11-01/"
POINTER = "sivaro-13b/_releases/sivaro-serve.json"


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    support.require_module("boto3", "moto", "kubernetes_validate")
    log = tmp_path_factory.mktemp("moto") / "moto.log"
    with moto_server(log) as url:
        yield url


@pytest.fixture
def tree(tmp_path: Path, endpoint: str) -> Path:
    """A generated Platform tree plus the fleet's manifests, and an empty registry bucket."""
    out = tmp_path / "out"
    generate(load_paths([PLATFORM]), out)
    s3 = client(endpoint)
    for page in (
        s3.get_paginator("list_object_versions").paginate(Bucket="sivaro-models")
        if _bucket_exists(s3)
        else []
    ):
        for item in page.get("Versions", []) + page.get("DeleteMarkers", []):
            s3.delete_object(Bucket="sivaro-models", Key=item["Key"], VersionId=item["VersionId"])
    if not _bucket_exists(s3):
        s3.create_bucket(Bucket="sivaro-models")
    s3.put_bucket_versioning(Bucket="sivaro-models", VersioningConfiguration={"Status": "Enabled"})
    return out


def _bucket_exists(s3: Any) -> bool:
    return any(b["Name"] == "sivaro-models" for b in s3.list_buckets().get("Buckets", []))


@pytest.fixture
def checkpoint(tmp_path: Path) -> Path:
    """A Hugging Face folder of the blueprint's model (real safetensors shards)."""
    support.require_module("safetensors")
    return hf_checkpoint(tmp_path / "ckpt" / "step-012000", shards=3)


def _config(tree: Path) -> Path:
    return tree / "sivaro" / "promote" / "promote.json"


def _objects(tree: Path, kind: str) -> dict[str, dict[str, Any]]:
    """Region -> the one object of `kind` in the fleet's generated manifests."""
    out = {}
    for region in REGIONS:
        folder = tree / "sivaro-serve" / "kubernetes" / region
        (path,) = [p for p in folder.iterdir() if f"-{kind}-" in p.name]
        out[region] = yaml.safe_load(path.read_text())
    return out


def _deployments(tree: Path) -> dict[str, dict[str, Any]]:
    return _objects(tree, "deployment")


def _manifest_bytes(tree: Path) -> dict[str, bytes]:
    return {
        p.relative_to(tree).as_posix(): p.read_bytes()
        for p in sorted((tree / "sivaro-serve").rglob("*"))
        if p.is_file()
    }


def _regenerate(tree: Path, *, force: bool = False) -> None:
    generate(load_paths([PLATFORM]), tree, force=force)


def _serves(tree: Path, version: str, checksum: str) -> None:
    """Every region's manifests serve `version`: stage Job first, then the Deployment."""
    doc = load_paths([PLATFORM]).by_name["sivaro-serve"]
    assert isinstance(doc.model, InferenceFleet)
    registry = f"s3://sivaro-models/sivaro-13b/{version}/"
    jobs = _objects(tree, "job")
    for region, dep in _deployments(tree).items():
        template = dep["spec"]["template"]
        assert template["metadata"]["annotations"]["archform.io/model-version"] == version
        assert template["metadata"]["annotations"].get("archform.io/model-checksum", "") == checksum
        fetch = template["spec"]["initContainers"][0]
        values = {e["name"]: e["value"] for e in fetch["env"]}
        wanted = (
            registry
            if region == "us-east-1"
            else f"s3://{replica_bucket(doc.model, region)}/models/sivaro-13b/{version}/"
        )
        assert values["ARCHFORM_MODEL_URI"] == wanted, region
        assert values["ARCHFORM_SOURCE_URI"] == registry
        assert values["ARCHFORM_MODEL_SHA256"] == checksum
        assert f"aws s3 sync --only-show-errors {wanted} /models/weights" in fetch["command"][2]
        job = jobs[region]["spec"]["template"]["spec"]["containers"][0]
        assert {e["name"]: e["value"] for e in job["env"]} == values
        assert version.lower() in jobs[region]["metadata"]["name"]
    import kubernetes_validate

    for obj in [*_deployments(tree).values(), *jobs.values()]:
        kubernetes_validate.validate(obj, "1.30.0", strict=True)  # raises when invalid


def _program_serves(project: Path, endpoint: str) -> dict[str, str]:
    """Run the fleet's Pulumi program under mocks, its registry reads answered by the S3
    server; region -> the version each Deployment serves."""
    support.require_module("pulumi", "pulumi_aws", "pulumi_kubernetes")
    from archform.verify.pulumi_mock import run_program

    run = run_program(project, calls=s3_invokes(endpoint))
    served = {}
    for dep in run.of_type("kubernetes:apps/v1:Deployment"):
        region = dep.name.split("-deployment-")[0]
        served[region] = dep.inputs["spec"]["template"]["metadata"]["annotations"][
            "archform.io/model-version"
        ]
        jobs = {n for n in run.depends_on(dep) if n.startswith(f"{region}-job-stage-")}
        assert len(jobs) == 1, (dep.name, jobs)
        job = run.named(jobs.pop())
        assert (
            job.inputs["spec"]["template"]["metadata"]["annotations"]["archform.io/model-version"]
            == served[region]
        )
    return served


def _store_checksum(s3: Any, prefix: str) -> tuple[str, dict[str, Any]]:
    """Recompute the set checksum from the objects themselves (not from any manifest)."""
    manifest = json.loads(
        s3.get_object(Bucket="sivaro-models", Key=prefix + "manifest.json")["Body"].read()
    )
    listing = ""
    keys = sorted(
        o["Key"] for o in s3.list_objects_v2(Bucket="sivaro-models", Prefix=prefix)["Contents"]
    )
    for key in keys:
        if key in (prefix + "manifest.json", prefix + "SHA256SUMS"):
            continue
        digest = hashlib.sha256(
            s3.get_object(Bucket="sivaro-models", Key=key)["Body"].read()
        ).hexdigest()
        listing += f"{digest}  {key[len(prefix) :]}\n"
    sums = s3.get_object(Bucket="sivaro-models", Key=prefix + "SHA256SUMS")["Body"].read()
    assert sums == listing.encode(), "SHA256SUMS must be the listing of the stored objects"
    return "sha256:" + hashlib.sha256(listing.encode()).hexdigest(), manifest


def _promote_cli(tree: Path, ckpt: Path, endpoint: str, *extra: str) -> Any:
    return support.run_cli(
        [
            "promote",
            str(_config(tree)),
            "--checkpoint",
            str(ckpt),
            "--version",
            "v12000",
            "--run-id",
            "run-42",
            *extra,
        ],
        env=env(endpoint),
        timeout=180,
    )


def test_manual_approval_uploads_and_verifies_then_waits_for_approve(
    tree: Path, checkpoint: Path, endpoint: str
) -> None:
    before = _manifest_bytes(tree)
    first = _promote_cli(tree, checkpoint, endpoint)
    assert first.returncode == 0, first.stderr
    assert _manifest_bytes(tree) == before, "manual approval must not touch the fleet"
    fetch = _deployments(tree)["us-east-1"]["spec"]["template"]["spec"]["initContainers"][0]
    assert {e["name"]: e["value"] for e in fetch["env"]}["ARCHFORM_MODEL_URI"] == INITIAL
    s3 = client(endpoint)
    recomputed, manifest = _store_checksum(s3, "sivaro-13b/v12000/")
    assert manifest["checksum"] == recomputed
    assert manifest["model"] == "sivaro-13b" and manifest["version"] == "v12000"
    assert manifest["source_run"] == "run-42"
    newest = max(int(p.stat().st_mtime) for p in checkpoint.rglob("*") if p.is_file())
    stamp = datetime.fromtimestamp(newest, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert manifest["created_at"] == stamp  # when the checkpoint was written, not the run id
    assert [f["path"] for f in manifest["files"]] == [
        "config.json",
        "generation_config.json",
        "model-00001-of-00003.safetensors",
        "model-00002-of-00003.safetensors",
        "model-00003-of-00003.safetensors",
        "model.safetensors.index.json",
        "tokenizer.json",
        "tokenizer_config.json",
    ]
    assert "no release" in json.dumps(_pointer(s3)), "manual approval must not move the pointer"

    finish = [
        line.strip()
        for line in first.stdout.splitlines()
        if line.strip().startswith("archform promote ")
    ]
    assert len(finish) == 1, first.stdout
    args = shlex.split(finish[0])
    assert args[-1] == "--approve"
    second = support.run_cli(args[1:], env=env(endpoint), timeout=180)
    assert second.returncode == 0, second.stderr
    assert "not uploading" in second.stdout

    expected = {
        "schema": "archform.release/v1",
        "model": "sivaro-13b",
        "version": "v12000",
        "source": "s3://sivaro-models/sivaro-13b/v12000/",
        "checksum": recomputed,
        "source_run": "run-42",
    }
    # The registry records the release beside the model; the fleet folder keeps a copy.
    assert _pointer(s3) == expected
    assert json.loads((tree / "sivaro-serve" / "release.json").read_text()) == expected
    assert "s3://sivaro-models/sivaro-13b/_releases/sivaro-serve.json serves v12000" in (
        second.stdout
    )
    stale = tree.parent / "stale-pulumi"
    shutil.copytree(tree / "sivaro-serve" / "pulumi", stale)
    _regenerate(tree)
    _serves(tree, "v12000", recomputed)
    assert _program_serves(tree / "sivaro-serve" / "pulumi", endpoint) == dict.fromkeys(
        REGIONS, "v12000"
    )
    # The program generated before the promotion refuses instead of rolling the fleet back
    # to the blueprint's version: the registry's release is not the one it was made for.
    shutil.rmtree(tree / "sivaro-serve" / "pulumi")
    shutil.copytree(stale, tree / "sivaro-serve" / "pulumi")
    from archform.verify.pulumi_mock import MockProgramError

    with pytest.raises(MockProgramError, match="--from-registry"):
        _program_serves(tree / "sivaro-serve" / "pulumi", endpoint)


def _pointer(s3: Any) -> dict[str, Any]:
    """The release pointer the registry holds ({"no release": ...} when there is none)."""
    try:
        return dict(json.loads(s3.get_object(Bucket="sivaro-models", Key=POINTER)["Body"].read()))
    except s3.exceptions.NoSuchKey:
        return {"no release": POINTER}


def test_a_fresh_checkout_serves_the_registry_release_or_refuses(
    tree: Path, checkpoint: Path, endpoint: str
) -> None:
    """Issue 20: after a promotion, `generate` into a fresh folder (a CI checkout) used to
    render the blueprint's old version, and `pulumi up` rolled every region back. Now that
    program refuses, and `generate --from-registry` serves the promoted version in every
    region (and keeps the copy, so a plain regenerate there serves it too)."""
    proc = _promote_cli(tree, checkpoint, endpoint, "--approve")
    assert proc.returncode == 0, proc.stderr
    recomputed, _ = _store_checksum(client(endpoint), "sivaro-13b/v12000/")

    fresh = tree.parent / "ci-checkout"
    generate(load_paths([PLATFORM]), fresh)
    assert not (fresh / "sivaro-serve" / "release.json").exists()
    _serves(fresh, "2026-11-01", "")  # the blueprint's version, as before
    from archform.verify.pulumi_mock import MockProgramError

    with pytest.raises(MockProgramError) as refused:
        _program_serves(fresh / "sivaro-serve" / "pulumi", endpoint)
    message = str(refused.value)
    assert f"s3://sivaro-models/{POINTER} serves model version 'v12000'" in message
    assert "generated for '2026-11-01'" in message and "--from-registry" in message

    pulled = tree.parent / "ci-pulled"
    cli = support.run_cli(
        ["generate", str(PLATFORM), "-o", str(pulled), "--from-registry"],
        env=env(endpoint),
        timeout=180,
    )
    assert cli.returncode == 0, cli.stderr
    assert f"sivaro-serve: serves v12000 as s3://sivaro-models/{POINTER} records" in cli.stdout
    _serves(pulled, "v12000", recomputed)
    assert _program_serves(pulled / "sivaro-serve" / "pulumi", endpoint) == dict.fromkeys(
        REGIONS, "v12000"
    )
    copy = (pulled / "sivaro-serve" / "release.json").read_bytes()
    assert json.loads(copy) == _pointer(client(endpoint))
    _regenerate(pulled)
    _serves(pulled, "v12000", recomputed)


def test_a_fleet_whose_registry_cannot_be_read_stops_before_any_resource(
    endpoint: str, tmp_path: Path
) -> None:
    """The bundled single-region fleet serves from s3://corp-models-eu, which this S3 server
    does not have: the program stops at its first step, naming the pointer and what the
    deployer needs, instead of deploying a release nobody can check."""
    support.require_module("pulumi", "pulumi_aws", "pulumi_kubernetes")
    from archform.verify.pulumi_mock import MockProgramError, run_program

    out = tmp_path / "h100"
    generate(load_paths([support.BLUEPRINTS / "inference-h100-single-region.yaml"]), out)
    with pytest.raises(MockProgramError) as stopped:
        run_program(out / "pulumi", calls=s3_invokes(endpoint))
    message = str(stopped.value)
    assert "cannot read s3://corp-models-eu/llama-3.1-70b/_releases/h100-serve.json" in message
    assert "NoSuchBucket" in message and "s3:ListBucket on s3://corp-models-eu" in message


def test_a_promotion_that_raced_another_is_refused(
    tree: Path, checkpoint: Path, endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pointer is replaced only if it is still what promote read (If-None-Match here:
    there was none); a writer in between wins and this promotion changes nothing."""
    for key, value in env(endpoint).items():
        monkeypatch.setenv(key, value)
    other = client(endpoint)
    theirs = {
        "schema": "archform.release/v1",
        "model": "sivaro-13b",
        "version": "v11000",
        "source": "s3://sivaro-models/sivaro-13b/v11000/",
        "checksum": "sha256:" + "b" * 64,
        "source_run": "run-41",
    }

    def race() -> None:
        other.put_object(
            Bucket="sivaro-models",
            Key=POINTER,
            Body=json.dumps(theirs).encode(),
            ContentType="application/json",
        )

    with pytest.raises(UsageError, match="changed while this promotion ran"):
        promote(
            load_config(_config(tree)),
            checkpoint=checkpoint,
            version="v12000",
            run_id="run-42",
            approve=True,
            after_upload=race,
        )
    assert _pointer(other) == theirs
    assert not (tree / "sivaro-serve" / "release.json").exists()
    # With the pointer read afresh, the next promotion replaces it (If-Match on its ETag).
    result = promote(
        load_config(_config(tree)),
        checkpoint=checkpoint,
        version="v12000",
        run_id="run-42",
        approve=True,
    )
    assert result.previous is not None and result.previous.version == "v11000"
    assert _pointer(other)["version"] == "v12000"


def test_automatic_approval_rolls_immediately_and_a_second_version_rolls_again(
    tree: Path, checkpoint: Path, endpoint: str
) -> None:
    config = _config(tree)
    data = json.loads(config.read_text())
    data["approval"] = "automatic"
    config.write_text(json.dumps(data))
    proc = _promote_cli(tree, checkpoint, endpoint)
    assert proc.returncode == 0, proc.stderr
    _regenerate(tree, force=True)  # force: this test edited promote.json
    config.write_text(json.dumps(data))
    first = _deployments(tree)["eu-west-1"]["spec"]["template"]
    assert first["metadata"]["annotations"]["archform.io/model-version"] == "v12000"

    (checkpoint / "generation_config.json").write_text('{"bos_token_id": 1, "step": 13000}\n')
    again = support.run_cli(
        [
            "promote",
            str(config),
            "--checkpoint",
            str(checkpoint),
            "--version",
            "v13000",
            "--run-id",
            "run-43",
        ],
        env=env(endpoint),
        timeout=180,
    )
    assert again.returncode == 0, again.stderr
    assert "serves v13000 (was v12000)" in again.stdout
    _regenerate(tree, force=True)
    recomputed, _ = _store_checksum(client(endpoint), "sivaro-13b/v13000/")
    assert recomputed != first["metadata"]["annotations"]["archform.io/model-checksum"]
    _serves(tree, "v13000", recomputed)
    assert _program_serves(tree / "sivaro-serve" / "pulumi", endpoint) == dict.fromkeys(
        REGIONS, "v13000"
    )


def test_a_published_version_is_immutable(tree: Path, checkpoint: Path, endpoint: str) -> None:
    assert _promote_cli(tree, checkpoint, endpoint).returncode == 0
    (checkpoint / "generation_config.json").write_text('{"bos_token_id": 3}\n')
    proc = _promote_cli(tree, checkpoint, endpoint, "--approve")
    assert proc.returncode == 2
    assert "already holds a different checkpoint" in proc.stderr
    assert "new --version" in proc.stderr


def test_an_object_tampered_with_after_upload_is_detected(
    tree: Path, checkpoint: Path, endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in env(endpoint).items():
        monkeypatch.setenv(key, value)
    before = _manifest_bytes(tree)
    other = client(endpoint)

    def tamper() -> None:
        other.put_object(
            Bucket="sivaro-models",
            Key="sivaro-13b/v12000/model-00002-of-00003.safetensors",
            Body=b"not the weights",
        )

    with pytest.raises(PromoteError) as caught:
        promote(
            load_config(_config(tree)),
            checkpoint=checkpoint,
            version="v12000",
            run_id="run-42",
            approve=True,
            after_upload=tamper,
        )
    assert len(caught.value.problems) == 1
    assert "model-00002-of-00003.safetensors: sha256" in caught.value.problems[0]
    assert _manifest_bytes(tree) == before, "a failed verification must not roll the fleet"


def test_missing_fleet_fails_before_upload(
    tree: Path, checkpoint: Path, endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in env(endpoint).items():
        monkeypatch.setenv(key, value)
    shutil.rmtree(tree / "sivaro-serve")
    with pytest.raises(UsageError, match="the fleet's generated folder was not found"):
        promote(
            load_config(_config(tree)),
            checkpoint=checkpoint,
            version="v12000",
            run_id="run-42",
            approve=True,
        )
    listed = client(endpoint).list_objects_v2(Bucket="sivaro-models", Prefix="sivaro-13b/")
    assert listed.get("KeyCount", 0) == 0, "nothing may be uploaded when the fleet is broken"


def test_a_tampered_manifest_is_detected_and_never_overwritten(
    tree: Path, checkpoint: Path, endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in env(endpoint).items():
        monkeypatch.setenv(key, value)
    other = client(endpoint)
    key = "sivaro-13b/v12000/manifest.json"

    def tamper() -> None:
        other.put_object(Bucket="sivaro-models", Key=key, Body=b'{"schema": "nope"}')

    with pytest.raises(PromoteError) as caught:
        promote(
            load_config(_config(tree)),
            checkpoint=checkpoint,
            version="v12000",
            run_id="run-42",
            approve=True,
            after_upload=tamper,
        )
    assert any(
        "manifest.json" in p and "not a valid manifest" in p for p in caught.value.problems
    ), caught.value.problems
    with pytest.raises(UsageError, match="refusing to publish over it"):
        promote(
            load_config(_config(tree)),
            checkpoint=checkpoint,
            version="v12000",
            run_id="run-42",
            approve=True,
        )
    assert other.get_object(Bucket="sivaro-models", Key=key)["Body"].read() == b'{"schema": "nope"}'
