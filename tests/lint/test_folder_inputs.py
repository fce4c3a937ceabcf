"""Issue 13, item 5: linting a folder reads only what is inside it, never echoes a stray
file's content, and says so (exit 2) when nothing would be checked."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from support import BLUEPRINTS, run_cli

SECRET = "AKIAIOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    shutil.copy(BLUEPRINTS / "platform-two-tier.yaml", repo / "platform.yaml")
    return repo


@pytest.mark.parametrize("command", ["lint", "validate"])
def test_a_symlinked_yaml_pointing_outside_is_named_not_read(
    tmp_path: Path, folder: Path, command: str
) -> None:
    secret = tmp_path / "credentials"
    secret.write_text(SECRET + "\n")
    (folder / "zz-creds.yaml").symlink_to(secret)
    result = run_cli([command, str(folder)])
    assert result.returncode == 0, result.stderr
    assert f"note: {folder / 'zz-creds.yaml'}: symlink to a file outside" in result.stderr
    for fragment in (SECRET[:4], SECRET[:20], "wJalr"):
        assert fragment not in result.stdout + result.stderr


def test_a_symlinked_folder_is_not_followed(tmp_path: Path, folder: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "broken.yaml").write_text("key: [unclosed\n")
    (folder / "vendor").symlink_to(outside)
    result = run_cli(["lint", str(folder)])
    assert result.returncode == 0, result.stderr
    assert f"note: {folder / 'vendor'}: symlinked folder not followed" in result.stderr


def test_a_symlink_inside_the_folder_is_read_once(folder: Path) -> None:
    (folder / "sub").mkdir()
    (folder / "platform.yaml").rename(folder / "sub" / "real.yaml")
    (folder / "link.yaml").symlink_to(Path("sub") / "real.yaml")
    result = run_cli(["validate", str(folder)])
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("ok: ") == 3  # the Platform file's three documents, once
    assert "link.yaml" not in result.stdout + result.stderr


def test_a_text_file_given_as_a_blueprint_is_not_echoed(tmp_path: Path) -> None:
    stray = tmp_path / "token.yaml"
    stray.write_text(SECRET + "\n")
    result = run_cli(["validate", str(stray)])
    assert result.returncode == 2
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"{stray}:1:1: error: a blueprint document must be a mapping")
    assert "plain text (" in line
    assert SECRET[:4] not in line


@pytest.mark.parametrize("command", ["lint", "validate", "diagram", "estimate"])
def test_an_empty_folder_is_a_usage_error(tmp_path: Path, command: str) -> None:
    empty = tmp_path / "blueprints"
    empty.mkdir()
    (empty / "README.md").write_text("no blueprints here\n")
    result = run_cli([command, str(empty)])
    assert result.returncode == 2, result.stdout + result.stderr
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"error: {empty}: no blueprint files (*.yaml, *.yml)")
    assert "nothing was checked" in line


@pytest.mark.parametrize(
    "args",
    [["--select", ""], ["--select", ","], ["--select", " "], ["--ignore", "ALL"]],
)
def test_selecting_no_rule_is_a_usage_error(args: list[str]) -> None:
    result = run_cli(["lint", str(BLUEPRINTS / "onprem-h100-ib-lustre.yaml"), *args])
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert "nothing would be checked" in line
