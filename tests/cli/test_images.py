"""`archform images`, which the schema's `compute.image` description names, lists the table."""

from __future__ import annotations

import json

from archform.spec.images import load_images
from archform.spec.schema import blueprint_schema
from support import run_cli


def test_images_lists_every_image_with_defaults_in_order() -> None:
    result = run_cli(["images"])
    assert result.returncode == 0, result.stderr
    table = load_images()
    for image in table.images.values():
        assert f"{image.id}: {image.title}" in result.stdout
    assert "aws (default #1)" in result.stdout
    assert "not selectable: " in result.stdout  # slurm-gcp images are listed for reference


def test_images_json_filters_by_provider() -> None:
    result = run_cli(["images", "--provider", "azure", "--format", "json"])
    assert result.returncode == 0, result.stderr
    rows = {row["id"]: row for row in json.loads(result.stdout)}
    assert rows["azure-hpc-ubuntu-22.04"]["default_rank"] == {"azure": 1}
    assert all("azure" in row["providers"] for row in rows.values())
    assert "aws-dlami-base-oss-ubuntu-22.04" not in rows


def test_images_unknown_provider_is_a_usage_error() -> None:
    result = run_cli(["images", "--provider", "gpc"])
    assert result.returncode == 2 and "choose one of" in result.stderr


def test_schema_names_the_images_command_that_exists() -> None:
    assert "`archform images`" in json.dumps(blueprint_schema())
    assert run_cli(["images", "--help"]).returncode == 0
