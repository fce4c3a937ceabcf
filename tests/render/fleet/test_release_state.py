"""The served release (release.json) as generate's input: honoured, checked, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

import support
from archform.spec.release import Release

PLATFORM = support.BLUEPRINTS / "platform-two-tier.yaml"
FLEET = support.BLUEPRINTS / "inference-h100-single-region.yaml"


def _deployment(out: Path) -> dict:
    (path,) = out.glob("kubernetes/*/*-deployment-*.yaml")
    return dict(yaml.safe_load(path.read_text()))


def test_generate_serves_the_recorded_release_and_back(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert support.run_cli(["generate", str(FLEET), "-o", str(out)]).returncode == 0
    env = {
        e["name"]: e["value"]
        for e in _deployment(out)["spec"]["template"]["spec"]["initContainers"][0]["env"]
    }
    assert env["ARCHFORM_MODEL_VERSION"] == "2026-05"  # the blueprint's source folder
    release = Release(
        model="llama-3.1-70b-instruct",
        version="2026-06",
        source="s3://corp-models-eu/llama-3.1-70b/2026-06/",
        checksum="sha256:" + "a" * 64,
    )
    (out / "release.json").write_bytes(release.to_json())
    assert support.run_cli(["generate", str(FLEET), "-o", str(out)]).returncode == 0
    dep = _deployment(out)
    env = {
        e["name"]: e["value"] for e in dep["spec"]["template"]["spec"]["initContainers"][0]["env"]
    }
    assert env["ARCHFORM_MODEL_VERSION"] == "2026-06"
    assert env["ARCHFORM_MODEL_URI"] == "s3://corp-models-eu/llama-3.1-70b/2026-06/"
    assert env["ARCHFORM_MODEL_SHA256"] == release.checksum
    assert list(out.glob("kubernetes/*/*-job-stage-2026-06-*.yaml"))
    assert not list(out.glob("kubernetes/*/*-job-stage-2026-05-*.yaml"))
    (out / "release.json").unlink()
    assert support.run_cli(["generate", str(FLEET), "-o", str(out)]).returncode == 0
    assert list(out.glob("kubernetes/*/*-job-stage-2026-05-*.yaml"))


def test_a_broken_or_foreign_release_is_a_one_line_error(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert support.run_cli(["generate", str(FLEET), "-o", str(out)]).returncode == 0
    cases = {
        "{not json": "not a valid release file",
        json.dumps(
            {
                "schema": "archform.release/v1",
                "model": "llama-3.1-70b-instruct",
                "version": "v2",
                "source": "s3://corp-models-eu/llama-3.1-70b/v3/",
            }
        ): "is not the folder of version 'v2'",
        json.dumps(
            {
                "schema": "archform.release/v1",
                "model": "other-model",
                "version": "v2",
                "source": "s3://corp-models-eu/llama-3.1-70b/v2/",
            }
        ): "serves model 'other-model'",
        json.dumps(
            {
                "schema": "archform.release/v1",
                "model": "llama-3.1-70b-instruct",
                "version": "v2",
                "source": "s3://elsewhere/llama-3.1-70b/v2/",
            }
        ): "outside model.source's registry folder",
    }
    for text, message in cases.items():
        (out / "release.json").write_text(text)
        proc = support.run_cli(["generate", str(FLEET), "-o", str(out)])
        assert proc.returncode == 2, proc.stderr
        assert message in proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1
        assert "Traceback" not in proc.stderr


def test_platform_fleet_must_serve_a_registry_version(tmp_path: Path) -> None:
    text = PLATFORM.read_text().replace(
        "source: s3://sivaro-models/sivaro-13b/2026-11-01/",
        "source: s3://other-bucket/sivaro-13b/2026-11-01/",
    )
    blueprint = tmp_path / "p.yaml"
    blueprint.write_text(text)
    proc = support.run_cli(["generate", str(blueprint), "-o", str(tmp_path / "out")])
    assert proc.returncode == 2
    assert "not a version folder of the registry s3://sivaro-models/sivaro-13b/" in proc.stderr
