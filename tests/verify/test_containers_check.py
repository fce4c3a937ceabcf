"""The containers check: enroot containers see the fabric's devices and the node's libraries.

Runs on archform's own generated trees for every bundled training blueprint (all must pass),
then on copies with one fault each (a device line dropped, enroot's HCA hook switched off, the
plugin folder missing from the hook, the hook binding the node's EFA stack over an image's own):
each must fail and say what a container would miss. The hooks are run with bash against an
empty stand-in image (the check's own doing, see its docstring).
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
from archform.verify.checks import containers

PYXIS = [
    p
    for p in support.bundled_blueprints()
    if any(
        isinstance(d.model, TrainingCluster) and d.model.scheduler.containers == "pyxis"
        for d in load_paths([p]).documents
    )
]
FILES = "ansible/roles/pyxis_enroot/files/"


def _tree(stem: str, tmp_path: Path) -> Path:
    out = tmp_path / "out"
    write_tree(out, build_files(load_paths([support.BLUEPRINTS / f"{stem}.yaml"])))
    return out


def _edit(root: Path, name: str, old: str, new: str) -> None:
    path = root / FILES / name
    text = path.read_text()
    assert text.count(old) == 1, (name, old)
    path.write_text(text.replace(old, new))


def _failed(root: Path) -> str:
    [result] = containers.CHECK.run(root)
    assert result.status == "failed", result.detail
    return result.detail


def test_the_check_is_registered_like_the_others() -> None:
    assert containers.CHECK in builtin_checks()


def test_every_bundled_pyxis_tree_is_checked() -> None:
    assert {p.stem for p in PYXIS} >= {
        "aws-p5-efa-fsx",
        "gcp-a3-mega-tcpxo",
        "azure-nd-h100-v5",
        "onprem-h100-ib-lustre",
        "platform-two-tier",
    }


@pytest.mark.parametrize("path", PYXIS, ids=[p.stem for p in PYXIS])
def test_every_generated_tree_passes(path: Path, tmp_path: Path) -> None:
    root = _tree(path.stem, tmp_path)
    results = containers.CHECK.run(root)
    assert results
    for result in results:
        assert result.status == "passed", result.detail
        assert re.match(r"\w+: \d+ device/hook/library needs met", result.detail)


def test_a_tree_without_enroot_is_not_checked(tmp_path: Path) -> None:
    root = _tree("onprem-cpu-smoke", tmp_path)
    assert not containers.CHECK.applies(root)
    assert containers.CHECK.run(root) == []


def test_a_dropped_device_line_fails(tmp_path: Path) -> None:
    root = _tree("gcp-a3-mega-tcpxo", tmp_path)
    _edit(root, "fabric.fstab", "/dev/aperture_devices /dev/aperture_devices none", "# gone")
    assert "hides /dev/aperture_devices from containers" in _failed(root)


def test_an_unrestricted_dev_needs_no_device_line(tmp_path: Path) -> None:
    """ENROOT_RESTRICT_DEV off (ParallelCluster's choice): the host's /dev is visible."""
    root = _tree("aws-p5-efa-fsx", tmp_path)
    _edit(root, "fabric.fstab", "/dev/infiniband /dev/infiniband none", "# gone")
    _edit(root, "enroot.conf", "ENROOT_RESTRICT_DEV y", "ENROOT_RESTRICT_DEV no")
    [result] = containers.CHECK.run(root)
    assert result.status == "passed", result.detail


def test_the_mellanox_hook_switched_off_fails(tmp_path: Path) -> None:
    root = _tree("onprem-h100-ib-lustre", tmp_path)
    _edit(root, "fabric.env", "\nMELLANOX_VISIBLE_DEVICES=all\n", "\n")
    assert "MELLANOX_VISIBLE_DEVICES=(unset)" in _failed(root)


def test_a_hook_that_skips_the_library_path_fails(tmp_path: Path) -> None:
    root = _tree("aws-p5-efa-fsx", tmp_path)
    _edit(root, "fabric-hook.sh", 'if [ -n "${path}" ]; then', "if false; then")
    assert "LD_LIBRARY_PATH lacks /opt/amazon/ofi-nccl/lib/x86_64-linux-gnu" in _failed(root)


def test_a_failing_hook_fails(tmp_path: Path) -> None:
    root = _tree("aws-p5-efa-fsx", tmp_path)
    _edit(root, "fabric-hook.sh", "set -euo pipefail\n", "set -euo pipefail\nexit 3\n")
    assert "fabric-hook.sh exited 3" in _failed(root)


def test_a_removed_copy_task_fails(tmp_path: Path) -> None:
    root = _tree("gcp-a3-mega-tcpxo", tmp_path)
    tasks = root / "ansible/roles/pyxis_enroot/tasks/enroot.yml"
    text = tasks.read_text()
    start = text.index("- name: Bind the node's fabric libraries into images that lack them")
    end = text.index("- name: Install the NVIDIA Container Toolkit enroot's GPU hook needs")
    tasks.write_text(text[:start] + text[end:])
    assert "binds the node's /var/lib/tcpxo/lib64" in _failed(root)
