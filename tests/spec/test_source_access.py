"""validate refuses an Azure fleet that could not read its registry, at the line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from support import BLUEPRINTS

ID = (
    "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/ml-platform-ops"
    "/providers/Microsoft.Storage/storageAccounts/{}"
)


def _validate(tmp_path: Path, text: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "fleet.yaml"
    path.write_text(text, "utf-8")
    return subprocess.run(
        [sys.executable, "-m", "archform", "validate", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


BUNDLED = (BLUEPRINTS / "inference-3region-a10.yaml").read_text("utf-8")
GIVEN = f"  source_account_id: {ID.format('corpmodels')}\n"


def test_the_bundled_azure_fleet_names_its_registry_account() -> None:
    assert GIVEN in BUNDLED


@pytest.mark.parametrize(
    ("text", "needle", "message"),
    [
        (BUNDLED.replace(GIVEN, ""), "  source: https://", "no model.source_account_id"),
        (
            BUNDLED.replace(GIVEN, f"  source_account_id: {ID.format('othermodels')}\n"),
            "source_account_id:",
            "names account othermodels, but model.source is in corpmodels",
        ),
        (
            BUNDLED.replace(GIVEN, "  source_account_id: corpmodels\n"),
            "source_account_id:",
            "is not a storage account resource id",
        ),
        (
            BUNDLED.replace(GIVEN, "").replace(
                "https://corpmodels.blob.core.windows.net/", "az://corpmodels/"
            ),
            "  source: az://",
            "the fleet cannot read corpmodels",
        ),
    ],
    ids=["missing", "other-account", "not-an-id", "az-scheme-missing"],
)
def test_validate_refuses_at_the_line(tmp_path: Path, text: str, needle: str, message: str) -> None:
    result = _validate(tmp_path, text)
    assert result.returncode == 2, result.stdout + result.stderr
    (line,) = [ln for ln in result.stderr.splitlines() if "error:" in ln]
    assert f"fleet.yaml:{_line_of(text, needle)}:" in line and message in line, line
    assert "Traceback" not in result.stderr


def test_a_non_azure_source_takes_no_account_id(tmp_path: Path) -> None:
    text = (BLUEPRINTS / "inference-h100-single-region.yaml").read_text("utf-8")
    marker = "  source: "
    at = text.index(marker)
    end = text.index("\n", at) + 1
    text = text[:end] + GIVEN + text[end:]
    result = _validate(tmp_path, text)
    assert result.returncode == 2 and "applies to an Azure blob `source` only" in result.stderr
