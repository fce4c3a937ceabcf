"""Issue 24: `promote --created-at` is an ISO 8601 time with a timezone; the default is a time.

It accepted any text, and without it the run id was recorded as the timestamp.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from archform.cli._app import build
from archform.promote.manifest import build_manifest
from archform.spec import UsageError


def _checkpoint(tmp_path: Path) -> Path:
    folder = tmp_path / "ckpt"
    folder.mkdir()
    for name, when in (("config.json", 1_700_000_000), ("model.safetensors", 1_767_225_600)):
        (folder / name).write_text("{}\n")
        os.utime(folder / name, (when, when))
    return folder


def test_the_default_is_the_checkpoint_time_not_the_run_id(tmp_path: Path) -> None:
    manifest = build_manifest(_checkpoint(tmp_path), model="m", version="v1", run_id="run-42")
    assert manifest.created_at == "2026-01-01T00:00:00Z"  # 1767225600 s after the epoch


@pytest.mark.parametrize(
    "value", ["2026-03-01T12:00:00Z", "2026-03-01T12:00:00.5+05:30", "2026-03-01T12:00:00-08:00"]
)
def test_a_timestamp_with_a_timezone_is_recorded(tmp_path: Path, value: str) -> None:
    manifest = build_manifest(
        _checkpoint(tmp_path), model="m", version="v1", run_id="r", created_at=value
    )
    assert manifest.created_at == value


BAD = [
    "run-42",
    "yesterday",
    "2026-03-01",
    "2026-03-01T12:00:00",
    "2026-02-30T12:00:00Z",
    "2026-03-01T12:00:00Z\n",
    "",
]


@pytest.mark.parametrize("value", BAD)
def test_anything_else_is_refused(tmp_path: Path, value: str) -> None:
    with pytest.raises(UsageError):
        build_manifest(_checkpoint(tmp_path), model="m", version="v1", run_id="r", created_at=value)


def test_the_cli_refuses_it_in_one_line_before_reading_anything(tmp_path: Path) -> None:
    config = tmp_path / "promote.json"
    config.write_text(json.dumps({"not": "read"}))
    result = CliRunner().invoke(
        build(["promote"]),
        [
            "promote",
            str(config),
            "--checkpoint",
            str(tmp_path),
            "--version",
            "v1",
            "--run-id",
            "r",
            "--created-at",
            "yesterday",
        ],
    )
    assert result.exit_code == 2, result.output
    assert result.output.splitlines() == [
        "error: --created-at 'yesterday' is not a timestamp (hint: an ISO 8601 time with a "
        "timezone, e.g. --created-at 2026-03-01T12:00:00Z)"
    ]
