"""The package check: every package the generated playbooks install has a source on the image.

Runs on archform's own generated trees for every bundled and test blueprint (all must pass),
then on copies with seeded faults (a package nothing provides, a repository task removed, a
repository the image table does not know): each must fail and name what is wrong.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import support
from archform.render.generate import build_files
from archform.render.writer import write_tree
from archform.spec import load_paths
from archform.spec.models.training import TrainingCluster
from archform.verify import builtin_checks
from archform.verify.checks import packages

FIXTURES = Path(__file__).parents[1] / "render" / "ansible" / "fixtures"
BLUEPRINTS = [
    p
    for p in [*support.bundled_blueprints(), *sorted(FIXTURES.glob("*.yaml"))]
    if any(isinstance(d.model, TrainingCluster) for d in load_paths([p]).documents)
]


def _generate(path: Path, out: Path) -> Path:
    loaded = load_paths([path])
    docs = [d for d in loaded.documents if isinstance(d.model, TrainingCluster)]
    write_tree(out, build_files(loaded, docs))
    return out


def test_the_check_is_registered_like_the_others() -> None:
    assert packages.CHECK in builtin_checks()


@pytest.mark.parametrize("path", BLUEPRINTS, ids=[p.stem for p in BLUEPRINTS])
def test_every_generated_tree_resolves_every_package(path: Path, tmp_path: Path) -> None:
    root = _generate(path, tmp_path / "out")
    results = packages.CHECK.run(root)
    assert results
    for result in results:
        assert result.status == "passed", result.detail
        assert re.match(r"\d+ packages on ", result.detail)


def _tree(stem: str, tmp_path: Path) -> Path:
    return _generate(support.BLUEPRINTS / f"{stem}.yaml", tmp_path / "out")


def _only(root: Path) -> str:
    [result] = packages.CHECK.run(root)
    assert result.status == "failed", result.detail
    return result.detail


def test_a_package_with_no_source_fails(tmp_path: Path) -> None:
    root = _tree("onprem-h100-ib-lustre", tmp_path)
    tasks = root / "ansible" / "roles" / "nfs_client" / "tasks" / "main.yml"
    text = tasks.read_text().replace("name: nfs-common", "name: [nfs-common, nfs-fancy-client]")
    tasks.write_text(text)
    detail = _only(root)
    assert "'nfs-fancy-client' has no source on image ubuntu-22.04" in detail
    assert "roles/nfs_client/tasks/main.yml" in detail


def test_a_missing_repository_fails(tmp_path: Path) -> None:
    root = _tree("aws-p5-efa-fsx", tmp_path)
    tasks = root / "ansible" / "roles" / "lustre_client" / "tasks" / "main.yml"
    text = tasks.read_text()
    start = text.index("    - name: Add the Lustre client repository")
    end = text.index("    - name: Install the Lustre client packages")
    tasks.write_text(text[:start] + text[end:])
    detail = _only(root)
    assert "'lustre-client-modules-aws' has no source" in detail
    assert "'lustre-client-modules-{kernel}' has no source" in detail


def test_a_repository_the_table_does_not_know_fails(tmp_path: Path) -> None:
    root = _tree("onprem-h100-ib-lustre", tmp_path)
    gv = root / "ansible" / "group_vars" / "all.yml"
    text = gv.read_text()
    assert 'doca_version: "' in text
    tasks = root / "ansible" / "roles" / "fabric" / "vars" / "main.yml"
    tasks.write_text('---\nfabric_doca_repo: "https://mirror.example.invalid/doca"\n')
    detail = _only(root)
    assert "repository https://mirror.example.invalid/doca/ubuntu22.04/x86_64/" in detail
    assert "'doca-ofed' has no source" in detail


def test_a_skipped_block_installs_nothing(tmp_path: Path) -> None:
    """On the Azure HPC image DOCA-OFED comes with the image: no repository, no package."""
    root = _tree("azure-nd-h100-v5", tmp_path)
    [result] = packages.CHECK.run(root)
    assert result.status == "passed"
    assert "repositories: none" in result.detail
    # The same tree on an image without the stack: the CUDA repository task now runs and
    # the driver, DCGM and NCCL resolve from it.
    gv = root / "ansible" / "group_vars" / "all.yml"
    text = gv.read_text()
    for key in ("image_driver", "image_dcgm", "image_cuda"):
        text = re.sub(rf'(?m)^{key}: ".*"$', f'{key}: ""', text)
    gv.write_text(text)
    [result] = packages.CHECK.run(root)
    assert result.status == "passed" and "repositories: cuda" in result.detail, result.detail
