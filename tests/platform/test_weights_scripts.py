"""The generated weights pipeline run for real: the stage Job's and the init container's
scripts from the bundled Platform's manifests, executed by /bin/sh with the real AWS CLI
(awscli on PyPI) against a real S3-compatible server (moto's standalone server), on a
version that `archform promote` published.

The scripts write to /stage and /models in a pod; here those two absolute paths are mapped
to a temporary folder (the only change made to the generated text).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from promote_support import CREDENTIALS, client, hf_checkpoint, moto_server

import support
from archform.promote import load_config, promote
from archform.render.generate import build_files
from archform.render.targets.fleet.view import replica_bucket
from archform.render.writer import write_tree
from archform.spec import InferenceFleet, load_paths

pytestmark = [pytest.mark.integration, pytest.mark.slow]

PLATFORM = support.BLUEPRINTS / "platform-two-tier.yaml"
REGISTRY = "sivaro-models"
REPLICA_REGION = "eu-west-1"


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    support.require_module("boto3", "moto")
    support.require_tool("aws")  # the awscli dev extra; a failure in CI (ARCHFORM_REQUIRE_TOOLS)
    with moto_server(tmp_path_factory.mktemp("moto") / "moto.log") as url:
        yield url


def _path() -> str:
    return os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])


def _fleet() -> InferenceFleet:
    doc = load_paths([PLATFORM]).by_name["sivaro-serve"]
    assert isinstance(doc.model, InferenceFleet)
    return doc.model


@pytest.fixture
def published(tmp_path: Path, endpoint: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """A generated Platform whose registry holds promoted version v7, served by the fleet."""
    for key, value in {**CREDENTIALS, "AWS_ENDPOINT_URL": endpoint}.items():
        monkeypatch.setenv(key, value)
    s3 = client(endpoint)
    replica = replica_bucket(_fleet(), REPLICA_REGION)
    for bucket, region in ((REGISTRY, "us-east-1"), (replica, REPLICA_REGION)):
        if any(b["Name"] == bucket for b in s3.list_buckets().get("Buckets", [])):
            for obj in s3.list_objects_v2(Bucket=bucket).get("Contents", []):
                s3.delete_object(Bucket=bucket, Key=obj["Key"])
        elif region == "us-east-1":
            s3.create_bucket(Bucket=bucket)
        else:
            s3.create_bucket(
                Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": region}
            )
    support.require_module("safetensors")
    ckpt = hf_checkpoint(tmp_path / "ckpt", shards=2)
    out = tmp_path / "out"
    write_tree(out, build_files(load_paths([PLATFORM])))
    config = load_config(out / "sivaro" / "promote" / "promote.json")
    result = promote(config, checkpoint=ckpt, version="v7", run_id="run-7", approve=True)
    write_tree(out, build_files(load_paths([PLATFORM]), releases=_releases(out)))
    return {"out": out, "checksum": result.manifest.checksum, "replica": replica, "ckpt": ckpt}


def _releases(out: Path) -> dict[str, Any]:
    from archform.render.generate import read_releases

    return read_releases(out, load_paths([PLATFORM]))


def _object(folder: Path, kind: str) -> dict[str, Any]:
    (path,) = [p for p in folder.iterdir() if f"-{kind}-" in p.name]
    return dict(yaml.safe_load(path.read_text()))


def _run(container: dict[str, Any], root: Path, endpoint: str, **env: str) -> Any:
    script = container["command"][2]
    # absolute paths only (not ".../models/" inside an s3:// URI)
    script = re.sub(r"(?<![\w:/.-])/(stage|models)(?=[/\s]|$)", str(root) + r"/\1", script)
    (root / "stage").mkdir(parents=True, exist_ok=True)
    (root / "models").mkdir(parents=True, exist_ok=True)
    values = {e["name"]: e["value"] for e in container["env"]}
    values.update(env)
    full = {
        **CREDENTIALS,
        **values,
        "AWS_ENDPOINT_URL": endpoint,
        "PATH": _path(),
        "HOME": str(root),
    }
    return subprocess.run(
        ["/bin/sh", "-ec", script], env=full, capture_output=True, text=True, timeout=120
    )


def _containers(out: Path, region: str) -> tuple[dict[str, Any], dict[str, Any]]:
    folder = out / "sivaro-serve" / "kubernetes" / region
    job = _object(folder, "job")["spec"]["template"]["spec"]["containers"][0]
    fetch = _object(folder, "deployment")["spec"]["template"]["spec"]["initContainers"][0]
    return job, fetch


def test_stage_copies_the_promoted_version_and_pods_verify_it(
    published: dict[str, Any], endpoint: str, tmp_path: Path
) -> None:
    job, fetch = _containers(published["out"], REPLICA_REGION)
    env = {e["name"]: e["value"] for e in fetch["env"]}
    assert env["ARCHFORM_MODEL_SHA256"] == published["checksum"]
    assert env["ARCHFORM_MODEL_URI"].startswith(f"s3://{published['replica']}/models/")
    assert env["ARCHFORM_MODEL_URI"].endswith("/v7/")

    staged = _run(job, tmp_path / "job", endpoint)
    assert staged.returncode == 0, staged.stderr
    keys = sorted(
        o["Key"] for o in client(endpoint).list_objects_v2(Bucket=published["replica"])["Contents"]
    )
    assert keys == [
        f"models/sivaro-13b/v7/{name}"
        for name in (
            "SHA256SUMS",
            "config.json",
            "generation_config.json",
            "manifest.json",
            "model-00001-of-00002.safetensors",
            "model-00002-of-00002.safetensors",
            "model.safetensors.index.json",
            "tokenizer.json",
            "tokenizer_config.json",
        )
    ]
    pod = _run(fetch, tmp_path / "pod", endpoint)
    assert pod.returncode == 0, pod.stderr
    assert f"verified v7 ({published['checksum']})" in pod.stdout
    weights = tmp_path / "pod" / "models" / "weights"
    assert (weights / "model-00002-of-00002.safetensors").read_bytes() == (
        published["ckpt"] / "model-00002-of-00002.safetensors"
    ).read_bytes()

    # A replica object changed after staging: the pod refuses to start the server.
    client(endpoint).put_object(
        Bucket=published["replica"],
        Key="models/sivaro-13b/v7/model-00002-of-00002.safetensors",
        Body=b"corrupted",
    )
    tampered = _run(fetch, tmp_path / "pod2", endpoint)
    assert tampered.returncode != 0
    assert "model-00002-of-00002.safetensors: FAILED" in tampered.stderr


def test_stage_and_pods_refuse_a_version_other_than_the_release(
    published: dict[str, Any], endpoint: str, tmp_path: Path
) -> None:
    job, fetch = _containers(published["out"], REPLICA_REGION)
    other = "sha256:" + "0" * 64
    staged = _run(job, tmp_path / "job", endpoint, ARCHFORM_MODEL_SHA256=other)
    assert staged.returncode != 0
    assert f"release is {other}" in staged.stderr
    listed = client(endpoint).list_objects_v2(Bucket=published["replica"])
    assert listed.get("KeyCount", 0) == 0, "nothing may be copied for a mismatching release"
    assert _run(job, tmp_path / "job2", endpoint).returncode == 0
    pod = _run(fetch, tmp_path / "pod", endpoint, ARCHFORM_MODEL_SHA256=other)
    assert pod.returncode != 0 and f"release is {other}" in pod.stderr


def test_registry_region_checks_in_place_and_rejects_an_unpromoted_folder(
    published: dict[str, Any], endpoint: str, tmp_path: Path
) -> None:
    job, fetch = _containers(published["out"], "us-east-1")
    assert _run(job, tmp_path / "job", endpoint).returncode == 0
    pod = _run(fetch, tmp_path / "pod", endpoint)
    assert pod.returncode == 0, pod.stderr
    # Without SHA256SUMS (weights copied by hand, not promoted) nothing starts.
    client(endpoint).delete_object(Bucket=REGISTRY, Key="sivaro-13b/v7/SHA256SUMS")
    pod = _run(fetch, tmp_path / "pod2", endpoint)
    assert pod.returncode != 0 and "no SHA256SUMS" in pod.stderr
    assert _run(job, tmp_path / "job2", endpoint).returncode != 0
