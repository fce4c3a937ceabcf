"""`archform lint` in a repository: non-blueprint YAML skipped, exclude settings, errors at line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from support import BLUEPRINTS, run_cli

WORKFLOW = "name: ci\non: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n"
K8S = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n"


def _repo(tmp_path: Path) -> Path:
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    (tmp_path / ".github" / "workflows" / "ci.yml").write_text(WORKFLOW, "utf-8")
    (tmp_path / ".pre-commit-config.yaml").write_text("repos: []\n", "utf-8")
    (tmp_path / "k8s").mkdir()
    (tmp_path / "k8s" / "web.yaml").write_text(K8S, "utf-8")
    (tmp_path / "blueprints").mkdir()
    for stem in ("aws-p5-efa-fsx", "gcp-a3-mega-tcpxo"):
        shutil.copy(BLUEPRINTS / f"{stem}.yaml", tmp_path / "blueprints")
    return tmp_path


def test_lint_of_a_repository_skips_and_counts_non_blueprint_yaml(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    result = run_cli(["lint", "."], cwd=repo)
    assert result.returncode == 0, result.stderr
    assert "skipped 3 non-blueprint YAML files" in result.stderr
    assert "No findings in 2 document(s)" in result.stdout


def test_a_named_workflow_is_an_error_without_force_exclude(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    result = run_cli(["lint", ".github/workflows/ci.yml"], cwd=repo)
    assert result.returncode == 2
    assert result.stderr.startswith(".github/workflows/ci.yml:1:1: error: missing required key")


def test_force_exclude_skips_named_non_blueprints(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    named = [".github/workflows/ci.yml", ".pre-commit-config.yaml", "k8s/web.yaml"]
    result = run_cli(
        ["lint", "--force-exclude", *named, "blueprints/aws-p5-efa-fsx.yaml"], cwd=repo
    )
    assert result.returncode == 0, result.stderr
    assert "skipped 3 non-blueprint YAML files" in result.stderr
    assert "No findings in 1 document(s)" in result.stdout


def test_force_exclude_with_only_non_blueprints_exits_0(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    result = run_cli(["lint", "--force-exclude", ".github/workflows/ci.yml"], cwd=repo)
    assert result.returncode == 0, result.stderr
    assert "skipped 1 non-blueprint YAML file\n" in result.stderr
    assert "nothing to check" in result.stderr


def test_validate_force_exclude_skips_non_blueprints(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    result = run_cli(
        ["validate", "--force-exclude", "k8s/web.yaml", "blueprints/gcp-a3-mega-tcpxo.yaml"],
        cwd=repo,
    )
    assert result.returncode == 0, result.stderr
    assert "skipped 1 non-blueprint YAML file" in result.stderr
    assert "ok: blueprints/gcp-a3-mega-tcpxo.yaml" in result.stdout


@pytest.mark.parametrize("key", ["exclude", "extend-exclude"])
def test_exclude_settings_leave_paths_out(tmp_path: Path, key: str) -> None:
    repo = _repo(tmp_path)
    (repo / "pyproject.toml").write_text(
        f'[project]\nname = "x"\n\n[tool.archform]\n{key} = ["blueprints/gcp-*"]\n', "utf-8"
    )
    result = run_cli(["lint", "."], cwd=repo)
    assert result.returncode == 0, result.stderr
    assert "No findings in 1 document(s)" in result.stdout
    forced = run_cli(
        ["lint", "--force-exclude", "blueprints/gcp-a3-mega-tcpxo.yaml", "k8s/web.yaml"],
        cwd=repo,
    )
    assert forced.returncode == 0, forced.stderr
    assert "No findings in 0 document(s)" in forced.stdout


def test_exclude_replaces_the_defaults_and_extend_exclude_keeps_them(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (repo / ".venv").mkdir()
    shutil.copy(BLUEPRINTS / "onprem-cpu-smoke.yaml", repo / ".venv" / "vendored.yaml")
    (repo / ".archform.toml").write_text('extend-exclude = ["k8s"]\n', "utf-8")
    kept = run_cli(["lint", "."], cwd=repo)
    assert "No findings in 2 document(s)" in kept.stdout, kept.stdout + kept.stderr
    (repo / ".archform.toml").write_text('exclude = ["k8s"]\n', "utf-8")
    replaced = run_cli(["lint", "."], cwd=repo)
    assert "No findings in 3 document(s)" in replaced.stdout, replaced.stdout + replaced.stderr


@pytest.mark.parametrize(
    ("name", "text", "where"),
    [
        ("pyproject.toml", '[project]\nname = "x"\n\n[tool.archform]\nexclude = "k8s"\n', "5:1"),
        (
            "pyproject.toml",
            '[tool.archform]\nselect = ["TRN"]\n  extend-exclude = [1, 2]\n',
            "3:3",
        ),
        ("pyproject.toml", "[tool]\narchform.exclude = 3\n", "2:1"),
        (".archform.toml", 'select = ["TRN"]\nexclude = ["ok", ""]\n', "2:1"),
        (".archform.toml", "force-exclude = 'yes'\n", "1:1"),
    ],
)
def test_wrong_exclude_types_are_reported_at_their_line(
    tmp_path: Path, name: str, text: str, where: str
) -> None:
    repo = _repo(tmp_path)
    (repo / name).write_text(text, "utf-8")
    result = run_cli(["lint", "blueprints"], cwd=repo)
    assert result.returncode == 2
    first = result.stderr.splitlines()[0]
    assert first.startswith(f"{repo.resolve() / name}:{where}: error: "), first
    assert "(hint: e.g. " in first
