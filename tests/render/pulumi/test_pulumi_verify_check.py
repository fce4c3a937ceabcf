"""The `pulumi` verify check: real SDK classes under mocks, in a subprocess per project."""

from __future__ import annotations

import json
from pathlib import Path

import pulumi_cases as pc
import pytest

from archform.verify.checks.pulumi import CHECK
from support import require_module, run_cli, verify_skips

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def _tree(tmp_path: Path, stem: str = "aws-p5-efa-fsx") -> Path:
    pc.write_project(pc.case(stem, dict(pc.CLOUD_CLUSTERS)[stem]), tmp_path / "out")
    return tmp_path / "out"


def test_generated_aws_tree_passes(tmp_path: Path) -> None:
    require_module("pulumi", "pulumi_aws")
    root = _tree(tmp_path)
    assert CHECK.applies(root)
    (result,) = CHECK.run(root)
    assert result.status == "passed", result.detail
    assert "mock config: gpuCapacityReservationId" in result.detail


def test_wrong_argument_name_fails_with_the_sdk_message(tmp_path: Path) -> None:
    require_module("pulumi", "pulumi_aws")
    root = _tree(tmp_path)
    storage = root / "pulumi" / "storage.py"
    text = storage.read_text("utf-8")
    assert 'data_compression_type="LZ4"' in text
    storage.write_text(text.replace('data_compression_type="LZ4"', 'data_compresion_type="LZ4"'))
    (result,) = CHECK.run(root)
    assert result.status == "failed"
    assert "unexpected keyword argument 'data_compresion_type'" in result.detail


def test_wrong_container_type_fails(tmp_path: Path) -> None:
    require_module("pulumi", "pulumi_aws")
    root = _tree(tmp_path)
    storage = root / "pulumi" / "storage.py"
    text = storage.read_text("utf-8")
    storage.write_text(text.replace("subnet_ids=net.subnet_id,", "subnet_ids=[net.subnet_id],"))
    (result,) = CHECK.run(root)
    assert result.status == "failed"
    assert "subnet_ids" in result.detail


def test_missing_provider_sdk_is_skipped_with_the_extra(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    req = root / "pulumi" / "requirements.txt"
    req.write_text(req.read_text("utf-8") + "pulumi-notacloud==1.0\n")
    (result,) = CHECK.run(root)
    assert result.status == "skipped"
    from archform.install import extra_hint

    assert "pulumi_notacloud" in result.detail and extra_hint("all") in result.detail


def test_verify_cli_reports_the_check(tmp_path: Path) -> None:
    require_module("pulumi", "pulumi_azure_native")
    root = _tree(tmp_path, "azure-nd-h100-v5")
    # about the pulumi check: another check may skip locally for a missing tool (verify_skips)
    result = run_cli(["verify", str(root), "--format", "json", *verify_skips()], timeout=300)
    assert result.returncode == 0, result.stderr
    rows = [r for r in json.loads(result.stdout) if r["check"] == "pulumi"]
    assert [(r["artifact"], r["status"]) for r in rows] == [("pulumi", "passed")]
