"""Which files are blueprints: detection by content, exclude patterns, --force-exclude."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from archform.spec.discovery import (
    DEFAULT_EXCLUDE,
    Excluder,
    is_blueprint_file,
    is_blueprint_text,
    select_files,
    skipped_note,
)
from archform.spec.errors import UsageError
from archform.spec.loader import MODELS
from support import BLUEPRINTS, ROOT

WORKFLOW = "name: ci\non: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n"
K8S = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n"


@pytest.mark.parametrize("path", sorted(BLUEPRINTS.glob("*.yaml")), ids=lambda p: p.stem)
def test_every_bundled_blueprint_is_detected(path: Path) -> None:
    assert is_blueprint_file(path)


@pytest.mark.parametrize(
    "text",
    [
        WORKFLOW,
        "repos:\n  - repo: local\n    hooks: []\n",  # .pre-commit-config.yaml
        K8S,
        K8S + "---\napiVersion: v1\nkind: Service\nmetadata: {name: web}\n",
        # a Kubernetes object whose kind happens to be a blueprint kind is still Kubernetes
        "apiVersion: example.com/v1\nkind: Platform\nmetadata: {name: p}\n",
        "- hosts: all\n  tasks: []\n",  # an Ansible playbook
        "services:\n  web:\n    image: nginx\n    kind: TrainingCluster\n",  # nested, not top
        "version: '3'\nservices: {}\n",  # docker compose
    ],
    ids=[
        "workflow",
        "pre-commit",
        "k8s",
        "k8s-multi",
        "k8s-platform",
        "ansible",
        "nested",
        "compose",
    ],
)
def test_other_yaml_is_not_a_blueprint(text: str) -> None:
    assert not is_blueprint_text(text)


@pytest.mark.parametrize(
    "text",
    [
        "version: 1\nkind: TrainingCluster\nname: x\n",
        "version: 1\nkind: 'InferenceFleet'  # serving\n",
        'kind: "Platform"\n',
        "version: 1\nkind: TrainingCluser\n",  # a typo is linted, so the loader names it
        K8S + "---\nversion: 1\nkind: TrainingCluster\n",  # one blueprint document suffices
        "version: 1\nkind: TrainingCluster\ncompute: {nodes: [\n",  # broken YAML still counts
    ],
    ids=["plain", "quoted-comment", "double-quoted", "typo", "mixed", "broken-yaml"],
)
def test_blueprint_markers_are_found(text: str) -> None:
    assert is_blueprint_text(text)


def test_the_detected_kinds_are_the_loaders_kinds() -> None:
    for kind in MODELS:
        assert is_blueprint_text(f"kind: {kind}\n")


@pytest.mark.parametrize(
    ("pattern", "path", "hit"),
    [
        (".github", ".github/workflows/ci.yml", True),
        ("*.k8s.yaml", "deploy/web.k8s.yaml", True),
        ("*.k8s.yaml", "deploy/web.yaml", False),
        ("deploy/manifests", "deploy/manifests/a/b.yaml", True),
        ("deploy/manifests", "other/deploy/manifests/b.yaml", False),
        ("charts/*/templates", "charts/web/templates/d.yaml", True),
        ("charts/*/templates", "charts/web/x/templates/d.yaml", False),
        ("charts/**/templates", "charts/web/x/templates/d.yaml", True),
        ("blueprints/old-?.yaml", "blueprints/old-1.yaml", True),
        ("./generated/", "generated/out.yaml", True),
    ],
)
def test_exclude_patterns_follow_ruff(tmp_path: Path, pattern: str, path: str, hit: bool) -> None:
    assert Excluder((pattern,), tmp_path).excluded(tmp_path / path) is hit


def _repo(tmp_path: Path) -> Path:
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    (tmp_path / ".github" / "workflows" / "ci.yml").write_text(WORKFLOW, "utf-8")
    (tmp_path / ".pre-commit-config.yaml").write_text("repos: []\n", "utf-8")
    (tmp_path / "k8s").mkdir()
    (tmp_path / "k8s" / "web.yaml").write_text(K8S, "utf-8")
    (tmp_path / "blueprints").mkdir()
    for stem in ("aws-p5-efa-fsx", "gcp-a3-mega-tcpxo"):
        shutil.copy(BLUEPRINTS / f"{stem}.yaml", tmp_path / "blueprints")
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "x.yaml").write_text("kind: TrainingCluster\n", "utf-8")
    return tmp_path


def test_a_folder_yields_its_blueprints_and_counts_the_rest(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    got = select_files([repo], Excluder(DEFAULT_EXCLUDE, repo))
    assert sorted(p.name for p in got.files) == ["aws-p5-efa-fsx.yaml", "gcp-a3-mega-tcpxo.yaml"]
    assert sorted(p.name for p in got.non_blueprints) == [
        ".pre-commit-config.yaml",
        "ci.yml",
        "web.yaml",
    ]
    assert skipped_note(got) == "skipped 3 non-blueprint YAML files"


def test_named_files_are_read_as_given_without_force_exclude(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    ci = repo / ".github" / "workflows" / "ci.yml"
    got = select_files([ci], Excluder(DEFAULT_EXCLUDE, repo))
    assert got.files == [ci]


def test_force_exclude_filters_named_files(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    named = [
        repo / ".github" / "workflows" / "ci.yml",
        repo / ".pre-commit-config.yaml",
        repo / "k8s" / "web.yaml",
        repo / "blueprints" / "aws-p5-efa-fsx.yaml",
        repo / "blueprints" / "gcp-a3-mega-tcpxo.yaml",
    ]
    excluder = Excluder((*DEFAULT_EXCLUDE, "blueprints/gcp-*"), repo)
    got = select_files(named, excluder, force_exclude=True)
    assert got.files == [repo / "blueprints" / "aws-p5-efa-fsx.yaml"]
    assert got.excluded == [repo / "blueprints" / "gcp-a3-mega-tcpxo.yaml"]
    assert len(got.non_blueprints) == 3


def test_single_skip_is_singular(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    got = select_files([repo / "k8s" / "web.yaml"], Excluder((), repo), force_exclude=True)
    assert got.files == []
    assert skipped_note(got) == "skipped 1 non-blueprint YAML file"


def test_a_folder_without_any_blueprint_is_an_error(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    with pytest.raises(UsageError) as caught:
        select_files([repo / "k8s"], Excluder(DEFAULT_EXCLUDE, repo))
    assert "no blueprint in this folder (skipped 1 YAML file without a blueprint" in str(
        caught.value
    )


def test_excluded_folders_are_not_entered(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    got = select_files([repo], Excluder(DEFAULT_EXCLUDE, repo))
    assert not any(".venv" in p.parts for p in got.files + got.non_blueprints)


def test_repository_itself_lints_only_its_blueprints() -> None:
    """This checkout holds other YAML (.pre-commit-hooks.yaml, mkdocs.yml) beside blueprints."""
    got = select_files(
        [ROOT / ".pre-commit-hooks.yaml", ROOT / "mkdocs.yml", BLUEPRINTS / "aws-p5-efa-fsx.yaml"],
        Excluder(DEFAULT_EXCLUDE, ROOT),
        force_exclude=True,
    )
    assert got.files == [BLUEPRINTS / "aws-p5-efa-fsx.yaml"]


def test_a_named_folder_is_read_even_if_a_pattern_matches_it(tmp_path: Path) -> None:
    """As ruff lints a path it is given: only what lies below the named folder is filtered."""
    repo = _repo(tmp_path)
    excluder = Excluder((*DEFAULT_EXCLUDE, "blueprints"), repo)
    got = select_files([repo / "blueprints"], excluder)
    assert len(got.files) == 2
    with pytest.raises(UsageError, match="no blueprint in this folder"):
        select_files([repo], excluder)  # below the named folder, the pattern prunes


def test_a_file_named_twice_or_inside_a_named_folder_is_read_once(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    one = repo / "blueprints" / "aws-p5-efa-fsx.yaml"
    got = select_files([one, repo / "blueprints", one], Excluder(DEFAULT_EXCLUDE, repo))
    assert len(got.files) == 2
